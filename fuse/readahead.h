// Decodes ahead of sequential readers: when a read continues where the previous one on the same
// inode ended, the next bytes are decoded into the reader's pcluster cache on a pool of threads,
// so the following requests find their pclusters decoded (several at once).
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "reader/image.h"
#include "util/task_pool.h"

namespace erofs::fuse {

class Readahead {
 public:
  Readahead(const reader::Image& image, unsigned threads, uint64_t window_bytes);
  ~Readahead();
  Readahead(const Readahead&) = delete;
  Readahead& operator=(const Readahead&) = delete;

  void after_read(const reader::Inode& inode, uint64_t offset, size_t length);

 private:
  struct Stream {
    uint64_t next = 0;     // where a sequential read would start
    uint64_t ahead = 0;    // bytes up to here are queued or done
  };
  void prefetch(const reader::Inode& inode, uint64_t offset, uint64_t length);

  const reader::Image& image_;
  uint64_t window_;
  std::mutex mutex_;  // guards streams_
  std::unordered_map<uint64_t, Stream> streams_;  // by nid
  util::TaskPool pool_;  // last: its threads stop before the rest goes
};

}  // namespace erofs::fuse
