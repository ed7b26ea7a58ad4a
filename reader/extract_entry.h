// The system-call side of extraction (reader/extract.h): writing a file's bytes, restoring an
// entry's attributes in the order that keeps them all, opening directories without following
// links. Internal to the reader's extraction engine.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reader/image.h"

namespace erofs::reader::extract_detail {

// The destination failed (creating, writing, setting an attribute): the extraction stops. Errors
// of the image itself (CorruptError, and IoError when reading the image fails) cost only the
// entry they hit.
class DestinationError : public IoError {
 public:
  using IoError::IoError;
};

DestinationError sys_error(const std::string& what, int err);

// An owned file descriptor (-1: none).
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset();

 private:
  int fd_;
};

// Opens a directory below `root` without crossing any symlink or leaving the tree.
int open_beneath(int root, const std::string& rel);

struct Copied {
  uint64_t covered = 0;  // bytes of the range, holes included
  uint64_t end = 0;      // where the last bytes written end (0: none written)
};

// Writes the bytes of the extents of `ino` that start in [from, to) to `fd` at their offsets;
// holes are not written (the caller sizes the file with ftruncate, so it stays sparse). `buf` is
// the caller's, reused from file to file: it grows to the largest compressed extent, which is
// then decoded once, straight into it.
Copied copy_range(const Image& image, int fd, const Inode& ino, uint64_t from, uint64_t to, std::vector<uint8_t>& buf,
                  const std::string& path);

using Warn = std::function<void(const std::string&)>;

// Restores owner, xattrs, mode and times, in the order that keeps them all, and skips what a
// freshly created entry has right already: each call saved is a system call per file, and a
// tree of small files is mostly system calls.
class Attributes {
 public:
  // `dest_fd`: the destination's top directory. Its set-group-ID bit and default ACL decide the
  // group and mode of what is created below it.
  Attributes(const Image& image, bool owners, bool xattrs, int dest_fd);

  // The permission bits to create a regular file with: its final ones when nothing would change
  // them afterwards (no set-ID or sticky bits, none the umask takes away, and user.* xattrs still
  // writable), else 0600.
  uint32_t creation_mode(const Inode& ino) const;

  // With `name`, the entry is named relative to `fd` and never followed; without it, `fd` is the
  // entry itself. `created_mode`: the permission bits the entry was created with (as asked, before
  // the umask).
  void apply(int fd, const char* name, const Inode& ino, uint32_t created_mode, const Warn& warn) const;

 private:
  const Image& image_;
  bool owners_, xattrs_, root_;
  uint32_t uid_, gid_;
  bool inherits_ = true;  // created entries may not get the extracting user's group or the asked-for mode
  uint32_t umask_ = 07777;
};

}  // namespace erofs::reader::extract_detail
