// The mapping of a file's bytes to where they are stored, for dump-style listings and tests.
#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "format/constants.h"
#include "reader/checked.h"
#include "reader/compressed_map.h"
#include "reader/image_impl.h"

namespace erofs::reader {

namespace {

Extent public_extent(const MappedExtent& z) {
  Extent e{z.la, z.llen, Extent::Kind::Hole, z.pa, z.plen, z.algorithm, z.partial};
  switch (z.source) {
    case MappedExtent::Source::Hole: break;
    case MappedExtent::Source::Device: e.kind = z.algorithm < 0 ? Extent::Kind::Plain : Extent::Kind::Compressed; break;
    case MappedExtent::Source::Inline: e.kind = Extent::Kind::Inline; break;
    case MappedExtent::Source::Fragment: e.kind = Extent::Kind::Fragment; break;
  }
  return e;
}

}  // namespace

std::vector<Extent> ImageImpl::extents(const Inode& file) const {
  std::vector<Extent> out;
  extents_in(file, 0, file.size, [&](const Extent& e) { out.push_back(e); });
  return out;
}

void ImageImpl::extents_in(const Inode& file, uint64_t from, uint64_t to,
                           const std::function<void(const Extent&)>& fn) const {
  if (!file.is_reg()) throw IoError(fmt::format("nid {}: not a regular file", file.nid), EINVAL);
  to = std::min(to, file.size);
  if (from >= to) return;
  auto emit = [&](const Extent& e) {
    if (e.offset >= from && e.offset < to) fn(e);
  };
  switch (file.layout()) {
    case format::Layout::FlatPlain:
    case format::Layout::FlatInline: {
      const uint64_t device_bytes = flat_device_bytes(file);
      if (device_bytes) {
        const bool hole = file.layout() == format::Layout::FlatPlain && file.startblk == format::kNullAddr;
        emit({0, device_bytes, hole ? Extent::Kind::Hole : Extent::Kind::Plain,
              hole ? 0 : file.startblk << sb_.blkszbits, hole ? 0 : device_bytes});
      }
      if (device_bytes < file.size)
        emit({device_bytes, file.size - device_bytes, Extent::Kind::Inline, file.meta_end(), file.size - device_bytes});
      return;
    }
    case format::Layout::ChunkBased: {
      const unsigned bits = chunk_bits(file);
      for (uint64_t chunk = checked::div_round_up(from, 1ull << bits); chunk << bits < to; ++chunk) {
        const uint64_t at = chunk << bits, n = std::min<uint64_t>(file.size - at, 1ull << bits);
        if (auto start = chunk_start(file, chunk))
          fn({at, n, Extent::Kind::Plain, *start << sb_.blkszbits, n});
        else
          fn({at, n, Extent::Kind::Hole});
      }
      return;
    }
    case format::Layout::CompressedFull:
    case format::Layout::CompressedCompact: {
      const CompressedMap map(*this, file);
      for (uint64_t pos = from; pos < to;) {
        const Extent e = public_extent(map.map(pos));
        pos = e.offset + e.length;
        if (e.kind == Extent::Kind::Fragment)
          cut_fragment(e, from, to, fn);
        else
          emit(e);
      }
      return;
    }
  }
  throw CorruptError(fmt::format("nid {}: unknown data layout", file.nid));
}

namespace {

// Every block of extent `e` but its first, mapped on its own, must map to `e`.
void check_blocks(const CompressedMap& map, const MappedExtent& e, uint64_t step, uint64_t nid) {
  if (step == 0) return;  // nothing is mapped per offset
  for (uint64_t off = (e.la / step + 1) * step; off < e.la + e.llen; off += step) {
    const MappedExtent again = map.map(off);
    if (!(again == e))
      throw CorruptError(fmt::format("nid {}: byte {} maps to the extent at {} ({} bytes), not to the one at {} "
                                     "({} bytes) that holds it",
                                     nid, off, again.la, again.llen, e.la, e.llen));
  }
}

// Stored data is read in steps of this size; decoded extents whole.
constexpr size_t kReadStep = 1 << 20;

}  // namespace

void ImageImpl::check_mapping(const Inode& file, uint64_t from, uint64_t to) const {
  if (!file.is_reg() || !format::is_compressed(file.layout())) return;
  to = std::min(to, file.size);
  const CompressedMap map(*this, file);
  const uint64_t step = map.index_step();
  for (uint64_t pos = from; pos < to;) {
    const MappedExtent e = map.map(pos);
    pos = e.la + e.llen;
    if (e.la >= from) check_blocks(map, e, step, file.nid);  // else the range before owns it
  }
}

void ImageImpl::check_data(const Inode& file, uint64_t from, uint64_t to, std::vector<uint8_t>& buf,
                           uint64_t& bytes) const {
  if (!file.is_reg() || !format::is_compressed(file.layout())) {
    extents_in(file, from, to, [&](const Extent& ext) { read_through(file, ext, buf, bytes); });
    return;
  }
  // One map for the checks and the reads: mapping each extent again for each (check_mapping,
  // extents_in, read) took a fifth of the CPU of checking the linux tree's 4 KiB pclusters.
  to = std::min(to, file.size);
  const CompressedMap map(*this, file);
  const uint64_t step = map.index_step();
  // Consecutive pclusters are read together, then checked and decoded in order: the problem
  // found first is the one a walk extent by extent finds first.
  PclusterRun run(*this, file);
  auto flush = [&] {
    for (size_t i = 0; i < run.extents().size(); ++i) {
      const MappedExtent& e = run.extents()[i];
      check_blocks(map, e, step, file.nid);
      if (buf.size() < e.llen) buf.resize(size_t(e.llen));
      run.decode(i, std::span(buf).first(size_t(e.llen)), compress::Decoder::Unchecked::Zero, Keep::Verdict);
      bytes += e.llen;
    }
    run.clear();
  };
  for (uint64_t pos = from; pos < to;) {
    MappedExtent e;
    try {
      e = map.map(pos);
    } catch (...) {
      flush();
      throw;
    }
    pos = e.la + e.llen;
    if (e.la < from) continue;
    if (!run.joins(e)) flush();
    if (run.joins(e)) {
      run.add(e);
      continue;
    }
    check_blocks(map, e, step, file.nid);
    if (e.source == MappedExtent::Source::Hole) {
      bytes += e.llen;
    } else if (e.source == MappedExtent::Source::Fragment || e.llen > format::kMaxExtentBytes) {
      const Extent whole = public_extent(e);
      if (whole.kind == Extent::Kind::Fragment)
        cut_fragment(whole, from, to, [&](const Extent& piece) { read_through(file, piece, buf, bytes); });
      else
        read_through(file, whole, buf, bytes);
    } else {
      if (buf.size() < e.llen) buf.resize(size_t(e.llen));
      const std::span<uint8_t> out = std::span(buf).first(size_t(e.llen));
      if (e.algorithm < 0)
        read_stored(file, e, 0, out);
      else
        decode_into(file, e, out, compress::Decoder::Unchecked::Zero, Keep::Verdict);
      bytes += e.llen;
    }
  }
  flush();
}

void ImageImpl::read_through(const Inode& ino, const Extent& ext, std::vector<uint8_t>& buf, uint64_t& bytes) const {
  if (ext.kind == Extent::Kind::Hole) {
    bytes += ext.length;
    return;
  }
  const bool whole = (ext.kind == Extent::Kind::Compressed || ext.kind == Extent::Kind::Fragment) &&
                     ext.length <= format::kMaxExtentBytes;
  const uint64_t step = whole ? ext.length : kReadStep;
  if (buf.size() < step) buf.resize(size_t(step));
  for (uint64_t off = ext.offset; off < ext.offset + ext.length;) {
    const size_t want = size_t(std::min(step, ext.offset + ext.length - off));
    const size_t n = read(ino, off, std::span(buf).first(want));
    if (n == 0) throw CorruptError(fmt::format("data ends at {} of {} bytes", off, ino.size));
    off += n;
    bytes += n;
  }
}

// A fragment is cut where the packed inode's extents end, so that a reader copying extent by
// extent decodes each of those once, straight into its own buffer (see decode_direct).
void ImageImpl::cut_fragment(const Extent& fragment, uint64_t from, uint64_t to,
                             const std::function<void(const Extent&)>& fn) const {
  if (!packed_ || !format::is_compressed(packed_->layout())) {
    if (fragment.offset >= from && fragment.offset < to) fn(fragment);
    return;
  }
  const CompressedMap packed(*this, *packed_);
  auto map_at = [&](uint64_t at) {
    if (at >= packed_->size) throw CorruptError(fmt::format("fragment at {} runs past the packed inode", fragment.physical));
    return packed.map(at);
  };
  // Start at the piece that holds `from`: it begins where the packed extent holding it begins.
  uint64_t done = 0;
  if (from > fragment.offset) {
    const uint64_t at = checked::add(fragment.physical, from - fragment.offset);
    done = std::max(map_at(at).la, fragment.physical) - fragment.physical;
  }
  while (done < fragment.length && fragment.offset + done < to) {
    const uint64_t at = checked::add(fragment.physical, done);
    const MappedExtent z = map_at(at);
    const uint64_t n = std::min(fragment.length - done, z.la + z.llen - at);
    if (fragment.offset + done >= from) fn({fragment.offset + done, n, Extent::Kind::Fragment, at});
    done += n;
  }
}

Extent ImageImpl::extent_at(const Inode& file, uint64_t offset) const {
  if (!file.is_reg() || offset >= file.size)
    throw IoError(fmt::format("nid {}: no byte {} in a regular file", file.nid, offset), EINVAL);
  if (format::is_compressed(file.layout())) return public_extent(CompressedMap(*this, file).map(offset));
  // The extent holding `offset` starts at or before it: a flat file has two at most, and chunks
  // start at multiples of the chunk size.
  const uint64_t from = file.layout() == format::Layout::ChunkBased ? offset >> chunk_bits(file) << chunk_bits(file) : 0;
  std::optional<Extent> found;
  extents_in(file, from, offset + 1, [&](const Extent& e) {
    if (offset < e.offset + e.length) found = e;
  });
  if (!found) throw CorruptError(fmt::format("nid {}: byte {} is mapped nowhere", file.nid, offset));
  return *found;
}

}  // namespace erofs::reader
