#include "reader/stats.h"

#include <sys/stat.h>

#include <set>
#include <vector>

#include "format/inode.h"

namespace erofs::reader {
namespace {

const char* type_name(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "regular";
    case S_IFDIR: return "directory";
    case S_IFLNK: return "symlink";
    case S_IFCHR: return "chardev";
    case S_IFBLK: return "blockdev";
    case S_IFIFO: return "fifo";
    case S_IFSOCK: return "socket";
  }
  return "unknown";
}

// Blocks an inode's data occupies outside the inode area: flat layouts count whole blocks (an
// inline tail none), compressed layouts record their block count in i_u, chunk-based files count
// the blocks of their mapped chunks (holes take none).
uint64_t data_blocks(const Image& img, const Inode& ino) {
  const uint32_t bs = img.block_size();
  switch (ino.layout()) {
    case format::Layout::FlatPlain: return ino.startblk == format::kNullAddr ? 0 : (ino.size + bs - 1) / bs;
    case format::Layout::FlatInline: return ino.size / bs;
    case format::Layout::CompressedFull:
    case format::Layout::CompressedCompact: return ino.disk.u | (uint64_t(ino.disk.extended ? ino.disk.nb : 0) << 32);
    case format::Layout::ChunkBased: {
      uint64_t blocks = 0;
      for (const Extent& e : img.extents(ino))
        if (e.kind == Extent::Kind::Plain) blocks += (e.length + bs - 1) / bs;
      return blocks;
    }
  }
  return 0;
}

void count(const Image& img, const Inode& ino, ImageStats& s) {
  ++s.inodes;
  ++s.by_type[type_name(ino.mode)];
  (ino.disk.extended ? s.extended_inodes : s.compact_inodes)++;
  if (ino.is_reg() || ino.is_dir() || ino.is_symlink()) {
    ++s.by_layout[format::layout_name(ino.layout())];
    s.data_blocks += data_blocks(img, ino);
  }
  if (ino.is_reg()) s.file_bytes += ino.size;
}

}  // namespace

ImageStats count_image(const Image& img) {
  ImageStats s;
  // The packed inode (fragments) hangs off the superblock, not the tree; its blocks are file data.
  if (img.superblock().packed_nid != 0) s.data_blocks += data_blocks(img, img.inode(img.superblock().packed_nid));
  std::set<uint64_t> seen = {img.root_nid()};
  std::vector<Inode> dirs = {img.inode(img.root_nid())};
  count(img, dirs.back(), s);
  while (!dirs.empty()) {
    const Inode dir = std::move(dirs.back());
    dirs.pop_back();
    img.read_dir(dir, [&](const DirEntry& e) {
      if (e.name == "." || e.name == ".." || !seen.insert(e.nid).second) return true;
      Inode ino = img.inode(e.nid);
      count(img, ino, s);
      if (ino.is_dir()) dirs.push_back(std::move(ino));
      return true;
    });
  }
  return s;
}

}  // namespace erofs::reader
