#include "reader/input_image.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "reader/checked.h"
#include "reader/image.h"

namespace erofs::reader {

InputImage::InputImage(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    int err = errno;
    throw IoError(fmt::format("{}: {}", path, std::strerror(err)), err);
  }
  // lseek rather than fstat so that block devices report their size too.
  off_t end = ::lseek(fd_, 0, SEEK_END);
  if (end < 0) {
    int err = errno;
    ::close(fd_);
    throw IoError(fmt::format("{}: {}", path, std::strerror(err)), err);
  }
  size_ = uint64_t(end);
}

InputImage::~InputImage() { ::close(fd_); }

void InputImage::read(uint64_t offset, std::span<uint8_t> buf) const {
  uint64_t end = checked::add(offset, buf.size());
  if (end > size_)
    throw CorruptError(fmt::format("read of {} bytes at offset {} is beyond the end of the image ({} bytes)",
                                   buf.size(), offset, size_));
  size_t done = 0;
  while (done < buf.size()) {
    ssize_t n = ::pread(fd_, buf.data() + done, buf.size() - done, off_t(offset + done));
    reads_.fetch_add(1, std::memory_order_relaxed);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      throw IoError(fmt::format("{}: read at offset {}: {}", path_, offset + done, std::strerror(err)), err);
    }
    if (n == 0) throw IoError(fmt::format("{}: image shrank while reading at offset {}", path_, offset + done), EIO);
    done += size_t(n);
  }
}

void InputImage::will_need(uint64_t offset, uint64_t length) const {
  if (offset >= size_ || !length) return;
  hints_.fetch_add(1, std::memory_order_relaxed);
  ::posix_fadvise(fd_, off_t(offset), off_t(std::min(length, size_ - offset)), POSIX_FADV_WILLNEED);
}

}  // namespace erofs::reader
