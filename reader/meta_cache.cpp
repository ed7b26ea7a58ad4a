#include "reader/meta_cache.h"

namespace erofs::reader {

MetaCache::MetaCache(uint64_t budget_bytes) : shard_budget_(budget_bytes / kShards), shards_(kShards) {}

MetaCache::Block MetaCache::get(uint8_t stream, uint64_t index, size_t size, const Loader& load) {
  const Key key{stream, index};
  // Neighbouring blocks go to different shards: a walk over consecutive blocks spreads its locks.
  Shard& shard = shards_[(index ^ (uint64_t(stream) << 3)) % kShards];
  {
    std::lock_guard l(shard.mutex);
    if (auto it = shard.index.find(key); it != shard.index.end()) {
      shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
      return it->second->second;
    }
  }
  auto bytes = std::make_shared<std::vector<uint8_t>>(size);
  load(*bytes);
  loads_.fetch_add(1, std::memory_order_relaxed);
  Block block = std::move(bytes);
  if (size > shard_budget_) return block;
  std::lock_guard l(shard.mutex);
  if (auto it = shard.index.find(key); it != shard.index.end()) return it->second->second;  // loaded meanwhile
  while (shard.used + size > shard_budget_ && !shard.lru.empty()) {
    shard.used -= shard.lru.back().second->size();
    shard.index.erase(shard.lru.back().first);
    shard.lru.pop_back();
  }
  shard.lru.emplace_front(key, block);
  shard.index.emplace(key, shard.lru.begin());
  shard.used += size;
  return block;
}

}  // namespace erofs::reader
