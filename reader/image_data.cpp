// File data of the uncompressed layouts (FLAT_PLAIN, FLAT_INLINE, CHUNK_BASED) and the dispatch
// to the compressed reader.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "format/constants.h"
#include "format/endian.h"
#include "format/zmap.h"
#include "reader/checked.h"
#include "reader/image_impl.h"

namespace erofs::reader {

size_t ImageImpl::read(const Inode& file, uint64_t offset, std::span<uint8_t> buf) const {
  if (offset >= file.size || buf.empty()) return 0;
  buf = buf.first(size_t(std::min<uint64_t>(buf.size(), file.size - offset)));
  switch (file.layout()) {
    case format::Layout::FlatPlain:
    case format::Layout::FlatInline:
      return read_flat(file, offset, buf);
    case format::Layout::ChunkBased:
      return read_chunked(file, offset, buf);
    case format::Layout::CompressedFull:
    case format::Layout::CompressedCompact:
      return read_compressed(file, offset, buf);
  }
  throw CorruptError(fmt::format("nid {}: unknown data layout", file.nid));
}

void ImageImpl::check_primary_device(uint64_t addr, uint64_t end) const {
  for (size_t i = 0; i < devices_.size(); ++i) {
    const auto& dev = devices_[i];
    if (dev.uniaddr == 0) continue;
    const uint64_t dev_start = checked::shl(dev.uniaddr, sb_.blkszbits);
    const uint64_t dev_end = checked::add(dev_start, checked::shl(dev.blocks, sb_.blkszbits));
    if (addr < dev_end && end > dev_start)
      throw UnsupportedError(fmt::format("data at byte {} lies on extra device {}; extra devices are not supported",
                                         addr, i + 1));
  }
}

void ImageImpl::read_device(uint64_t addr, std::span<uint8_t> buf) const {
  check_primary_device(addr, checked::add(addr, buf.size()));
  file_.read(addr, buf);
}

uint64_t ImageImpl::flat_device_bytes(const Inode& ino) const {
  const uint64_t blocks = checked::div_round_up(ino.size, blksz_);
  const bool inline_tail = ino.layout() == format::Layout::FlatInline;
  return std::min<uint64_t>(ino.size, (blocks - (inline_tail ? 1 : 0)) << sb_.blkszbits);
}

std::optional<Image::StoredRun> ImageImpl::stored_run(const Inode& ino, uint64_t offset) const {
  if (offset >= ino.size) return std::nullopt;
  StoredRun run;
  switch (ino.layout()) {
    case format::Layout::FlatPlain:
    case format::Layout::FlatInline: {
      const uint64_t device_bytes = flat_device_bytes(ino);
      if (offset >= device_bytes || ino.startblk == format::kNullAddr) return std::nullopt;
      run = {checked::add(checked::shl(ino.startblk, sb_.blkszbits), offset), device_bytes - offset};
      break;
    }
    case format::Layout::ChunkBased: {
      const unsigned bits = chunk_bits(ino);
      const uint64_t chunk = offset >> bits, in_chunk = offset - (chunk << bits);
      auto start = chunk_start(ino, chunk);
      if (!start) return std::nullopt;
      run = {checked::add(checked::shl(*start, sb_.blkszbits), in_chunk),
             std::min<uint64_t>((1ull << bits) - in_chunk, ino.size - offset)};
      break;
    }
    default:
      return std::nullopt;
  }
  const uint64_t end = checked::add(run.position, run.length);
  check_primary_device(run.position, end);
  if (end > file_.size())
    throw CorruptError(fmt::format("nid {}: data at byte {} lies past the end of the image", ino.nid, run.position));
  return run;
}

// `offset` and `buf` are already clamped to the file size by read().
size_t ImageImpl::read_flat(const Inode& ino, uint64_t offset, std::span<uint8_t> buf) const {
  const bool inline_tail = ino.layout() == format::Layout::FlatInline;
  const uint64_t device_bytes = flat_device_bytes(ino);
  size_t done = 0;
  if (offset < device_bytes) {
    const size_t n = size_t(std::min<uint64_t>(buf.size(), device_bytes - offset));
    if (!inline_tail && ino.startblk == format::kNullAddr)
      std::memset(buf.data(), 0, n);  // FLAT_PLAIN without blocks: a hole reading as zeros
    else
      read_device(checked::add(checked::shl(ino.startblk, sb_.blkszbits), offset), buf.first(n));
    done = n;
  }
  if (done < buf.size()) {
    // inode() checked that the tail sits inside one block of the metadata stream.
    const uint64_t tail_pos = checked::add(ino.meta_end(), offset + done - device_bytes);
    read_meta(ino.in_metabox(), tail_pos, buf.subspan(done));
    done = buf.size();
  }
  return done;
}

unsigned ImageImpl::chunk_bits(const Inode& ino) const {
  return sb_.blkszbits + (uint16_t(ino.disk.u) & format::kChunkFormatBlkbitsMask);
}

std::optional<uint64_t> ImageImpl::chunk_start(const Inode& ino, uint64_t chunk) const {
  const uint16_t chunk_format = uint16_t(ino.disk.u);
  const bool indexes = chunk_format & format::kChunkFormatIndexes;
  const uint64_t unit = indexes ? format::kFullIndexSize : 4;
  const uint64_t table = checked::round_up(ino.meta_end(), unit);
  const uint64_t addr_mask = (chunk_format & format::kChunkFormat48Bit) ? (1ull << 48) - 1 : (1ull << 32) - 1;
  uint8_t entry[format::kFullIndexSize];
  read_meta(ino.in_metabox(), table + chunk * unit, std::span(entry, unit));  // in range: inode() checked the table
  if (!indexes) {
    const uint32_t startblk = format::get_le32(entry);
    if (startblk == format::kNullAddr) return std::nullopt;
    return startblk;
  }
  const auto idx = format::ChunkIndex::decode(entry);
  const uint64_t startblk = (idx.startblk_lo | (uint64_t(idx.startblk_hi) << 32)) & addr_mask;
  if (((startblk ^ ~0ull) & addr_mask) == 0) return std::nullopt;
  if (idx.device_id != 0) {
    if (devices_.empty())
      throw CorruptError(fmt::format("nid {}: chunk {} names device {}, but the image has no device table",
                                     ino.nid, chunk, idx.device_id));
    const uint16_t dev = idx.device_id & device_id_mask_;
    if (dev > devices_.size())
      throw CorruptError(fmt::format("nid {}: chunk {} names device {} of {}", ino.nid, chunk, dev, devices_.size()));
    if (dev != 0)
      throw UnsupportedError(fmt::format("nid {}: chunk {} lies on extra device {}; extra devices are not supported",
                                         ino.nid, chunk, dev));
  }
  return startblk;
}

size_t ImageImpl::read_chunked(const Inode& ino, uint64_t offset, std::span<uint8_t> buf) const {
  const unsigned bits = chunk_bits(ino);
  size_t done = 0;
  while (done < buf.size()) {
    const uint64_t pos = offset + done;
    const uint64_t chunk = pos >> bits;
    const uint64_t in_chunk = pos - (chunk << bits);
    const size_t n = size_t(std::min<uint64_t>(buf.size() - done, (1ull << bits) - in_chunk));
    if (auto start = chunk_start(ino, chunk))
      read_device(checked::add(checked::shl(*start, sb_.blkszbits), in_chunk), buf.subspan(done, n));
    else
      std::memset(buf.data() + done, 0, n);
    done += n;
  }
  return done;
}

}  // namespace erofs::reader
