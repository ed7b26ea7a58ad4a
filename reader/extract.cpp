#include "reader/extract.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "format/constants.h"
#include "reader/image.h"

namespace erofs::reader {
namespace {

IoError sys_error(const std::string& what, int err) {
  return IoError(fmt::format("{}: {}", what, std::strerror(err)), err);
}

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens a directory below `root` without crossing any symlink or leaving the tree.
int open_beneath(int root, const std::string& rel) {
  struct open_how how {};
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return int(::syscall(SYS_openat2, root, rel.empty() ? "." : rel.c_str(), &how, sizeof how));
}

class Extractor {
 public:
  Extractor(const Image& img, const ExtractOptions& o) : img_(img), opt_(o), as_root_(::geteuid() == 0) {}

  ExtractStats run(const std::string& dest) {
    if (::mkdir(dest.c_str(), 0755) != 0 && errno != EEXIST) throw sys_error("cannot create " + dest, errno);
    int fd = ::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ELOOP || errno == ENOTDIR)
        throw std::runtime_error("destination " + dest + " is not a directory (symlinks are not followed)");
      throw sys_error("cannot open " + dest, errno);
    }
    Fd root(fd);
    root_ = fd;
    Inode top = img_.resolve(opt_.subtree);
    if (top.is_dir()) {
      fill_dir(fd, "", top, "/");
      apply_metadata(fd, ".", top, true);
    } else {
      auto slash = opt_.subtree.find_last_of('/');
      std::string name = slash == std::string::npos ? opt_.subtree : opt_.subtree.substr(slash + 1);
      create(fd, "", name, top, opt_.subtree);
    }
    return stats_;
  }

 private:
  void fill_dir(int dirfd, const std::string& rel, const Inode& dir, const std::string& path) {
    if (!active_.insert(dir.nid).second) throw std::runtime_error(path + ": directory loop in the image");
    // A directory under two names would be extracted twice, and nested such links multiply (a few
    // dozen directories can stand for millions of paths): EROFS has no hard-linked directories.
    if (!filled_.insert(dir.nid).second)
      throw std::runtime_error(path + ": directory is linked from more than one place in the image");
    std::vector<DirEntry> entries;
    img_.read_dir(dir, [&](const DirEntry& e) {
      if (e.name != "." && e.name != "..") entries.push_back(e);
      return true;
    });
    for (auto& e : entries) {
      // The reader rejects such names already; this keeps extraction safe on its own.
      if (e.name.empty() || e.name == "." || e.name == ".." || e.name.find('/') != std::string::npos ||
          e.name.find('\0') != std::string::npos)
        throw std::runtime_error(fmt::format("{}: unsafe name in the image", path));
      std::string child_path = path == "/" ? "/" + e.name : path + "/" + e.name;
      create(dirfd, rel, e.name, img_.inode(e.nid), child_path);
    }
    active_.erase(dir.nid);
  }

  void create(int dirfd, const std::string& rel, const std::string& name, const Inode& ino, const std::string& path) {
    const char* n = name.c_str();
    std::string child_rel = rel.empty() ? name : rel + "/" + name;
    if (!ino.is_dir() && ino.nlink > 1) {
      auto it = first_link_.find(ino.nid);
      if (it != first_link_.end()) {
        auto slash = it->second.find_last_of('/');
        std::string parent = slash == std::string::npos ? "" : it->second.substr(0, slash);
        std::string base = slash == std::string::npos ? it->second : it->second.substr(slash + 1);
        Fd pfd(open_beneath(root_, parent));
        if (pfd.fd < 0) throw sys_error("cannot open " + parent, errno);
        if (::linkat(pfd.fd, base.c_str(), dirfd, n, 0) != 0) throw sys_error("cannot link " + path, errno);
        ++stats_.hard_links;
        return;
      }
      first_link_[ino.nid] = child_rel;
    }
    switch (ino.mode & S_IFMT) {
      case S_IFDIR: {
        if (::mkdirat(dirfd, n, 0700) != 0) throw sys_error("cannot create directory " + path, errno);
        int fd = ::openat(dirfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) throw sys_error("cannot open " + path, errno);
        Fd child(fd);
        ++stats_.directories;
        fill_dir(fd, child_rel, ino, path);
        apply_metadata(fd, ".", ino, true);
        return;
      }
      case S_IFREG: {
        int fd = ::openat(dirfd, n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) throw sys_error("cannot create " + path, errno);
        Fd file(fd);
        copy_data(fd, ino, path);
        ++stats_.files;
        apply_metadata(fd, nullptr, ino, false);
        return;
      }
      case S_IFLNK: {
        std::string target = img_.readlink(ino);
        if (::symlinkat(target.c_str(), dirfd, n) != 0) throw sys_error("cannot create symlink " + path, errno);
        ++stats_.symlinks;
        break;
      }
      case S_IFCHR:
      case S_IFBLK:
      case S_IFIFO:
      case S_IFSOCK: {
        dev_t dev = makedev(ino.rdev_major, ino.rdev_minor);
        if (::mknodat(dirfd, n, (ino.mode & S_IFMT) | 0600, dev) != 0) throw sys_error("cannot create " + path, errno);
        ++stats_.specials;
        break;
      }
      default: throw std::runtime_error(fmt::format("{}: unknown file type {:o}", path, ino.mode));
    }
    apply_metadata(dirfd, n, ino, false);
  }

  // Holes are not written: the file gets its size from ftruncate and stays sparse, so a declared
  // size (a hostile image may claim exabytes of holes) costs no disk space.
  void copy_data(int fd, const Inode& ino, const std::string& path) {
    // Adjacent extents are copied through one buffer kept for the whole extraction (a fresh
    // megabyte per file costs more than the data of most files), in reads that end on extent
    // boundaries. The buffer grows to hold the largest compressed extent or fragment piece (the
    // reader cuts fragments where the packed inode's extents end): each is then decoded once,
    // straight into the buffer, and never through the reader's cache.
    if (buf_.empty()) buf_.resize(1 << 20);
    uint64_t start = 0, end = 0;  // stored bytes not written yet
    auto flush = [&] {
      for (uint64_t off = start; off < end;) {
        size_t n = img_.read(ino, off, std::span(buf_).first(size_t(std::min<uint64_t>(buf_.size(), end - off))));
        if (n == 0) throw std::runtime_error(fmt::format("{}: data ends early at {}", path, off));
        for (size_t done = 0; done < n;) {
          ssize_t w = ::pwrite(fd, buf_.data() + done, n - done, off_t(off + done));
          if (w < 0) throw sys_error("cannot write " + path, errno);
          done += size_t(w);
        }
        off += n;
      }
      start = end;
    };
    for (const Extent& ext : img_.extents(ino)) {
      const bool decoded = ext.kind == Extent::Kind::Compressed || ext.kind == Extent::Kind::Fragment;
      if (decoded && ext.length > buf_.size() && ext.length <= format::kMaxExtentBytes) {
        flush();
        buf_.resize(size_t(ext.length));
      }
      if (ext.kind == Extent::Kind::Hole || ext.offset != end) {
        flush();
        start = end = ext.offset + (ext.kind == Extent::Kind::Hole ? ext.length : 0);
        if (ext.kind == Extent::Kind::Hole) continue;
      }
      if (end - start + ext.length > buf_.size()) flush();
      end += ext.length;
    }
    flush();
    if (::ftruncate(fd, off_t(ino.size)) != 0) throw sys_error("cannot write " + path, errno);
    stats_.bytes += ino.size;
  }

  // With `name`, the entry is named relative to `fd` and never followed; without it, `fd` is the
  // file itself. The order keeps every attribute: chown clears setuid/setgid and
  // security.capability, so it comes first; xattrs before the mode, because a user.* xattr needs
  // write permission the final mode may take away from a non-root extractor (an access ACL
  // and the mode's group bits agree, so neither rewrites the other); the capability after the
  // mode and the owner; times last, once nothing changes the entry any more (a directory's after
  // its contents).
  void apply_metadata(int fd, const char* name, const Inode& ino, bool is_dir_fd) {
    bool self = name == nullptr || is_dir_fd;
    std::string proc = fmt::format("/proc/self/fd/{}{}{}", fd, name && !is_dir_fd ? "/" : "",
                                   name && !is_dir_fd ? name : "");
    auto set_xattr = [&](const Xattr& x) {
      int r = self ? ::fsetxattr(fd, x.name.c_str(), x.value.data(), x.value.size(), 0)
                   : ::lsetxattr(proc.c_str(), x.name.c_str(), x.value.data(), x.value.size(), 0);
      if (r != 0) warn(fmt::format("cannot set xattr {}: {}", x.name, std::strerror(errno)));
    };
    if (opt_.owners && as_root_) {
      int r = self ? ::fchown(fd, ino.uid, ino.gid) : ::fchownat(fd, name, ino.uid, ino.gid, AT_SYMLINK_NOFOLLOW);
      if (r != 0) throw sys_error("cannot set owner", errno);
    }
    std::vector<Xattr> xattrs;
    if (opt_.xattrs) xattrs = img_.xattrs(ino);
    auto is_capability = [](const Xattr& x) { return x.name == "security.capability"; };
    for (auto& x : xattrs)
      if (!is_capability(x)) set_xattr(x);
    if (!S_ISLNK(ino.mode)) {
      int r = self ? ::fchmod(fd, ino.mode & 07777) : ::fchmodat(fd, name, ino.mode & 07777, 0);
      if (r != 0) throw sys_error("cannot set mode", errno);
    }
    for (auto& x : xattrs)
      if (is_capability(x)) set_xattr(x);
    struct timespec ts[2] = {{ino.mtime, long(ino.mtime_nsec)}, {ino.mtime, long(ino.mtime_nsec)}};
    int r = self ? ::futimens(fd, ts) : ::utimensat(fd, name, ts, AT_SYMLINK_NOFOLLOW);
    if (r != 0) throw sys_error("cannot set times", errno);
  }

  void warn(const std::string& m) {
    if (opt_.warn) opt_.warn(m);
  }

  const Image& img_;
  const ExtractOptions& opt_;
  bool as_root_;
  int root_ = -1;
  ExtractStats stats_;
  std::set<uint64_t> active_, filled_;
  std::vector<uint8_t> buf_;
  std::map<uint64_t, std::string> first_link_;
};

}  // namespace

ExtractStats extract_image(const Image& image, const std::string& dest, const ExtractOptions& options) {
  return Extractor(image, options).run(dest);
}

}  // namespace erofs::reader
