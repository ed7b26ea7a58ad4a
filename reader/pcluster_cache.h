// Decoded extents kept for reuse, least recently used first out, within a byte budget. Reading a
// file sequentially then decodes each pcluster once, and fragments packed together in the packed
// inode are decoded once for all the files that share them. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "compress/uninit_bytes.h"

namespace erofs::reader {

struct PclusterKey {
  uint8_t source = 0;  // device or a metadata stream (inline pclusters)
  uint64_t pa = 0;
  uint32_t plen = 0;
  uint64_t llen = 0;
  int8_t algorithm = 0;
  bool partial = false;

  bool operator==(const PclusterKey&) const = default;
};

class PclusterCache {
 public:
  using Bytes = std::shared_ptr<const compress::UninitBytes>;

  explicit PclusterCache(uint64_t budget_bytes) : budget_(budget_bytes) {}

  // Cached, or being loaded by some thread (get_or_load would wait for it).
  bool has(const PclusterKey& key);
  void insert(const PclusterKey& key, Bytes data);
  // Drops the key's bytes (readers holding them keep them): for data its reader has finished
  // with, whose memory the next decode may then reuse instead of fresh pages. The last few keys
  // forgotten are remembered for finished().
  void forget(const PclusterKey& key);
  // Whether the key was forgotten lately and not cached since: a reader that comes late for the
  // start of such an extent is the only one left to need it.
  bool finished(const PclusterKey& key);
  // The cached bytes, or those `load` returns. Threads asking for a key that another thread is
  // loading wait for that load instead of decoding the same pcluster again; if it fails, each
  // of them loads for itself and meets the error on its own thread.
  Bytes get_or_load(const PclusterKey& key, const std::function<Bytes()>& load);
  // How many get_or_load calls so far waited for another thread's load of their key (each a
  // decode saved): what shows that concurrent readers share one decode.
  uint64_t shared_loads();

 private:
  struct KeyHash {
    size_t operator()(const PclusterKey& k) const;
  };
  using Lru = std::list<std::pair<PclusterKey, Bytes>>;

  std::mutex mutex_;
  uint64_t budget_;
  uint64_t used_ = 0;
  uint64_t shared_loads_ = 0;
  Lru lru_;  // most recently used first
  std::unordered_map<PclusterKey, Lru::iterator, KeyHash> index_;
  std::unordered_map<PclusterKey, std::shared_future<Bytes>, KeyHash> loading_;
  std::deque<PclusterKey> forgotten_;  // newest last, bounded
};

}  // namespace erofs::reader
