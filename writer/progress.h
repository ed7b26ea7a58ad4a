// Counters the builder updates as it goes; a display thread may read them at any time.
#pragma once

#include <atomic>
#include <cstdint>

namespace erofs::writer {

struct Progress {
  std::atomic<uint64_t> total_files{0}, total_bytes{0};  // known once the source is scanned
  std::atomic<uint64_t> files{0}, bytes_in{0};           // regular files and bytes done
  std::atomic<uint64_t> bytes_out{0};                    // image bytes written so far
  // With fragments, after the files: the packed inode's bytes to compress, and those done.
  std::atomic<uint64_t> packed_bytes{0}, packed_done{0};
  std::atomic<bool> scanned{false};
};

}  // namespace erofs::writer
