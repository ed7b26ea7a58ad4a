#include "verity/tree_builder.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace erofs::verity {
namespace {

// What each thread of read_all reads at a time: large enough that a call costs little against its
// copying and hashing, small enough to stay in the CPU's caches between the two.
constexpr size_t kReadBytesPerThread = 4u << 20;

std::span<uint8_t> level_bytes(std::vector<uint8_t>& tree, const Layout& layout, size_t level) {
  const Level& l = layout.levels[level];
  return std::span(tree).subspan(l.first_block * layout.hash_block_size, l.blocks * layout.hash_block_size);
}

}  // namespace

TreeBuilder::TreeBuilder(const Params& params, uint64_t data_blocks, unsigned threads)
    : params_(params),
      layout_(compute_layout(params, data_blocks)),
      threads_(threads),
      hasher_(params.algorithm, params.salt),
      tree_(layout_.tree_bytes),
      root_(layout_.digest_size) {
  data_hashes_ = layout_.levels.empty() ? std::span(root_) : level_bytes(tree_, layout_, 0);
}

void TreeBuilder::add(std::span<const uint8_t> data) {
  const size_t block = layout_.data_block_size;
  if (!partial_.empty()) {
    const size_t take = std::min(block - partial_.size(), data.size());
    partial_.insert(partial_.end(), data.begin(), data.begin() + take);
    data = data.subspan(take);
    if (partial_.size() < block) return;
    hash_data(partial_);
    partial_.clear();
  }
  const size_t whole = data.size() / block * block;
  hash_data(data.first(whole));
  partial_.assign(data.begin() + whole, data.end());
}

void TreeBuilder::hash_data(std::span<const uint8_t> whole_blocks) {
  const uint64_t n = whole_blocks.size() / layout_.data_block_size;
  if (n > layout_.data_blocks - blocks_done_)
    throw Error(fmt::format("verity: more data than the {} blocks declared", layout_.data_blocks));
  hash_blocks_parallel(hasher_, whole_blocks, layout_.data_block_size,
                       data_hashes_.data() + blocks_done_ * layout_.digest_size, threads_);
  blocks_done_ += n;
}

Tree TreeBuilder::finish() {
  if (blocks_done_ != layout_.data_blocks || !partial_.empty())
    throw Error(fmt::format("verity: {} blocks and {} bytes of data came, {} blocks were declared", blocks_done_,
                            partial_.size(), layout_.data_blocks));
  for (size_t level = 1; level < layout_.levels.size(); ++level)
    hash_blocks_parallel(hasher_, level_bytes(tree_, layout_, level - 1), layout_.hash_block_size,
                         level_bytes(tree_, layout_, level).data(), threads_);
  if (!layout_.levels.empty()) hasher_.hash(level_bytes(tree_, layout_, layout_.levels.size() - 1), root_.data());
  return Tree{std::move(params_), std::move(layout_), std::move(tree_), std::move(root_)};
}

void TreeBuilder::read_all(const ReadFn& read) {
  if (blocks_done_ != 0 || !partial_.empty()) throw Error("verity: read_all on a builder already fed");
  const uint64_t blocks = layout_.data_blocks, block = layout_.data_block_size;
  const uint64_t piece = kReadBytesPerThread / block;  // blocks; block sizes are at most 4096
  const size_t parts = useful_threads(blocks * block, threads_);  // compute_layout checked the product
  for_each_share(hasher_, parts, [&](BlockHasher& h, size_t i) {
    const uint64_t first = share_begin(blocks, parts, i), end = share_begin(blocks, parts, i + 1);
    std::vector<uint8_t> buffer(std::min(piece, end - first) * block);
    for (uint64_t b = first; b < end; b += piece) {
      const auto in = std::span(buffer).first(std::min(piece, end - b) * block);
      read(b * block, in);
      h.hash_blocks(in, block, data_hashes_.data() + b * layout_.digest_size);
    }
  });
  blocks_done_ = blocks;
}

Tree build_tree(const Params& params, uint64_t data_blocks, const ReadFn& read, unsigned threads) {
  TreeBuilder builder(params, data_blocks, threads);
  builder.read_all(read);
  return builder.finish();
}

}  // namespace erofs::verity
