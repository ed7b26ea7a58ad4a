#include "reader/block_owners.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

namespace erofs::reader {
namespace {

class OwnerMap {
 public:
  OwnerMap(const Image& image, std::span<const uint64_t> blocks, uint64_t block_size, size_t max_paths)
      : image_(image), blocks_(blocks), block_size_(block_size), max_paths_(max_paths) {}

  std::map<uint64_t, BlockOwners> run() {
    std::set<uint64_t> seen = {image_.root_nid()};
    std::vector<std::pair<Inode, std::string>> dirs;
    try {
      dirs.emplace_back(image_.inode(image_.root_nid()), "");
    } catch (const std::exception&) {
      return {};  // no root, no files
    }
    while (!dirs.empty()) {
      auto [dir, path] = std::move(dirs.back());
      dirs.pop_back();
      std::vector<DirEntry> entries;
      try {
        image_.read_dir(dir, [&](const DirEntry& e) {
          if (e.name != "." && e.name != ".." && seen.insert(e.nid).second) entries.push_back(e);
          return true;
        });
      } catch (const std::exception&) {
        // Entries read before the damage still count.
      }
      // Depth first in name order: the directories pushed last are walked first.
      for (auto e = entries.rbegin(); e != entries.rend(); ++e) {
        try {
          Inode ino = image_.inode(e->nid);
          if (ino.is_dir()) dirs.emplace_back(std::move(ino), path + "/" + e->name);
          else if (ino.is_reg()) add_file(ino, path + "/" + e->name);
        } catch (const std::exception&) {
          // A damaged inode or mapping: fsck names it.
        }
      }
    }
    return std::move(owners_);
  }

 private:
  void add_file(const Inode& file, const std::string& path) {
    std::set<uint64_t> hit;  // of the blocks asked about, those this file's bytes lie in
    for (const Extent& e : image_.extents(file)) {
      switch (e.kind) {
        case Extent::Kind::Hole: break;
        case Extent::Kind::Plain:
        case Extent::Kind::Compressed: add_range(e.physical, e.physical_length, hit); break;
        case Extent::Kind::Inline:
          if (!file.in_metabox()) add_range(e.physical, e.physical_length, hit);
          break;
        case Extent::Kind::Fragment: add_fragment(e, hit); break;
      }
    }
    for (uint64_t b : hit) {
      BlockOwners& o = owners_[b];
      ++o.files;
      if (o.paths.size() < max_paths_) o.paths.push_back(path);
    }
  }

  // The packed inode's extents that store bytes [physical, physical + length) of its data.
  void add_fragment(const Extent& fragment, std::set<uint64_t>& hit) {
    if (!packed_) packed_ = image_.extents(image_.inode(image_.superblock().packed_nid));
    for (const Extent& e : *packed_)
      if (e.kind != Extent::Kind::Hole && e.offset < fragment.physical + fragment.length &&
          fragment.physical < e.offset + e.length)
        add_range(e.physical, e.physical_length, hit);
  }

  void add_range(uint64_t begin, uint64_t length, std::set<uint64_t>& hit) {
    uint64_t end = 0;  // the last byte; a hostile extent may claim one past 2^64
    if (length == 0 || __builtin_add_overflow(begin, length - 1, &end)) return;
    const uint64_t first = begin / block_size_, last = end / block_size_;
    for (auto b = std::lower_bound(blocks_.begin(), blocks_.end(), first); b != blocks_.end() && *b <= last; ++b)
      hit.insert(*b);
  }

  const Image& image_;
  std::span<const uint64_t> blocks_;
  uint64_t block_size_;
  size_t max_paths_;
  std::optional<std::vector<Extent>> packed_;
  std::map<uint64_t, BlockOwners> owners_;
};

}  // namespace

std::map<uint64_t, BlockOwners> block_owners(const Image& image, std::span<const uint64_t> blocks,
                                             uint64_t block_size, size_t max_paths) {
  return OwnerMap(image, blocks, block_size, max_paths).run();
}

}  // namespace erofs::reader
