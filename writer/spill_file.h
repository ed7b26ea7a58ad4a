// Bytes kept for later in a temporary file beside the image instead of in memory (inline tails
// wait there until the inode area is written). The file is unlinked at once, so it never outlives
// the build. Appends gather in a buffer written out a megabyte at a time: a tree of small files
// makes tens of thousands of appends, and a system call each cost more than the copies.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

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
  int fd();  // for readers that pread the bytes themselves: everything appended is written first
  uint64_t size() const { return written_ + pending_.size(); }

 private:
  void flush();

  int fd_ = -1;
  uint64_t written_ = 0;          // bytes in the file; the pending ones follow them
  std::vector<uint8_t> pending_;
};

}  // namespace erofs::writer
