#include "writer/spill_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "writer/errors.h"
#include "writer/temp_files.h"

namespace erofs::writer {

SpillFile::SpillFile(const std::string& beside) {
  std::string path = beside + ".spill.XXXXXX";
  register_temp(path.c_str());  // until unlinked, a signal handler removes it
  fd_ = ::mkostemp(path.data(), O_CLOEXEC);
  const int err = errno;
  if (fd_ >= 0) ::unlink(path.c_str());
  unregister_temp(path.c_str());
  if (fd_ < 0) throw BuildError(errno_message("cannot create " + path, err));
}

SpillFile::~SpillFile() { ::close(fd_); }

namespace {

constexpr size_t kBufferBytes = 1 << 20;

void write_all(int fd, const uint8_t* data, size_t size, uint64_t offset) {
  for (size_t done = 0; done < size;) {
    ssize_t n = ::pwrite(fd, data + done, size - done, off_t(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw BuildError(errno_message("writing a temporary file beside the image", errno));
    done += size_t(n);
  }
}

}  // namespace

void SpillFile::flush() {
  if (pending_.empty()) return;
  write_all(fd_, pending_.data(), pending_.size(), written_);
  written_ += pending_.size();
  pending_.clear();
}

int SpillFile::fd() {
  flush();
  return fd_;
}

SpillRef SpillFile::append(std::span<const uint8_t> bytes) {
  SpillRef ref{size(), uint32_t(bytes.size())};
  if (pending_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    write_all(fd_, bytes.data(), bytes.size(), written_);
    written_ += bytes.size();
  } else {
    if (pending_.capacity() < kBufferBytes) pending_.reserve(kBufferBytes);
    pending_.insert(pending_.end(), bytes.begin(), bytes.end());
  }
  return ref;
}

// An append is written out whole or not at all, so a piece lies wholly in the file or wholly in
// the buffer.
void SpillFile::read(const SpillRef& ref, uint8_t* out) const {
  if (ref.offset >= written_) {
    std::copy_n(pending_.data() + (ref.offset - written_), ref.size, out);
    return;
  }
  for (size_t done = 0; done < ref.size;) {
    ssize_t n = ::pread(fd_, out + done, ref.size - done, off_t(ref.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw BuildError(errno_message("reading a temporary file beside the image", n < 0 ? errno : EIO));
    done += size_t(n);
  }
}

}  // namespace erofs::writer
