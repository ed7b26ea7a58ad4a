#include "fuse/readahead.h"

#include <algorithm>
#include <thread>

namespace erofs::fuse {
namespace {
constexpr size_t kMaxStreams = 4096;
constexpr size_t kMaxQueued = 64;
}  // namespace

Readahead::Readahead(const reader::Image& image, unsigned threads, uint64_t window_bytes)
    : image_(image), window_(window_bytes),
      pool_(threads ? threads : std::max(1u, std::thread::hardware_concurrency()), kMaxQueued) {}

Readahead::~Readahead() { pool_.cancel(); }

void Readahead::after_read(const reader::Inode& inode, uint64_t offset, size_t length) {
  if (!inode.is_reg() || !format::is_compressed(inode.layout())) return;  // flat data needs no decoding
  std::lock_guard l(mutex_);
  if (streams_.size() > kMaxStreams) streams_.clear();
  Stream& s = streams_[inode.nid];
  bool sequential = offset == s.next;
  s.next = offset + length;
  if (!sequential || s.next >= inode.size) return;
  // Keep a window of decoded data ahead of the reader, queued in pieces so several pclusters are
  // decoded at once.
  uint64_t want = std::min(inode.size, s.next + window_);
  uint64_t from = std::max(s.ahead, s.next);
  const uint64_t piece = std::max<uint64_t>(window_ / 4, 64 << 10);
  for (; from < want; from += piece) {
    const uint64_t length = std::min(piece, want - from);
    if (!pool_.submit([this, inode, from, length] { prefetch(inode, from, length); })) break;
  }
  s.ahead = std::max(s.ahead, from);
}

void Readahead::prefetch(const reader::Inode& inode, uint64_t offset, uint64_t length) {
  try {
    image_.prefetch(inode, offset, length);
  } catch (const std::exception&) {
    // The reader that asked for these bytes gets the error itself when it reaches them.
  }
}

}  // namespace erofs::fuse
