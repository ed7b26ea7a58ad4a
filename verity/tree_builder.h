// Builds a dm-verity hash tree (format version 1) from data blocks its caller feeds in order:
// no I/O of its own. The whole tree is kept in memory (a 128th of the data with SHA-256 and
// 4096-byte blocks) because dm-verity stores the top level first, so nothing of it can be
// written before the last data block is hashed.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "verity/block_hasher.h"
#include "verity/layout.h"
#include "verity/params.h"

namespace erofs::verity {

struct Tree {
  Params params;
  Layout layout;
  std::vector<uint8_t> bytes;      // the hash area as stored: layout.tree_bytes, unused bytes zero
  std::vector<uint8_t> root_hash;  // digest_size bytes
};

// Reads `out.size()` bytes at `offset` of the data, or throws.
using ReadFn = std::function<void(uint64_t offset, std::span<uint8_t> out)>;

class TreeBuilder {
 public:
  // `threads`: how many threads hash large spans (see hash_blocks_parallel); the tree is the
  // same for any number. Throws ParamError for parameters dm-verity refuses.
  TreeBuilder(const Params& params, uint64_t data_blocks, unsigned threads = 1);

  // The next bytes of the data, in order, in spans of any length: large ones are hashed on the
  // threads. Throws Error past layout().data_blocks blocks.
  void add(std::span<const uint8_t> data);
  // All the data at once, through `read`: each of the builder's threads reads a contiguous share
  // of the blocks in pieces of a few MiB into a buffer of its own and hashes them, so that the
  // copying is shared out as well as the hashing and the threads meet only at the end. `read` is
  // called from several threads at once, for disjoint ranges. Only on a builder fed nothing yet
  // (else Error).
  void read_all(const ReadFn& read);
  // After exactly data_blocks blocks: the upper levels and the root. Throws Error when fewer
  // bytes came. The builder is spent afterwards.
  Tree finish();

  const Layout& layout() const { return layout_; }

 private:
  void hash_data(std::span<const uint8_t> whole_blocks);

  Params params_;
  Layout layout_;
  unsigned threads_;
  BlockHasher hasher_;
  std::vector<uint8_t> tree_;
  std::vector<uint8_t> root_;
  std::span<uint8_t> data_hashes_;  // level 0, or the root for a tree without levels
  std::vector<uint8_t> partial_;    // the start of a data block split between two add() calls
  uint64_t blocks_done_ = 0;
};

// The tree of data that `read` gives (TreeBuilder::read_all): `read` is called from several
// threads at once, for disjoint ranges.
Tree build_tree(const Params& params, uint64_t data_blocks, const ReadFn& read, unsigned threads = 1);

}  // namespace erofs::verity
