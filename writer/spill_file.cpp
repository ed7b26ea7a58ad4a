#include "writer/spill_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "writer/errors.h"
#include "writer/image_file.h"

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

SpillRef SpillFile::append(std::span<const uint8_t> bytes) {
  SpillRef ref{size_, uint32_t(bytes.size())};
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, off_t(size_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw BuildError(errno_message("writing a temporary file beside the image", errno));
    done += size_t(n);
  }
  size_ += bytes.size();
  return ref;
}

void SpillFile::truncate(uint64_t size) {
  if (::ftruncate(fd_, off_t(size)) != 0) throw BuildError(errno_message("truncating a temporary file beside the image", errno));
  size_ = size;
}

void SpillFile::read(const SpillRef& ref, uint8_t* out) const {
  for (size_t done = 0; done < ref.size;) {
    ssize_t n = ::pread(fd_, out + done, ref.size - done, off_t(ref.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw BuildError(errno_message("reading a temporary file beside the image", n < 0 ? errno : EIO));
    done += size_t(n);
  }
}

}  // namespace erofs::writer
