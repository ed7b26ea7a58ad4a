// Loading and validating inodes (compact and extended), and the metadata streams they live in.
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "format/endian.h"
#include "format/inode.h"
#include "reader/checked.h"
#include "reader/image_impl.h"

namespace erofs::reader {

namespace {

constexpr uint64_t kMaxDirSize = 1ull << 32;  // far above any real directory, well below overflow

uint32_t file_type_bits(uint32_t mode) { return mode & S_IFMT; }

}  // namespace

bool Inode::is_dir() const { return S_ISDIR(mode); }
bool Inode::is_reg() const { return S_ISREG(mode); }
bool Inode::is_symlink() const { return S_ISLNK(mode); }

uint64_t ImageImpl::meta_size(bool metabox) const {
  if (!metabox) return file_.size();
  if (!metabox_) throw CorruptError("a nid points into the metabox, but the image has none");
  return metabox_->size;
}

void ImageImpl::read_meta(bool metabox, uint64_t pos, std::span<uint8_t> buf) const {
  const uint64_t end = checked::add(pos, buf.size());
  if (end > meta_size(metabox)) {
    if (metabox)
      throw CorruptError(fmt::format("metadata read of {} bytes at {} is beyond the end of the metabox", buf.size(), pos));
    throw CorruptError(fmt::format("read of {} bytes at offset {} is beyond the end of the image ({} bytes)",
                                   buf.size(), pos, file_.size()));
  }
  for (size_t done = 0; done < buf.size();) {
    const uint64_t at = pos + done;
    const auto unit = meta_unit(metabox, at >> kMetaUnitBits);
    const size_t skip = size_t(at & ((1u << kMetaUnitBits) - 1));
    const size_t n = std::min(buf.size() - done, unit->size() - skip);
    std::memcpy(buf.data() + done, unit->data() + skip, n);
    done += n;
  }
}

SharedBytes ImageImpl::meta_bytes(bool metabox, uint64_t pos, size_t length) const {
  const uint64_t first = pos >> kMetaUnitBits;
  if (length > 0 && (checked::add(pos, length) - 1) >> kMetaUnitBits == first &&
      checked::add(pos, length) <= meta_size(metabox)) {
    auto unit = meta_unit(metabox, first);
    const auto bytes = std::span<const uint8_t>(*unit).subspan(size_t(pos - (first << kMetaUnitBits)), length);
    return {std::move(unit), bytes};
  }
  auto copy = std::make_shared<std::vector<uint8_t>>(length);
  read_meta(metabox, pos, *copy);
  return {copy, *copy};
}

MetaCache::Block ImageImpl::meta_unit(bool metabox, uint64_t index) const {
  const uint64_t start = index << kMetaUnitBits;  // callers checked that it lies inside the stream
  const size_t size = size_t(std::min<uint64_t>(1u << kMetaUnitBits, meta_size(metabox) - start));
  return meta_->get(metabox, index, size, [&](std::span<uint8_t> out) {
    if (!metabox) return file_.read(start, out);
    // The metabox inode itself never lives in the metabox (its nid has bit 63 clear), so this
    // recursion ends at the device.
    if (read(*metabox_, start, out) != out.size()) throw CorruptError("short read from the metabox");
  });
}

Inode ImageImpl::inode(uint64_t nid) const {
  using namespace format;
  const bool in_mb = nid & kMetaboxNidBit;
  if (in_mb && !metabox_) throw CorruptError(fmt::format("nid {:#x} points into a metabox, but the image has none", nid));
  const uint64_t slot_pos = checked::shl(nid & ~kMetaboxNidBit, kSlotBits);
  const uint64_t pos = in_mb ? slot_pos : checked::add(meta_base_, slot_pos);
  const uint64_t stream = meta_size(in_mb);
  if (checked::add(pos, kCompactInodeSize) > stream)
    throw CorruptError(fmt::format("nid {}: inode at byte {} is outside the image", nid, pos));

  uint8_t raw[kExtendedInodeSize];
  read_meta(in_mb, pos, std::span(raw, kCompactInodeSize));
  const uint16_t fmt_field = get_le16(raw);
  if (fmt_field & ~kInodeFormatAllBits)
    throw UnsupportedError(fmt::format("nid {}: unsupported i_format 0x{:x}", nid, fmt_field));
  if (DiskInode::is_extended(fmt_field)) {
    if (pos + kExtendedInodeSize > stream)
      throw CorruptError(fmt::format("nid {}: extended inode at byte {} runs past the image", nid, pos));
    read_meta(in_mb, pos + kCompactInodeSize, std::span(raw + kCompactInodeSize, kCompactInodeSize));
  }

  Inode ino;
  ino.nid = nid;
  ino.pos = pos;
  ino.disk = DiskInode::decode(raw);
  const DiskInode& d = ino.disk;
  if (uint8_t(d.layout) > uint8_t(Layout::ChunkBased))
    throw UnsupportedError(fmt::format("nid {}: unsupported data layout {}", nid, int(d.layout)));
  ino.xattr_size = xattr_ibody_size(d.xattr_icount);
  if (ino.meta_end() > stream)
    throw CorruptError(fmt::format("nid {}: xattr area of {} bytes runs past the image", nid, ino.xattr_size));

  ino.mode = d.mode;
  ino.uid = d.uid;
  ino.gid = d.gid;
  const bool dir = S_ISDIR(d.mode);
  // Compact inodes keep 48-bit addresses only with NLINK_1 (then nlink is 1); the kernel treats
  // a NULL address with the width the inode can express.
  bool wide_addr = true;
  uint16_t addr_hi = d.nb;
  if (d.extended) {
    if (int64_t(d.size) < 0) throw CorruptError(fmt::format("nid {}: negative size", nid));
    ino.size = d.size;
    ino.nlink = d.nlink;
    ino.mtime = d.mtime;
    ino.mtime_nsec = d.mtime_nsec;
  } else {
    ino.size = d.size;
    if (!dir && d.flag) {
      ino.nlink = 1;
    } else {
      ino.nlink = d.nb;
      addr_hi = 0;
      wide_addr = false;
    }
    if (__builtin_add_overflow(sb_.epoch, int64_t(uint32_t(d.mtime)), &ino.mtime))
      throw CorruptError(fmt::format("nid {}: mtime overflows", nid));
    ino.mtime_nsec = sb_.fixed_nsec;
  }

  switch (file_type_bits(d.mode)) {
    case S_IFREG:
    case S_IFDIR:
    case S_IFLNK:
      if (d.layout == Layout::FlatPlain || d.layout == Layout::FlatInline) {
        const uint64_t raw_addr = d.u | (uint64_t(addr_hi) << 32);
        const uint64_t mask = wide_addr ? (1ull << 48) - 1 : (1ull << 32) - 1;
        const bool null_addr = d.layout == Layout::FlatPlain && ((raw_addr ^ ~0ull) & mask) == 0;
        ino.startblk = null_addr ? kNullAddr : raw_addr;
      }
      break;
    case S_IFCHR:
    case S_IFBLK:
      decode_rdev(d.u, ino.rdev_major, ino.rdev_minor);
      [[fallthrough]];
    case S_IFIFO:
    case S_IFSOCK:
      if (d.layout != Layout::FlatPlain && d.layout != Layout::FlatInline)
        throw CorruptError(fmt::format("nid {}: special file with data layout {}", nid, int(d.layout)));
      if (ino.size != 0) throw CorruptError(fmt::format("nid {}: special file with size {}", nid, ino.size));
      return ino;
    default:
      throw CorruptError(fmt::format("nid {}: bogus mode 0{:o}", nid, d.mode));
  }

  if (ino.is_symlink() && (ino.size == 0 || ino.size > kSymlinkMax))
    throw CorruptError(fmt::format("nid {}: symlink of {} bytes", nid, ino.size));
  if (dir && (ino.size == 0 || ino.size > kMaxDirSize))
    throw CorruptError(fmt::format("nid {}: directory of {} bytes", nid, ino.size));

  if (d.layout == Layout::FlatPlain || d.layout == Layout::FlatInline)
    check_flat_extent(ino);
  else if (d.layout == Layout::ChunkBased)
    check_chunk_table(ino);
  return ino;
}

// Flat data must lie inside the image, and an inline tail inside one block of its metadata stream.
void ImageImpl::check_flat_extent(const Inode& ino) const {
  if (ino.size == 0) return;
  const uint64_t blocks = checked::div_round_up(ino.size, blksz_);
  const bool inline_tail = ino.layout() == format::Layout::FlatInline;
  const uint64_t device_blocks = blocks - (inline_tail ? 1 : 0);
  // Only FLAT_PLAIN knows the NULL address, and only 48-bit images use it for a file without
  // blocks; elsewhere Linux reads the address as it is (and fails), so it is checked like any other.
  const bool hole = !inline_tail && ino.startblk == format::kNullAddr && sb_.has_incompat(format::kIncompat48Bit);
  if (device_blocks > 0 && !hole && devices_.empty()) {
    uint64_t end = checked::shl(checked::add(ino.startblk, device_blocks), sb_.blkszbits);
    if (end > file_.size())
      throw CorruptError(fmt::format("nid {}: data blocks {}+{} are outside the image", ino.nid, ino.startblk,
                                     device_blocks));
  }
  if (!inline_tail) return;
  const uint64_t tail = ino.size - (device_blocks << sb_.blkszbits);
  const uint64_t start = ino.meta_end();
  if ((start & (blksz_ - 1)) + tail > blksz_)
    throw CorruptError(fmt::format("nid {}: inline data of {} bytes crosses a block boundary", ino.nid, tail));
  if (checked::add(start, tail) > meta_size(ino.in_metabox()))
    throw CorruptError(fmt::format("nid {}: inline data runs past the image", ino.nid));
}

void ImageImpl::check_chunk_table(const Inode& ino) const {
  const uint16_t chunk_format = uint16_t(ino.disk.u);
  if (chunk_format & ~format::kChunkFormatAll)
    throw UnsupportedError(fmt::format("nid {}: unsupported chunk format 0x{:x}", ino.nid, chunk_format));
  const unsigned chunk_bits = sb_.blkszbits + (chunk_format & format::kChunkFormatBlkbitsMask);
  const uint64_t chunks = (ino.size >> chunk_bits) + ((ino.size & ((1ull << chunk_bits) - 1)) != 0);
  const uint64_t unit = (chunk_format & format::kChunkFormatIndexes) ? 8 : 4;
  const uint64_t end = checked::add(checked::round_up(ino.meta_end(), unit), checked::mul(chunks, unit));
  if (end > meta_size(ino.in_metabox()))
    throw CorruptError(fmt::format("nid {}: chunk table of {} entries runs past the image", ino.nid, chunks));
}

}  // namespace erofs::reader
