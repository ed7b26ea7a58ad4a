#include "fuse/page_store.h"

#include <algorithm>
#include <vector>

namespace erofs::fuse {

namespace {

constexpr size_t kMaxQueued = 64;       // further requests are dropped while the thread is behind
constexpr size_t kMaxRemembered = 1 << 16;
constexpr uint64_t kPage = 4096;

}  // namespace

PageStore::PageStore(const reader::Image& image, fuse_session* session)
    : image_(image), session_(session), thread_([this] { work(); }) {}

PageStore::~PageStore() {
  {
    std::lock_guard l(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void PageStore::after_read(fuse_ino_t ino, const reader::Inode& inode, uint64_t offset, size_t length) {
  {
    std::lock_guard l(mutex_);
    if (jobs_.size() >= kMaxQueued) return;
    jobs_.push_back({ino, inode, offset, length});
  }
  cv_.notify_one();
}

void PageStore::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock l(mutex_);
      cv_.wait(l, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      store(job);
    } catch (const std::exception&) {
      // A damaged extent: the read itself reported it; there is nothing to store.
    }
  }
}

void PageStore::store(const Job& job) {
  const reader::Extent e = image_.extent_at(job.inode, job.offset);
  if (e.kind == reader::Extent::Kind::Hole || e.kind == reader::Extent::Kind::Plain) return;
  if (job.offset <= e.offset && job.offset + job.length >= e.offset + e.length) return;  // all read
  const uint64_t key = std::hash<uint64_t>()(job.inode.nid * 0x9E3779B97F4A7C15ull ^ e.offset);
  if (!stored_.insert(key).second) return;
  if (stored_.size() > kMaxRemembered) stored_.clear();
  // Whole pages only: the kernel leaves a partly stored page not up to date. The file's last
  // page counts as whole.
  const uint64_t end = e.offset + e.length;
  const uint64_t first = (e.offset + kPage - 1) / kPage * kPage;
  const uint64_t last = end == job.inode.size ? end : end / kPage * kPage;
  if (last <= first) return;
  std::vector<uint8_t> bytes(size_t(last - first));
  if (image_.read(job.inode, first, bytes) != bytes.size()) return;
  fuse_bufvec vec = FUSE_BUFVEC_INIT(bytes.size());
  vec.buf[0].mem = bytes.data();
  fuse_lowlevel_notify_store(session_, job.ino, off_t(first), &vec, fuse_buf_copy_flags(0));
}

}  // namespace erofs::fuse
