#include "fuse/readahead.h"

#include <algorithm>

namespace erofs::fuse {
namespace {
constexpr size_t kMaxStreams = 4096;
constexpr size_t kMaxQueued = 64;
}  // namespace

Readahead::Readahead(const reader::Image& image, unsigned threads, uint64_t window_bytes)
    : image_(image), window_(window_bytes) {
  unsigned n = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
}

Readahead::~Readahead() {
  {
    std::lock_guard l(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

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
  for (; from < want && jobs_.size() < kMaxQueued; from += piece)
    jobs_.push_back({inode, from, std::min(piece, want - from)});
  s.ahead = std::max(s.ahead, from);
  cv_.notify_all();
}

void Readahead::work() {
  std::vector<uint8_t> scratch;
  for (;;) {
    Job job;
    {
      std::unique_lock l(mutex_);
      cv_.wait(l, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    scratch.resize(job.length);
    try {
      image_.read(job.inode, job.offset, scratch);
    } catch (const std::exception&) {
      // The reader that asked for these bytes gets the error itself when it reaches them.
    }
  }
}

}  // namespace erofs::fuse
