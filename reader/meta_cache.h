// Blocks of an image's metadata (inodes, directory blocks, lcluster indexes, chunk tables, xattrs,
// inline tails), kept within a byte budget and shared by every path of the reader and every
// thread. Without it, each index entry, inode or directory block costs a pread whenever it is
// needed: checking all data of the linux-6.1 tree read the same 8-byte index entries again and
// again (2.6 million preads for a 482 MB image). With it, each block is read once while it stays
// in the budget. Least recently used blocks go first; the cache is split into shards, each with
// its own lock, so that threads reading different blocks rarely wait for each other.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace erofs::reader {

class MetaCache {
 public:
  using Block = std::shared_ptr<const std::vector<uint8_t>>;
  // Fills a block's bytes (all of the span: the block, or the rest of the stream at its end).
  using Loader = std::function<void(std::span<uint8_t>)>;

  // budget_bytes 0: nothing is kept (every get loads).
  explicit MetaCache(uint64_t budget_bytes);

  // Block `index` of metadata stream `stream` (the device, or the metabox), `size` bytes long
  // (the block size, or less at the end of the stream): cached, or loaded now. Two threads that
  // miss the same block at once may both load it; the bytes are the same.
  Block get(uint8_t stream, uint64_t index, size_t size, const Loader& load);

  // Blocks loaded so far (for tests: each block of a walk is read once).
  uint64_t loads() const { return loads_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kShards = 16;
  using Key = std::pair<uint8_t, uint64_t>;
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>{}(k.second * 0x9E3779B97F4A7C15ull ^ k.first); }
  };
  struct Shard {
    std::mutex mutex;
    std::list<std::pair<Key, Block>> lru;  // most recently used first
    std::unordered_map<Key, std::list<std::pair<Key, Block>>::iterator, KeyHash> index;
    uint64_t used = 0;
  };

  uint64_t shard_budget_;
  std::atomic<uint64_t> loads_{0};
  std::vector<Shard> shards_;
};

}  // namespace erofs::reader
