#include "lib/verify.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "reader/image.h"
#include "writer/errors.h"
#include "writer/source/file_content.h"

namespace erofs::lib {
namespace {

class Verifier {
 public:
  Verifier(const reader::Image& img, const VerifyOptions& o) : img_(img), opt_(o) {}

  void run(const writer::Tree& tree) {
    walk(tree.root, img_.inode(img_.root_nid()), "/");
  }
  std::vector<std::string> problems;

 private:
  bool full() const { return problems.size() >= opt_.max_problems; }

  void problem(const std::string& path, const std::string& what) {
    if (!full()) problems.push_back(path + ": " + what);
  }

  void walk(const writer::TreeInode* src, const reader::Inode& got, const std::string& path) {
    if (full()) return;
    compare(src, got, path);
    if (!src->is_dir() || !got.is_dir()) return;
    size_t count = 0;
    img_.read_dir(got, [&](const reader::DirEntry& e) {
      if (e.name != "." && e.name != "..") ++count;
      return true;
    });
    if (count != src->children.size())
      problem(path, fmt::format("{} entries in the image, {} in the source", count, src->children.size()));
    for (auto& d : src->children) {
      std::string child = path == "/" ? "/" + d.name : path + "/" + d.name;
      auto e = img_.lookup(got, d.name);
      if (!e) {
        problem(child, "missing from the image");
        continue;
      }
      auto [it, fresh] = nids_.try_emplace(d.inode, e->nid);
      if (!fresh && it->second != e->nid) problem(child, "hard link not preserved");
      if (fresh || d.inode->is_dir()) walk(d.inode, img_.inode(e->nid), child);
    }
  }

  void compare(const writer::TreeInode* s, const reader::Inode& g, const std::string& path) {
    if (s->mode != g.mode) problem(path, fmt::format("mode {:o} != {:o}", g.mode, s->mode));
    if (s->uid != g.uid || s->gid != g.gid)
      problem(path, fmt::format("owner {}:{} != {}:{}", g.uid, g.gid, s->uid, s->gid));
    if (opt_.check_mtime && (s->mtime != g.mtime || s->mtime_nsec != g.mtime_nsec))
      problem(path, fmt::format("mtime {}.{:09} != {}.{:09}", g.mtime, g.mtime_nsec, s->mtime, s->mtime_nsec));
    if (s->nlink != g.nlink) problem(path, fmt::format("nlink {} != {}", g.nlink, s->nlink));
    if ((S_ISCHR(s->mode) || S_ISBLK(s->mode)) && (s->rdev_major != g.rdev_major || s->rdev_minor != g.rdev_minor))
      problem(path, "device number differs");
    if (s->is_symlink() && img_.readlink(g) != s->symlink_target) problem(path, "symlink target differs");
    auto xattrs = img_.xattrs(g);
    std::map<std::string, std::string> got, want;
    for (auto& x : xattrs) got[x.name] = x.value;
    for (auto& [n, v] : s->xattrs) want[n] = v;
    if (got != want) problem(path, "xattrs differ");
    if (s->is_reg()) compare_content(s, g, path);
  }

  void compare_content(const writer::TreeInode* s, const reader::Inode& g, const std::string& path) {
    if (s->size != g.size) {
      problem(path, fmt::format("size {} != {}", g.size, s->size));
      return;
    }
    try {
      const writer::ContentReader in = opener_.open(s->content, s->size);
      std::vector<uint8_t> a(1 << 20), b(1 << 20);
      for (uint64_t off = 0; off < s->size;) {
        const size_t n = size_t(std::min<uint64_t>(a.size(), s->size - off));
        in.read(off, std::span(a).first(n));
        if (img_.read(g, off, {b.data(), n}) != n || std::memcmp(a.data(), b.data(), n) != 0) {
          problem(path, fmt::format("content differs near offset {}", off));
          return;
        }
        off += n;
      }
    } catch (const writer::BuildError& e) {
      problem(path, fmt::format("cannot read the source: {}", e.what()));
    }
  }

  const reader::Image& img_;
  const VerifyOptions& opt_;
  std::map<const writer::TreeInode*, uint64_t> nids_;
  writer::ContentOpener opener_;
};

}  // namespace

std::vector<std::string> verify_image(const writer::Tree& tree, const std::string& image_path, const VerifyOptions& options) {
  auto img = reader::Image::open(image_path);
  Verifier v(*img, options);
  try {
    v.run(tree);
  } catch (const std::exception& e) {
    v.problems.push_back(std::string("reading the image back failed: ") + e.what());
  }
  return v.problems;
}

}  // namespace erofs::lib
