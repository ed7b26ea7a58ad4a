#include "fuse/page_store.h"

#include <sched.h>

#include <algorithm>

namespace erofs::fuse {

namespace {

constexpr size_t kMaxQueued = 64;
constexpr size_t kMaxRemembered = 1 << 16;
constexpr uint64_t kPage = 4096;
// Pages handed to the kernel per notification. The kernel copies a notification's pages into the
// page cache in one stretch that nothing on that processor preempts, and the reader it delays
// there is the one the daemon serves: 9 MiB of random 4 KiB reads of the 64 KiB-pcluster image
// of the 10^9-byte file (53 stores of 360 KB extents, 145 us a notification whole) took 101 us a
// read storing whole extents, 88-91 us storing 64 KiB pieces from an idle-priority thread, as
// fast as storing nothing and as squashfuse (medians of 12 and 14 warm runs; the pieces did most
// of it, the idle priority alone nothing).
constexpr size_t kStoreChunk = 65536;

}  // namespace

PageStore::PageStore(const reader::Image& image, fuse_session* session)
    : image_(image), session_(session), jobs_(kMaxQueued), thread_([this] { work(); }) {}

PageStore::~PageStore() {
  jobs_.cancel();
  thread_.join();
}

void PageStore::after_read(fuse_ino_t ino, const reader::Inode& inode, uint64_t offset, size_t length) {
  // Most reads need nothing stored (they end where an extent ends: the end of a file read whole,
  // a sequential reader): told here, on the reading thread, they cost no hand-over to this one.
  if (offset + length >= inode.size) return;
  reader::Extent e;
  try {
    e = image_.extent_at(inode, offset);
  } catch (const std::exception&) {
    return;  // the read itself reported it
  }
  if (e.kind == reader::Extent::Kind::Hole || e.kind == reader::Extent::Kind::Plain) return;
  // A read that reaches the extent's end is sequential, or took the rest itself: the pages before
  // it came with the reads before it.
  if (offset + length >= e.offset + e.length) return;
  if (!policy_.store_after(inode.nid, inode.size, length, e.offset, e.length)) return;
  jobs_.push({ino, inode, e});  // dropped while the thread is behind
}

void PageStore::work() {
  // Stores are work ahead of need: a reader waiting for the daemon, or the daemon itself, comes
  // first (SCHED_IDLE: any other thread preempts this one). Refused, stores only run as before.
  sched_param idle{};
  sched_setscheduler(0, SCHED_IDLE, &idle);
  for (Job job; jobs_.pop(job);) {
    try {
      store(job);
    } catch (const std::exception&) {
      // A damaged extent: the read itself reported it; there is nothing to store.
    }
  }
}

void PageStore::store(const Job& job) {
  const reader::Extent& e = job.extent;
  const uint64_t key = StorePolicy::extent_key(job.inode.nid, e.offset);
  if (!stored_.insert(key).second) return;
  if (stored_.size() > kMaxRemembered) stored_.clear();
  // Whole pages only: the kernel leaves a partly stored page not up to date. The file's last
  // page counts as whole.
  const uint64_t end = e.offset + e.length;
  const uint64_t first = (e.offset + kPage - 1) / kPage * kPage;
  const uint64_t last = end == job.inode.size ? end : end / kPage * kPage;
  if (last <= first) return;
  // Read whole, the extent is decoded straight into a buffer of its own (or shared from the
  // cache, if someone has it there) and not kept in the pcluster cache, where nobody would read it
  // again: the kernel has its pages from now on. Kept, the extents of a random reader of the 4 KiB
  // image filled the cache with fresh memory (72,000 page faults, a third of the daemon's CPU).
  // Handed to the kernel as it is, without a copy, kStoreChunk at a time.
  const auto pieces = image_.read_shared(job.inode, e.offset, e.length);
  if (pieces.size() != 1 || pieces[0].bytes.size() != e.length) return;
  const auto bytes = pieces[0].bytes.subspan(size_t(first - e.offset), size_t(last - first));
  for (size_t at = 0; at < bytes.size(); at += kStoreChunk) {
    const size_t n = std::min(kStoreChunk, bytes.size() - at);
    fuse_bufvec vec = FUSE_BUFVEC_INIT(n);
    vec.buf[0].mem = const_cast<uint8_t*>(bytes.data() + at);
    fuse_lowlevel_notify_store(session_, job.ino, off_t(first + at), &vec, fuse_buf_copy_flags(0));
  }
}

}  // namespace erofs::fuse
