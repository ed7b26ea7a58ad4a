#include "verity/check.h"

#include <algorithm>

#include <fmt/format.h>

#include "verity/block_hasher.h"

namespace erofs::verity {
namespace {

bool equal(std::span<const uint8_t> a, std::span<const uint8_t> b) { return std::ranges::equal(a, b); }

// The stored and expected trees side by side, addressed by level and index.
class Trees {
 public:
  Trees(const Tree& expected, std::span<const uint8_t> stored) : l_(expected.layout), expected_(expected.bytes), stored_(stored) {}

  std::span<const uint8_t> stored(size_t level, uint64_t index) const { return block(stored_, level, index); }
  std::span<const uint8_t> expected(size_t level, uint64_t index) const { return block(expected_, level, index); }
  std::span<const uint8_t> entry(std::span<const uint8_t> block, uint64_t i) const {
    return block.subspan(i * l_.digest_size, l_.digest_size);
  }
  // How many blocks the entries of a level stand for: data blocks for level 0.
  uint64_t below(size_t level) const { return level == 0 ? l_.data_blocks : l_.levels[level - 1].blocks; }
  // The entries of block `index` of `level`: [first, end) of the level below.
  uint64_t first_child(uint64_t index) const { return index * l_.hashes_per_block; }
  uint64_t end_child(size_t level, uint64_t index) const {
    return std::min(below(level), first_child(index) + l_.hashes_per_block);
  }

  BadHashBlock bad(size_t level, uint64_t index) const {
    uint64_t span = l_.hashes_per_block;  // data blocks below one block of `level`, saturating
    for (size_t i = 0; i < level && span != UINT64_MAX; ++i)
      if (__builtin_mul_overflow(span, l_.hashes_per_block, &span)) span = UINT64_MAX;
    const uint64_t first = index <= UINT64_MAX / span ? index * span : UINT64_MAX;
    const uint64_t first_data = std::min(first, l_.data_blocks);
    return {level, index, l_.levels[level].first_block + index, first_data, std::min(span, l_.data_blocks - first_data)};
  }

 private:
  std::span<const uint8_t> block(std::span<const uint8_t> tree, size_t level, uint64_t index) const {
    return tree.subspan((l_.levels[level].first_block + index) * l_.hash_block_size, l_.hash_block_size);
  }

  const Layout& l_;
  std::span<const uint8_t> expected_, stored_;
};

}  // namespace

Report check(const Tree& expected, std::span<const uint8_t> stored, std::span<const uint8_t> root_hash) {
  const Layout& l = expected.layout;
  if (!root_hash.empty() && root_hash.size() != l.digest_size)
    throw ParamError(fmt::format("root hash of {} bytes: {} has {}", root_hash.size(),
                                 algorithm_name(expected.params.algorithm), l.digest_size));
  if (stored.size() != l.tree_bytes)
    throw Error(fmt::format("verity: the stored tree has {} bytes, its layout {}", stored.size(), l.tree_bytes));
  Report r;
  if (l.levels.empty()) {  // one data block: its hash is the root
    if (!root_hash.empty() && !equal(root_hash, expected.root_hash)) r.bad_data_blocks.push_back(0);
    return r;
  }
  const Trees t(expected, stored);
  BlockHasher hasher(expected.params.algorithm, expected.params.salt);
  std::vector<uint8_t> digest(l.digest_size);
  auto hash = [&](std::span<const uint8_t> block) -> std::span<const uint8_t> {
    hasher.hash(block, digest.data());
    return digest;
  };

  const size_t top = l.levels.size() - 1;
  const auto stored_top = t.stored(top, 0);
  if (!root_hash.empty()) {
    if (!equal(hash(stored_top), root_hash)) {
      if (equal(stored_top, t.expected(top, 0)))
        r.root_mismatch = true;
      else
        r.bad_hash_blocks.push_back(t.bad(top, 0));
      return r;
    }
  } else {
    // Refuted by the data: unused bytes not zero, or a block below as the data makes it that
    // does not hash to its entry.
    bool refuted = !std::ranges::all_of(stored_top.subspan(t.end_child(top, 0) * l.digest_size),
                                        [](uint8_t b) { return b == 0; });
    for (uint64_t c = 0; top > 0 && c < t.end_child(top, 0) && !refuted; ++c)
      refuted = equal(t.stored(top - 1, c), t.expected(top - 1, c)) &&
                !equal(hash(t.stored(top - 1, c)), t.entry(stored_top, c));
    if (refuted) {
      r.bad_hash_blocks.push_back(t.bad(top, 0));
      return r;
    }
  }

  // Top down: the blocks of each level that hash to their entry in a trusted block above.
  std::vector<bool> trusted{true};
  for (size_t level = top; level > 0; --level) {
    std::vector<bool> next(t.below(level), false);
    for (uint64_t b = 0; b < trusted.size(); ++b) {
      if (!trusted[b]) continue;
      const auto parent = t.stored(level, b);
      for (uint64_t c = t.first_child(b); c < t.end_child(level, b); ++c) {
        next[c] = equal(hash(t.stored(level - 1, c)), t.entry(parent, c - t.first_child(b)));
        if (!next[c]) r.bad_hash_blocks.push_back(t.bad(level - 1, c));
      }
    }
    trusted = std::move(next);
  }
  // The data blocks' hashes, as computed from the data, against their trusted entries.
  for (uint64_t b = 0; b < trusted.size(); ++b) {
    if (!trusted[b]) continue;
    const auto have = t.stored(0, b), want = t.expected(0, b);
    for (uint64_t i = t.first_child(b); i < t.end_child(0, b); ++i)
      if (!equal(t.entry(have, i - t.first_child(b)), t.entry(want, i - t.first_child(b)))) r.bad_data_blocks.push_back(i);
  }
  return r;
}

}  // namespace erofs::verity
