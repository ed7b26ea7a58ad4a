#include "writer/source/scan_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <map>
#include <thread>

#include "writer/errors.h"
#include "writer/source/exclusions.h"
#include "util/parallel_for.h"

namespace erofs::writer {
namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A path usable by the l*xattr calls whatever its length: through the directory's fd.
std::string fd_path(int dirfd, const std::string& name) {
  return "/proc/self/fd/" + std::to_string(dirfd) + "/" + name;
}

// Where an entry's xattrs are read: an open file (f*xattr), or else a path that is not followed
// (l*xattr: symlinks and special files, which are not opened).
struct XattrSource {
  static XattrSource open_file(int fd) { return {fd, {}}; }
  static XattrSource unfollowed(std::string path) { return {-1, std::move(path)}; }

  int fd = -1;
  std::string path;

  ssize_t list(char* buf, size_t n) const { return fd >= 0 ? ::flistxattr(fd, buf, n) : ::llistxattr(path.c_str(), buf, n); }
  ssize_t get(const char* name, void* buf, size_t n) const {
    return fd >= 0 ? ::fgetxattr(fd, name, buf, n) : ::lgetxattr(path.c_str(), name, buf, n);
  }
};

// Most entries have no xattrs or a few short ones: one call with a buffer of this size answers
// them, and only a longer list or value costs the call that asks for its size.
constexpr size_t kXattrGuess = 1024;

XattrList read_xattrs(const XattrSource& src) {
  XattrList out;
  std::string names(kXattrGuess, '\0');
  for (;;) {
    ssize_t n = src.list(names.data(), names.size());
    if (n >= 0) {
      names.resize(size_t(n));
      break;
    }
    if (errno == ENOTSUP || errno == ENOSYS) return out;
    if (errno != ERANGE) throw BuildError(errno_message("cannot list xattrs", errno));
    n = src.list(nullptr, 0);
    if (n < 0) throw BuildError(errno_message("cannot list xattrs", errno));
    names.resize(size_t(n));
  }
  for (size_t pos = 0; pos < names.size();) {
    std::string name(names.c_str() + pos);
    pos += name.size() + 1;
    if (name.empty()) continue;
    std::string value(kXattrGuess, '\0');
    for (;;) {
      ssize_t n = src.get(name.c_str(), value.data(), value.size());
      if (n >= 0) {
        value.resize(size_t(n));
        out.emplace_back(std::move(name), std::move(value));
        break;
      }
      if (errno == ENODATA) break;
      if (errno != ERANGE) throw BuildError(errno_message("cannot read xattr " + name, errno));
      n = src.get(name.c_str(), nullptr, 0);
      if (n < 0) {
        if (errno == ENODATA) break;
        throw BuildError(errno_message("cannot read xattr " + name, errno));
      }
      value.resize(size_t(n));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What the system calls say about one directory entry. The calls for a directory's entries run
// in parallel; the tree is then built from the answers in name order, so the image, and which
// error stops the build, do not depend on their timing.
struct EntryFacts {
  struct stat st {};
  int stat_errno = 0;
  int open_errno = 0;  // openat of a regular file, readlinkat of a symlink
  std::string link_target;
  XattrList xattrs;
  std::exception_ptr xattr_error;
};

void gather(int dirfd, const std::string& name, EntryFacts& f) noexcept {
  if (::fstatat(dirfd, name.c_str(), &f.st, AT_SYMLINK_NOFOLLOW) != 0) {
    f.stat_errno = errno;
    return;
  }
  try {
    if (S_ISDIR(f.st.st_mode)) return;  // opened and read by the walk itself
    if (S_ISREG(f.st.st_mode)) {
      // Opened now so that an unreadable file stops the build before any work is done.
      int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) {
        f.open_errno = errno;
        return;
      }
      Fd file(fd);
      f.xattrs = read_xattrs(XattrSource::open_file(fd));
      return;
    }
    if (S_ISLNK(f.st.st_mode)) {
      f.link_target.assign(size_t(f.st.st_size) + 1, '\0');
      ssize_t n = ::readlinkat(dirfd, name.c_str(), f.link_target.data(), f.link_target.size());
      if (n < 0) {
        f.open_errno = errno;
        return;
      }
      f.link_target.resize(size_t(n));
    }
    f.xattrs = read_xattrs(XattrSource::unfollowed(fd_path(dirfd, name)));
  } catch (...) {
    f.xattr_error = std::current_exception();
  }
}

// Enough threads to overlap the system calls of a scan; more only contend in the kernel.
unsigned scan_helpers() { return std::min(3u, std::max(1u, std::thread::hardware_concurrency()) - 1); }

class Scanner {
 public:
  Scanner(const SourceOptions& o, const std::function<void(const std::string&)>& warn)
      : opt_(o), warn_(warn), exclusions_(o), pool_(scan_helpers()) {}

  ScanResult run(const std::string& root) {
    int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOTDIR) throw BuildError("source " + root + " is not a directory");
      throw BuildError(errno_message("cannot open source directory " + root, errno));
    }
    Fd dir(fd);
    struct stat st;
    if (::fstat(fd, &st) != 0) throw BuildError(errno_message("cannot stat " + root, errno));
    ScanResult result;
    tree_ = &result.tree;
    TreeInode* ino = tree_->add(make_inode(st));
    ino->xattrs = read_xattrs(XattrSource::open_file(fd));
    tree_->root = ino;
    walk(fd, SourceDir::root(root), "", ino, list(fd, root));
    tree_->finish();
    result.skipped = skipped_;
    return result;
  }

 private:
  std::unique_ptr<TreeInode> make_inode(const struct stat& st) {
    auto ino = std::make_unique<TreeInode>();
    ino->mode = st.st_mode;
    ino->uid = st.st_uid;
    ino->gid = st.st_gid;
    apply_owner_overrides(opt_, *ino);
    ino->mtime = st.st_mtim.tv_sec;
    ino->mtime_nsec = uint32_t(st.st_mtim.tv_nsec);
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      ino->rdev_major = major(st.st_rdev);
      ino->rdev_minor = minor(st.st_rdev);
    }
    return ino;
  }

  void skip_or_throw(const std::string& message) {
    if (!opt_.ignore_unreadable) throw BuildError(message);
    ++skipped_;
    if (warn_) warn_(message + " (skipped)");
  }

  std::vector<std::string> list(int dirfd, const std::string& path) {
    int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw BuildError(errno_message("cannot read directory " + path, errno));
    DIR* d = ::fdopendir(fd);
    if (!d) {
      ::close(fd);
      throw BuildError(errno_message("cannot read directory " + path, errno));
    }
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
      errno = 0;
    }
    int err = errno;
    ::closedir(d);
    if (err) throw BuildError(errno_message("cannot read directory " + path, err));
    std::sort(names.begin(), names.end());
    return names;
  }

  void walk(int dirfd, const std::shared_ptr<const SourceDir>& source, const std::string& rel, TreeInode* dir,
            const std::vector<std::string>& all_names) {
    const std::string path = source->path();
    std::vector<const std::string*> names;
    std::vector<std::string> rels;
    for (auto& name : all_names) {
      std::string child_rel = rel.empty() ? name : rel + "/" + name;
      if (exclusions_.excluded(child_rel)) continue;
      names.push_back(&name);
      rels.push_back(std::move(child_rel));
    }
    std::vector<EntryFacts> facts(names.size());
    pool_.run(names.size(), [&](size_t i) { gather(dirfd, *names[i], facts[i]); });

    for (size_t i = 0; i < names.size(); ++i) {
      const std::string& name = *names[i];
      std::string child_path = path + "/" + name;
      EntryFacts& f = facts[i];
      const struct stat& st = f.st;
      if (f.stat_errno) {
        skip_or_throw(errno_message("cannot stat " + child_path, f.stat_errno));
        continue;
      }
      if (name.size() > 255) throw BuildError("name too long: " + child_path);
      TreeInode* ino = nullptr;
      if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
        auto it = hardlinks_.find({st.st_dev, st.st_ino});
        if (it != hardlinks_.end()) ino = it->second;
      }
      if (ino) {
        dir->children.push_back({name, ino});
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
          skip_or_throw(errno_message("cannot open directory " + child_path, errno));
          continue;
        }
        Fd child(fd);
        std::vector<std::string> child_names;
        try {
          child_names = list(fd, child_path);
        } catch (const BuildError& e) {
          skip_or_throw(e.what());
          continue;
        }
        ino = tree_->add(make_inode(st));
        ino->xattrs = read_xattrs(XattrSource::open_file(fd));
        dir->children.push_back({name, ino});
        walk(fd, SourceDir::child(source, name), rels[i], ino, child_names);
        continue;
      }
      auto owned = make_inode(st);
      if (S_ISREG(st.st_mode)) {
        if (f.open_errno) {
          skip_or_throw(errno_message("cannot read " + child_path, f.open_errno));
          continue;
        }
        owned->size = uint64_t(st.st_size);
        owned->content = FileContent::in_directory(source, name);
        owned->image_path = rels[i];
      } else if (S_ISLNK(st.st_mode)) {
        if (f.open_errno) {
          skip_or_throw(errno_message("cannot read link " + child_path, f.open_errno));
          continue;
        }
        if (f.link_target.size() > 4095) throw BuildError("symlink target longer than 4095 bytes: " + child_path);
        owned->symlink_target = std::move(f.link_target);
        owned->size = owned->symlink_target.size();
      }
      if (f.xattr_error) std::rethrow_exception(f.xattr_error);
      owned->xattrs = std::move(f.xattrs);
      ino = tree_->add(std::move(owned));
      if (st.st_nlink > 1) hardlinks_[{st.st_dev, st.st_ino}] = ino;
      dir->children.push_back({name, ino});
    }
  }

  const SourceOptions& opt_;
  const std::function<void(const std::string&)>& warn_;
  Exclusions exclusions_;
  std::map<std::pair<dev_t, ino_t>, TreeInode*> hardlinks_;
  Tree* tree_ = nullptr;
  uint64_t skipped_ = 0;
  util::ParallelFor pool_;
};

}  // namespace

ScanResult scan_directory(const std::string& root, const SourceOptions& options,
                          const std::function<void(const std::string&)>& warn) {
  return Scanner(options, warn).run(root);
}

}  // namespace erofs::writer
