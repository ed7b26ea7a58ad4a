// Directory iteration and lookup over validated directory blocks.
#include <algorithm>
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

SharedBytes ImageImpl::dir_block(const Inode& dir, uint64_t index) const {
  const uint64_t start = index << sb_.blkszbits;
  const size_t size = size_t(std::min<uint64_t>(blksz_, dir.size - start));
  // Flat directories are metadata stored as it is: their blocks come from the metadata cache
  // (inode() checked that the blocks and the inline tail lie inside the image).
  if (dir.layout() == format::Layout::FlatPlain || dir.layout() == format::Layout::FlatInline) {
    const uint64_t device_bytes = flat_device_bytes(dir);
    if (start >= device_bytes) return meta_bytes(dir.in_metabox(), checked::add(dir.meta_end(), start - device_bytes), size);
    if (dir.startblk != format::kNullAddr) {
      const uint64_t addr = checked::add(checked::shl(dir.startblk, sb_.blkszbits), start);
      check_primary_device(addr, checked::add(addr, size));
      return meta_bytes(false, addr, size);
    }
  }
  auto storage = std::make_shared<std::vector<uint8_t>>(size);
  if (read(dir, start, *storage) != storage->size())
    throw CorruptError(fmt::format("nid {}: short read of directory block {}", dir.nid, index));
  return {storage, *storage};
}

void ImageImpl::read_dir(const Inode& dir, const std::function<bool(const DirEntry&)>& fn) const {
  read_dir_at(dir, 0, [&](const DirEntry& e, uint64_t) { return fn(e); });
}

// A position is a block number and the index of an entry in it: (block << 16) | index. A block
// holds at most blksz / 12 entries.
void ImageImpl::read_dir_at(const Inode& dir, uint64_t position,
                            const std::function<bool(const DirEntry&, uint64_t next)>& fn) const {
  require_dir(dir);
  const uint64_t blocks = checked::div_round_up(dir.size, blksz_);
  std::string previous;  // last name of the previous block: the order runs across blocks
  for (uint64_t b = position >> 16; b < blocks; ++b) {
    const SharedBytes block = dir_block(dir, b);
    const auto entries = parse_dir_block(block.bytes, dir.nid, b);
    if (!previous.empty() && compare_names(previous, entries.front().name) >= 0)
      throw CorruptError(fmt::format("nid {}: directory block {} does not sort after block {}", dir.nid, b, b - 1));
    const size_t first = b == position >> 16 ? size_t(position & 0xffff) : 0;
    for (size_t i = first; i < entries.size(); ++i) {
      const auto& e = entries[i];
      if (e.name == "." && e.nid != dir.nid)
        throw CorruptError(fmt::format("nid {}: '.' points to nid {}", dir.nid, e.nid));
      const uint64_t next = i + 1 < entries.size() ? (b << 16) | (i + 1) : (b + 1) << 16;
      if (!fn(DirEntry{std::string(e.name), e.nid, e.file_type}, next)) return;
    }
    previous.assign(entries.back().name);
  }
}

std::optional<DirEntry> ImageImpl::lookup(const Inode& dir, std::string_view name) const {
  require_dir(dir);
  if (name.empty() || name.size() > format::kNameMax) return std::nullopt;
  // Binary search for the block whose name range holds `name`, then within the block.
  uint64_t lo = 0, hi = checked::div_round_up(dir.size, blksz_);
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    const SharedBytes block = dir_block(dir, mid);
    const auto entries = parse_dir_block(block.bytes, dir.nid, mid);
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
