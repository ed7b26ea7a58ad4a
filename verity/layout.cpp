#include "verity/layout.h"

#include <fmt/format.h>

#include "format/verity_superblock.h"

namespace erofs::verity {
namespace {

uint64_t checked_mul(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw ParamError(fmt::format("verity {} exceeds 2^64 bytes", what));
  return r;
}

uint64_t checked_add(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw ParamError(fmt::format("verity {} exceeds 2^64 bytes", what));
  return r;
}

}  // namespace

Layout compute_layout(const Params& params, uint64_t data_blocks) {
  validate(params);
  if (data_blocks == 0) throw ParamError("a verity tree needs at least one data block (veritysetup refuses 0)");
  checked_mul(data_blocks, params.data_block_size, "data size");
  Layout l;
  l.data_blocks = data_blocks;
  l.data_block_size = params.data_block_size;
  l.hash_block_size = params.hash_block_size;
  l.digest_size = uint32_t(digest_size(params.algorithm));
  l.hashes_per_block = l.hash_block_size / l.digest_size;
  // Bottom up: each level has one hash per block (or data block) of the level below.
  for (uint64_t below = data_blocks; below > 1;) {
    below = below / l.hashes_per_block + (below % l.hashes_per_block != 0);
    l.levels.push_back({0, below});
  }
  // Top down on disk: the top level first.
  for (auto level = l.levels.rbegin(); level != l.levels.rend(); ++level) {
    level->first_block = l.hash_blocks;
    l.hash_blocks += level->blocks;  // at most data_blocks in all: cannot overflow
  }
  l.tree_bytes = checked_mul(l.hash_blocks, l.hash_block_size, "hash tree size");
  return l;
}

uint64_t tree_offset(uint64_t superblock_offset, uint32_t hash_block_size) {
  if (superblock_offset % 512 != 0)
    throw ParamError(fmt::format("verity hash offset {} is not a multiple of 512", superblock_offset));
  const uint64_t end = checked_add(superblock_offset, format::VeritySuperblock::kSize + hash_block_size - 1, "hash offset");
  return end / hash_block_size * hash_block_size;
}

}  // namespace erofs::verity
