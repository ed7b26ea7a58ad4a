// Puts a fuzz input where reader::Image::open can find it: Image opens by path only, so the bytes
// go to a memfd reached through /proc/self/fd (a temporary file when either is missing). One file
// is reused for every input of the process.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace erofs::fuzz {

class InputFile {
 public:
  InputFile() {
    fd_ = ::memfd_create("erofs-fuzz-input", MFD_CLOEXEC);
    if (fd_ >= 0) {
      path_ = "/proc/self/fd/" + std::to_string(fd_);
      if (::access(path_.c_str(), R_OK) == 0) return;
      ::close(fd_);
    }
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/erofs-fuzz-input.XXXXXX";
    fd_ = ::mkstemp(path_.data());
    if (fd_ < 0) {
      std::perror("erofs fuzz: cannot create the input file");
      std::abort();
    }
    temporary_ = true;
  }
  ~InputFile() {
    ::close(fd_);
    if (temporary_) ::unlink(path_.c_str());
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Replaces the file's contents with `data`; returns the path to open.
  const std::string& put(const uint8_t* data, size_t size) {
    if (::ftruncate(fd_, 0) != 0) fail("ftruncate");
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd_, data + done, size - done, off_t(done));
      if (n <= 0) fail("pwrite");
      done += size_t(n);
    }
    return path_;
  }

 private:
  [[noreturn]] static void fail(const char* what) {
    std::perror(what);
    std::abort();
  }

  int fd_ = -1;
  std::string path_;
  bool temporary_ = false;
};

}  // namespace erofs::fuzz
