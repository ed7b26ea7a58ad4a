#include "reader/extract_entry.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <span>

#include <fmt/format.h>

#include "format/constants.h"

namespace erofs::reader::extract_detail {

DestinationError sys_error(const std::string& what, int err) {
  return DestinationError(fmt::format("{}: {}", what, std::strerror(err)), err);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int open_beneath(int root, const std::string& rel) {
  struct open_how how {};
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return int(::syscall(SYS_openat2, root, rel.empty() ? "." : rel.c_str(), &how, sizeof how));
}

Copied copy_range(const Image& image, int fd, const Inode& ino, uint64_t from, uint64_t to, std::vector<uint8_t>& buf,
                  const std::string& path) {
  // Adjacent extents are copied through one buffer in reads that end on extent boundaries (a
  // fresh megabyte per file costs more than the data of most files). The buffer grows to hold
  // the largest compressed extent or fragment piece (the reader cuts fragments where the packed
  // inode's extents end): each is then decoded once, straight into the buffer, and never through
  // the reader's cache.
  if (buf.empty()) buf.resize(1 << 20);
  Copied done;
  uint64_t start = 0, end = 0;  // stored bytes not written yet
  auto flush = [&] {
    for (uint64_t off = start; off < end;) {
      const size_t n = image.read(ino, off, std::span(buf).first(size_t(std::min<uint64_t>(buf.size(), end - off))));
      if (n == 0) throw CorruptError(fmt::format("data ends early at {}", off));
      for (size_t w = 0; w < n;) {
        const ssize_t r = ::pwrite(fd, buf.data() + w, n - w, off_t(off + w));
        if (r < 0) throw sys_error("cannot write " + path, errno);
        w += size_t(r);
      }
      off += n;
      done.end = off;
    }
    start = end;
  };
  image.extents_in(ino, from, to, [&](const Extent& ext) {
    done.covered += ext.length;
    const bool decoded = ext.kind == Extent::Kind::Compressed || ext.kind == Extent::Kind::Fragment;
    if (decoded && ext.length > buf.size() && ext.length <= format::kMaxExtentBytes) {
      flush();
      buf.resize(size_t(ext.length));
    }
    if (ext.kind == Extent::Kind::Hole || ext.offset != end) {
      flush();
      start = end = ext.offset + (ext.kind == Extent::Kind::Hole ? ext.length : 0);
      if (ext.kind == Extent::Kind::Hole) return;
    }
    if (end - start + ext.length > buf.size()) flush();
    end += ext.length;
  });
  flush();
  return done;
}

namespace {

// The process's umask, without changing it (umask(2) would, for every thread): 07777 when
// unknown, so that nothing relies on it.
uint32_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Umask:", 0) == 0) return uint32_t(std::stoul(line.substr(6), nullptr, 8));
  return 07777;
}

}  // namespace

Attributes::Attributes(const Image& image, bool owners, bool xattrs, int dest_fd)
    : image_(image), owners_(owners), xattrs_(xattrs), root_(::geteuid() == 0), uid_(::geteuid()), gid_(::getegid()) {
  struct stat st;
  // Below a set-group-ID directory, new entries take its group (and directories the bit);
  // below a default ACL, its mask stands for the umask.
  if (::fstat(dest_fd, &st) == 0 && !(st.st_mode & S_ISGID) &&
      ::fgetxattr(dest_fd, "system.posix_acl_default", nullptr, 0) < 0 && errno == ENODATA) {
    inherits_ = false;
    umask_ = current_umask();
  }
}

uint32_t Attributes::creation_mode(const Inode& ino) const {
  const uint32_t perm = ino.mode & 07777;
  const bool xattrs_need_write = !root_ && xattrs_ && ino.xattr_size && !(perm & S_IWUSR);
  if (inherits_ || (perm & 07000) || (perm & umask_) || xattrs_need_write) return 0600;
  return perm;
}

// The order keeps every attribute: chown clears setuid/setgid and security.capability, so it
// comes first; xattrs before the mode, because a user.* xattr needs write permission the final
// mode may take away from a non-root extractor (an access ACL and the mode's group bits agree, so
// neither rewrites the other); the capability after the mode and the owner; times last, once
// nothing changes the entry any more (a directory's after its contents).
void Attributes::apply(int fd, const char* name, const Inode& ino, uint32_t created_mode, const Warn& warn) const {
  const bool self = name == nullptr;
  const std::string proc = self ? "" : fmt::format("/proc/self/fd/{}/{}", fd, name);
  auto set_xattr = [&](const Xattr& x) {
    const int r = self ? ::fsetxattr(fd, x.name.c_str(), x.value.data(), x.value.size(), 0)
                       : ::lsetxattr(proc.c_str(), x.name.c_str(), x.value.data(), x.value.size(), 0);
    if (r != 0) warn(fmt::format("cannot set xattr {}: {}", x.name, std::strerror(errno)));
  };
  if (owners_ && (inherits_ || ino.uid != uid_ || ino.gid != gid_)) {
    const int r = self ? ::fchown(fd, ino.uid, ino.gid) : ::fchownat(fd, name, ino.uid, ino.gid, AT_SYMLINK_NOFOLLOW);
    if (r != 0) throw sys_error("cannot set owner", errno);
  }
  std::vector<Xattr> list;
  if (xattrs_ && ino.xattr_size) list = image_.xattrs(ino);
  auto is_capability = [](const Xattr& x) { return x.name == "security.capability"; };
  for (auto& x : list)
    if (!is_capability(x)) set_xattr(x);
  // The mode the entry was created with (less the umask) stands when it is the right one.
  const bool mode_right = !inherits_ && (ino.mode & 07777) == (created_mode & ~umask_);
  if (!S_ISLNK(ino.mode) && !mode_right) {
    const int r = self ? ::fchmod(fd, ino.mode & 07777) : ::fchmodat(fd, name, ino.mode & 07777, 0);
    if (r != 0) throw sys_error("cannot set mode", errno);
  }
  for (auto& x : list)
    if (is_capability(x)) set_xattr(x);
  struct timespec ts[2] = {{ino.mtime, long(ino.mtime_nsec)}, {ino.mtime, long(ino.mtime_nsec)}};
  const int r = self ? ::futimens(fd, ts) : ::utimensat(fd, name, ts, AT_SYMLINK_NOFOLLOW);
  if (r != 0) throw sys_error("cannot set times", errno);
}

}  // namespace erofs::reader::extract_detail
