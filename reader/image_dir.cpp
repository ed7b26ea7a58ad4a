// Directory iteration and lookup over validated directory blocks.
#include <cerrno>

#include <fmt/format.h>

#include "format/constants.h"
#include "reader/checked.h"
#include "reader/dir_block.h"
#include "reader/image_impl.h"

namespace erofs::reader {

namespace {

void require_dir(const Inode& dir) {
  if (!dir.is_dir()) throw IoError(fmt::format("nid {}: not a directory", dir.nid), ENOTDIR);
}

}  // namespace

std::span<const uint8_t> ImageImpl::dir_block(const Inode& dir, uint64_t index, std::vector<uint8_t>& storage) const {
  const uint64_t start = index << sb_.blkszbits;
  storage.resize(size_t(std::min<uint64_t>(blksz_, dir.size - start)));
  if (read(dir, start, storage) != storage.size())
    throw CorruptError(fmt::format("nid {}: short read of directory block {}", dir.nid, index));
  return storage;
}

void ImageImpl::read_dir(const Inode& dir, const std::function<bool(const DirEntry&)>& fn) const {
  require_dir(dir);
  const uint64_t blocks = checked::div_round_up(dir.size, blksz_);
  std::vector<uint8_t> storage;
  std::string previous;  // last name of the previous block: the order runs across blocks
  for (uint64_t b = 0; b < blocks; ++b) {
    const auto entries = parse_dir_block(dir_block(dir, b, storage), dir.nid, b);
    if (b > 0 && compare_names(previous, entries.front().name) >= 0)
      throw CorruptError(fmt::format("nid {}: directory block {} does not sort after block {}", dir.nid, b, b - 1));
    for (const auto& e : entries) {
      if (e.name == "." && e.nid != dir.nid)
        throw CorruptError(fmt::format("nid {}: '.' points to nid {}", dir.nid, e.nid));
      if (!fn(DirEntry{std::string(e.name), e.nid, e.file_type})) return;
    }
    previous.assign(entries.back().name);
  }
}

std::optional<DirEntry> ImageImpl::lookup(const Inode& dir, std::string_view name) const {
  require_dir(dir);
  if (name.empty() || name.size() > format::kNameMax) return std::nullopt;
  std::vector<uint8_t> storage;
  // Binary search for the block whose name range holds `name`, then within the block.
  uint64_t lo = 0, hi = checked::div_round_up(dir.size, blksz_);
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    const auto entries = parse_dir_block(dir_block(dir, mid, storage), dir.nid, mid);
    if (compare_names(name, entries.front().name) < 0) {
      hi = mid;
      continue;
    }
    if (compare_names(name, entries.back().name) > 0) {
      lo = mid + 1;
      continue;
    }
    size_t elo = 0, ehi = entries.size();
    while (elo < ehi) {
      const size_t emid = elo + (ehi - elo) / 2;
      const int c = compare_names(name, entries[emid].name);
      if (c == 0) {
        if (name == "." && entries[emid].nid != dir.nid)
          throw CorruptError(fmt::format("nid {}: '.' points to nid {}", dir.nid, entries[emid].nid));
        return DirEntry{std::string(name), entries[emid].nid, entries[emid].file_type};
      }
      if (c < 0)
        ehi = emid;
      else
        elo = emid + 1;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace erofs::reader
