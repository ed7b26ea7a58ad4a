// After a read of part of a compressed extent, puts the rest of the decoded extent into the
// kernel's page cache (fuse_lowlevel_notify_store), as the kernel's own erofs does: the pcluster is
// decoded once, and further reads inside that extent never reach the daemon. Random reads of big
// pclusters gain the most. Which extents, and when: fuse/store_policy.h. Runs on its own thread,
// because storing waits for page locks that reads still in flight may hold, at idle priority and
// a few pages a notification, so that storing never holds up a reader.
#pragma once

#define FUSE_USE_VERSION 35
#include <fuse3/fuse_lowlevel.h>

#include <cstdint>
#include <thread>
#include <unordered_set>

#include "fuse/store_policy.h"
#include "util/work_queue.h"
#include "reader/image.h"

namespace erofs::fuse {

class PageStore {
 public:
  PageStore(const reader::Image& image, fuse_session* session);
  ~PageStore();
  PageStore(const PageStore&) = delete;
  PageStore& operator=(const PageStore&) = delete;

  // A read of [offset, offset + length) of `inode` (FUSE inode `ino`) was answered.
  void after_read(fuse_ino_t ino, const reader::Inode& inode, uint64_t offset, size_t length);

 private:
  struct Job {
    fuse_ino_t ino;
    reader::Inode inode;
    reader::Extent extent;  // the extent the read ended inside
  };
  void work();
  void store(const Job& job);

  const reader::Image& image_;
  fuse_session* session_;
  util::WorkQueue<Job> jobs_;
  StorePolicy policy_;
  std::unordered_set<uint64_t> stored_;   // extents stored lately (the storing thread's)
  std::thread thread_;
};

}  // namespace erofs::fuse
