// The image file the reader reads, with pread (no mmap: a failing disk must give an error, not SIGBUS).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

namespace erofs::reader {

class InputImage {
 public:
  // Throws IoError when the file cannot be opened or sized.
  explicit InputImage(const std::string& path);
  ~InputImage();
  InputImage(const InputImage&) = delete;
  InputImage& operator=(const InputImage&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

  // The one raw accessor: reads exactly buf.size() bytes at `offset`. A range outside the file is
  // a CorruptError (the image pointed there); a failing or short pread is an IoError.
  void read(uint64_t offset, std::span<uint8_t> buf) const;
  // Starts reading [offset, offset + length) into the page cache without waiting for it: reads
  // that follow find their bytes arrived or on the way. Only a hint; nothing fails.
  void will_need(uint64_t offset, uint64_t length) const;
  // pread calls so far, by every thread (for tests and profiles: what the caches save).
  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }
  // will_need calls so far (for tests).
  uint64_t hints() const { return hints_.load(std::memory_order_relaxed); }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  mutable std::atomic<uint64_t> reads_{0};
  mutable std::atomic<uint64_t> hints_{0};
};

}  // namespace erofs::reader
