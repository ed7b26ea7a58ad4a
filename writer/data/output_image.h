// The image being written: a temporary file beside the target, filled front to back, renamed
// over the target only when complete. Any failure (or destruction before commit) removes it.
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace erofs::writer {

class OutputImage {
 public:
  explicit OutputImage(const std::string& target);
  ~OutputImage();
  OutputImage(const OutputImage&) = delete;
  OutputImage& operator=(const OutputImage&) = delete;

  uint64_t offset() const { return offset_; }
  void append(std::span<const uint8_t> data);
  void append_zeros(uint64_t n);
  void pad_to(uint64_t offset);  // zero-fill up to `offset` (>= offset())
  // Writes at an offset already passed (the superblock at the end); not part of the content hash.
  void patch(uint64_t offset, std::span<const uint8_t> data);
  // 128-bit hash of everything appended, for UUIDs derived from the content.
  XXH128_hash_t content_hash();
  // Writes out what is buffered, then reads. Once nothing is buffered (after a first call),
  // several threads may call it at once.
  void read_back(uint64_t offset, std::span<uint8_t> out);
  // Flushes, sets the final size, and renames the temporary file over the target.
  void commit(uint64_t final_size);
  const std::string& temp_path() const { return temp_; }

 private:
  void flush();
  std::string target_, temp_;
  int fd_ = -1;
  uint64_t offset_ = 0;      // logical end (buffer included)
  uint64_t flushed_ = 0;     // bytes on disk
  std::vector<uint8_t> buf_;
  XXH3_state_t* hash_ = nullptr;
  bool committed_ = false;
};

}  // namespace erofs::writer
