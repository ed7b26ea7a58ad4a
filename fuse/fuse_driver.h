// A read-only FUSE file system over reader::Image, on libfuse3's low-level API with a session
// loop of its own (one receiving thread that polls before it sleeps, decoders beside it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace erofs::fuse {

struct MountOptions {
  std::string image;
  std::string mountpoint;
  bool foreground = false;
  bool debug = false;
  uint64_t cache_bytes = 256ull << 20;  // decoded pclusters kept (-o cache_size=)
  uint64_t meta_cache_bytes = 64ull << 20;  // metadata blocks kept (-o meta_cache_size=)
  unsigned readahead_threads = 0;       // 0: one per core (-o readahead_threads=)
  uint64_t readahead_bytes = 0;         // decoded ahead of a sequential reader (-o readahead=)
  uint64_t kernel_readahead_bytes = 1 << 20;  // the kernel's readahead window (-o kernel_readahead=)
  // The kernel's largest read request (-o max_read=, a FUSE option libfuse also takes): 0 leaves
  // it to libfuse, which then sizes it from max_write (1 MiB).
  uint32_t max_read = 0;
  uint32_t poll_us = 100;  // how long the receiving thread polls for a request before sleeping (-o poll=)
  std::vector<std::string> fuse_options;  // passed to libfuse (-o allow_other, ...)
};

// Mounts and serves until unmounted. Returns a process exit code; errors are printed as one line.
int mount_and_serve(const MountOptions& options);

}  // namespace erofs::fuse
