#include "reader/pcluster_cache.h"

#include <algorithm>
#include <functional>

namespace erofs::reader {

size_t PclusterCache::KeyHash::operator()(const PclusterKey& k) const {
  size_t h = std::hash<uint64_t>{}(k.pa);
  for (uint64_t v : {uint64_t(k.source), uint64_t(k.plen), k.llen, uint64_t(uint8_t(k.algorithm)), uint64_t(k.partial)})
    h = h * 1000003u ^ std::hash<uint64_t>{}(v);
  return h;
}

bool PclusterCache::has(const PclusterKey& key) {
  std::lock_guard lock(mutex_);
  return index_.count(key) || loading_.count(key);
}

PclusterCache::Bytes PclusterCache::get_or_load(const PclusterKey& key, const std::function<Bytes()>& load) {
  std::shared_future<Bytes> pending;
  std::promise<Bytes> mine;
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
    if (auto it = loading_.find(key); it != loading_.end()) {
      pending = it->second;
      ++shared_loads_;
    } else {
      loading_.emplace(key, mine.get_future().share());
    }
  }
  if (pending.valid()) {
    if (Bytes shared = pending.get()) return shared;
    // The other thread's load failed. Its exception stays on its thread and this one meets its
    // own: one exception object thrown in two threads shares its message buffer, freed under a
    // reference count that the sanitizers cannot see (and a damaged pcluster is worth no more).
    return load();
  }
  try {
    Bytes data = load();
    insert(key, data);
    {
      std::lock_guard lock(mutex_);
      loading_.erase(key);
    }
    mine.set_value(data);
    return data;
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      loading_.erase(key);
    }
    mine.set_value(nullptr);
    throw;
  }
}

uint64_t PclusterCache::shared_loads() {
  std::lock_guard lock(mutex_);
  return shared_loads_;
}

void PclusterCache::insert(const PclusterKey& key, Bytes data) {
  // Counted by the memory they hold: pooled buffers may be larger than their bytes.
  const uint64_t size = data->capacity();
  if (size > budget_) return;
  std::lock_guard lock(mutex_);
  if (index_.count(key)) return;  // another thread decoded it meanwhile
  while (used_ + size > budget_ && !lru_.empty()) {
    used_ -= lru_.back().second->capacity();
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  lru_.emplace_front(key, std::move(data));
  index_.emplace(key, lru_.begin());
  used_ += size;
}

void PclusterCache::forget(const PclusterKey& key) {
  // About as many as requests can be in flight at once (the kernel's readahead sends a dozen).
  constexpr size_t kForgottenKept = 64;
  std::lock_guard lock(mutex_);
  const auto it = index_.find(key);
  if (it == index_.end()) return;
  used_ -= it->second->second->capacity();
  lru_.erase(it->second);
  index_.erase(it);
  if (forgotten_.size() == kForgottenKept) forgotten_.pop_front();
  forgotten_.push_back(key);
}

bool PclusterCache::finished(const PclusterKey& key) {
  std::lock_guard lock(mutex_);
  return !index_.count(key) && std::find(forgotten_.begin(), forgotten_.end(), key) != forgotten_.end();
}

}  // namespace erofs::reader
