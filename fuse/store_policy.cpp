#include "fuse/store_policy.h"

#include <functional>

namespace erofs::fuse {

namespace {

// Both maps are forgotten when they grow past these: they only steer work ahead of need.
constexpr size_t kExtentsRemembered = 1 << 16;
constexpr size_t kFilesRemembered = 4096;

}  // namespace

uint64_t StorePolicy::extent_key(uint64_t nid, uint64_t extent_offset) {
  return std::hash<uint64_t>()(nid * 0x9E3779B97F4A7C15ull ^ extent_offset);
}

bool StorePolicy::store_after(uint64_t nid, uint64_t file_size, uint64_t length, uint64_t extent_offset,
                              uint64_t extent_length) {
  const bool small = extent_length <= kSmallExtent;
  std::lock_guard l(mutex_);
  if (read_bytes_.size() > kFilesRemembered) read_bytes_.clear();
  uint64_t& read = read_bytes_[nid];
  read += length;
  if (small && read >= file_size / kDenseShare) return true;
  const uint64_t key = extent_key(nid, extent_offset);
  if (touched_.size() > kExtentsRemembered) touched_.clear();
  uint8_t& touches = touched_[key];
  if (++touches < (small ? kSmallTouches : kLargeTouches)) return false;
  if (!small && read < file_size / kLargeShare) {
    --touches;  // the next read inside it asks again
    return false;
  }
  touched_.erase(key);
  return true;
}

}  // namespace erofs::fuse
