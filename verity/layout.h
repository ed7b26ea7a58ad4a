// Where each level of a dm-verity hash tree lies, computed as the kernel's dm-verity and
// veritysetup compute it: level 0 holds one hash per data block, each level above one hash per
// block of the level below, up to a level of one block whose hash is the root hash. The levels
// are stored top first (the top block is the tree's first block, level 0 its last blocks). A
// device of one data block has no levels: its root hash is that block's hash.
#pragma once

#include <cstdint>
#include <vector>

#include "verity/params.h"

namespace erofs::verity {

struct Level {
  uint64_t first_block = 0;  // in hash blocks, from the start of the tree
  uint64_t blocks = 0;
};

struct Layout {
  uint64_t data_blocks = 0;
  uint32_t data_block_size = 0;
  uint32_t hash_block_size = 0;
  uint32_t digest_size = 0;
  uint32_t hashes_per_block = 0;  // hash_block_size / digest_size: both are powers of two
  std::vector<Level> levels;       // levels[0]: the data blocks' hashes; back(): the top, one block
  uint64_t hash_blocks = 0;        // all levels together
  uint64_t tree_bytes = 0;         // hash_blocks * hash_block_size
};

// Throws ParamError for invalid parameters, for 0 data blocks (veritysetup refuses them and the
// kernel maps no empty device) and for a tree or data size beyond 64-bit byte offsets.
Layout compute_layout(const Params& params, uint64_t data_blocks);

// With veritysetup's superblock at `superblock_offset` (its --hash-offset, a multiple of 512), the
// tree starts at the first hash block boundary after the superblock's 512 bytes: the superblock
// takes a whole hash block of its own. Throws ParamError for a misaligned or too large offset.
uint64_t tree_offset(uint64_t superblock_offset, uint32_t hash_block_size);

}  // namespace erofs::verity
