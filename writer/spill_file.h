// Bytes kept for later in a temporary file beside the image instead of in memory (inline tails
// wait there until the inode area is written). The file is unlinked at once, so it never outlives
// the build.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace erofs::writer {

struct SpillRef {
  uint64_t offset = 0;
  uint32_t size = 0;
};

class SpillFile {
 public:
  explicit SpillFile(const std::string& beside);  // created as BESIDE.spill.XXXXXX
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  SpillRef append(std::span<const uint8_t> bytes);
  void read(const SpillRef& ref, uint8_t* out) const;
  int fd() const { return fd_; }  // for readers that pread the bytes themselves
  uint64_t size() const { return size_; }
  // Drops the bytes from `size` on (the last appends, when they turned out not to be needed).
  void truncate(uint64_t size);

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace erofs::writer
