// Checks a stored dm-verity hash tree against its data and, when one is given, the root hash, the
// way the kernel trusts it: from the top down, each hash block must hash to its entry in the
// (already trusted) block above, and each data block to its entry in a trusted level-0 block.
// Every data block that does not match is reported, and every hash block that does not, with
// the data blocks below it, which cannot be checked then.
//
// Without a root hash nothing outside the tree vouches for its top block. It is taken as stored
// unless the data refutes it: a block below whose bytes are what the data yields but whose
// hash is not the top block's entry for it. So a damaged top block is still named; in a tree of
// a single level, though, a wrong entry cannot be told from a wrong data block.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "verity/tree_builder.h"

namespace erofs::verity {

struct BadHashBlock {
  size_t level = 0;          // 0: the level of data block hashes
  uint64_t index = 0;        // within its level
  uint64_t tree_block = 0;   // where it is stored, in hash blocks from the start of the tree
  uint64_t first_data_block = 0;
  uint64_t data_blocks = 0;  // the data blocks below it
};

struct Report {
  std::vector<uint64_t> bad_data_blocks;      // ascending
  std::vector<BadHashBlock> bad_hash_blocks;  // top level first, ascending within a level
  // The tree and the data agree, but the tree's root hash is not the one given.
  bool root_mismatch = false;

  bool clean() const { return bad_data_blocks.empty() && bad_hash_blocks.empty() && !root_mismatch; }
};

// `expected`: the tree the data yields (built with TreeBuilder or build_tree from the data as
// stored); `stored`: the tree as stored, expected.layout.tree_bytes bytes (else Error);
// `root_hash`: the trusted root hash, or empty. A root hash of the wrong size is a ParamError.
Report check(const Tree& expected, std::span<const uint8_t> stored, std::span<const uint8_t> root_hash);

}  // namespace erofs::verity
