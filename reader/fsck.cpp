#include "reader/fsck.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>

#include <fmt/format.h>

#include "format/constants.h"
#include "format/dirent.h"
#include "reader/image.h"

namespace erofs::reader {
namespace {

class Checker {
 public:
  Checker(const Image& img, const FsckOptions& o, FsckReport& r) : img_(img), opt_(o), report_(r) {}

  void run() {
    uint64_t root = img_.root_nid();
    std::optional<Inode> ino = load(root, "/");
    if (!ino) return;
    if (!ino->is_dir()) {
      problem("/", "root inode is not a directory");
      return;
    }
    check_dir(*ino, root, "/");
    for (auto& [nid, seen] : links_) {
      if (seen.is_dir) continue;
      if (seen.nlink != seen.dentries)
        problem(seen.path, fmt::format("nlink is {} but {} directory entries name it", seen.nlink, seen.dentries));
    }
  }

 private:
  struct Seen {
    std::string path;
    uint32_t nlink = 0;
    uint32_t dentries = 0;
    bool is_dir = false;
  };

  void problem(const std::string& path, const std::string& what) {
    if (report_.problems.size() < opt_.max_problems) report_.problems.push_back(path + ": " + what);
  }

  // Inodes named by several dentries are checked once.
  std::optional<Inode> load(uint64_t nid, const std::string& path) {
    try {
      Inode ino = img_.inode(nid);
      if (ino.is_dir() || !links_.count(nid)) {
        ++report_.inodes;
        check_inode(ino, path);
      }
      return ino;
    } catch (const std::exception& e) {
      problem(path, fmt::format("inode {}: {}", nid, e.what()));
      return std::nullopt;
    }
  }

  void check_inode(const Inode& ino, const std::string& path) {
    try {
      img_.xattrs(ino);
      if (ino.is_symlink()) img_.readlink(ino);
      if (ino.is_reg()) {
        ++report_.files;
        if (opt_.check_data) read_all(ino);
      }
    } catch (const std::exception& e) {
      problem(path, e.what());
    }
  }

  // Holes are mapped but not read: a hostile image may declare exabytes of them. Compressed data is
  // read one block at a time, each offset mapped on its own as a reader at a random offset (or the
  // kernel) maps it, so that every lcluster index is followed, not only those of the extent heads.
  void read_all(const Inode& ino) {
    std::vector<uint8_t> buf(1 << 20);
    const uint64_t step = format::is_compressed(ino.layout()) ? img_.block_size() : buf.size();
    for (const Extent& ext : img_.extents(ino)) {
      if (ext.kind == Extent::Kind::Hole) {
        report_.data_bytes += ext.length;
        continue;
      }
      const uint64_t end = ext.offset + ext.length;
      for (uint64_t off = ext.offset; off < end;) {
        const size_t want = size_t(std::min(step - off % step, end - off));
        size_t n = img_.read(ino, off, std::span(buf).first(want));
        if (n == 0) throw std::runtime_error(fmt::format("data ends at {} of {} bytes", off, ino.size));
        off += n;
        report_.data_bytes += n;
      }
    }
  }

  void check_dir(const Inode& dir, uint64_t parent, const std::string& path) {
    ++report_.directories;
    if (!active_.insert(dir.nid).second) {
      problem(path, "directory loop: it contains one of its ancestors");
      return;
    }
    if (!dirs_done_.insert(dir.nid).second) {
      problem(path, "directory is linked from more than one place");
      active_.erase(dir.nid);
      return;
    }
    std::vector<DirEntry> entries;
    try {
      img_.read_dir(dir, [&](const DirEntry& e) {
        entries.push_back(e);
        return true;
      });
    } catch (const std::exception& e) {
      problem(path, e.what());
    }
    bool dot = false, dotdot = false;
    uint32_t subdirs = 0;
    for (auto& e : entries) {
      if (e.name == ".") {
        dot = true;
        if (e.nid != dir.nid) problem(path, fmt::format("'.' points to inode {} instead of {}", e.nid, dir.nid));
        continue;
      }
      if (e.name == "..") {
        dotdot = true;
        if (e.nid != parent) problem(path, fmt::format("'..' points to inode {} instead of {}", e.nid, parent));
        continue;
      }
      std::string child = path == "/" ? "/" + e.name : path + "/" + e.name;
      std::optional<Inode> ino = load(e.nid, child);
      if (!ino) continue;
      if (format::file_type_of_mode(ino->mode) != format::FileType(e.file_type))
        problem(child, fmt::format("directory entry type {} does not match the inode's mode {:o}", e.file_type, ino->mode));
      if (ino->is_dir()) {
        ++subdirs;
        check_dir(*ino, dir.nid, child);
        continue;
      }
      auto [it, fresh] = links_.try_emplace(e.nid);
      if (fresh) it->second = Seen{child, ino->nlink, 0, false};
      ++it->second.dentries;
    }
    bool dot_omitted = dir.disk.flag;
    if (!dot && !dot_omitted) problem(path, "no '.' entry");
    if (!dotdot) problem(path, "no '..' entry");
    if (dir.nlink != 2 + subdirs && dir.nlink != 1)
      problem(path, fmt::format("nlink is {} but the directory has {} subdirectories", dir.nlink, subdirs));
    active_.erase(dir.nid);
  }

  const Image& img_;
  const FsckOptions& opt_;
  FsckReport& report_;
  std::set<uint64_t> active_, dirs_done_;
  std::map<uint64_t, Seen> links_;
};

}  // namespace

FsckReport fsck_image(const std::string& path, const FsckOptions& options) {
  FsckReport report;
  std::unique_ptr<Image> img;
  try {
    img = Image::open(path);
  } catch (const CorruptError& e) {
    report.problems.push_back(e.what());
    return report;
  }
  Checker(*img, options, report).run();
  return report;
}

}  // namespace erofs::reader
