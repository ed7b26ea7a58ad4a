// The mapping of a file's bytes to where they are stored, for dump-style listings and tests.
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
  if (!file.is_reg()) throw IoError(fmt::format("nid {}: not a regular file", file.nid), EINVAL);
  std::vector<Extent> out;
  if (file.size == 0) return out;
  switch (file.layout()) {
    case format::Layout::FlatPlain:
    case format::Layout::FlatInline: {
      const uint64_t device_bytes = flat_device_bytes(file);
      if (device_bytes) {
        const bool hole = file.layout() == format::Layout::FlatPlain && file.startblk == format::kNullAddr;
        out.push_back({0, device_bytes, hole ? Extent::Kind::Hole : Extent::Kind::Plain,
                       hole ? 0 : file.startblk << sb_.blkszbits, hole ? 0 : device_bytes});
      }
      if (device_bytes < file.size)
        out.push_back({device_bytes, file.size - device_bytes, Extent::Kind::Inline, file.meta_end(),
                       file.size - device_bytes});
      return out;
    }
    case format::Layout::ChunkBased: {
      const unsigned bits = chunk_bits(file);
      for (uint64_t chunk = 0; chunk << bits < file.size; ++chunk) {
        const uint64_t at = chunk << bits, n = std::min<uint64_t>(file.size - at, 1ull << bits);
        if (auto start = chunk_start(file, chunk))
          out.push_back({at, n, Extent::Kind::Plain, *start << sb_.blkszbits, n});
        else
          out.push_back({at, n, Extent::Kind::Hole});
      }
      return out;
    }
    case format::Layout::CompressedFull:
    case format::Layout::CompressedCompact: {
      const CompressedMap map(*this, file);
      for (uint64_t pos = 0; pos < file.size;) {
        const Extent e = public_extent(map.map(pos));
        pos = e.offset + e.length;
        if (e.kind == Extent::Kind::Fragment)
          append_fragment(e, out);
        else
          out.push_back(e);
      }
      return out;
    }
  }
  throw CorruptError(fmt::format("nid {}: unknown data layout", file.nid));
}

// A fragment is cut where the packed inode's extents end, so that a reader copying extent by
// extent decodes each of those once, straight into its own buffer (see decode_direct).
void ImageImpl::append_fragment(const Extent& fragment, std::vector<Extent>& out) const {
  if (!packed_ || !format::is_compressed(packed_->layout())) {
    out.push_back(fragment);
    return;
  }
  const CompressedMap packed(*this, *packed_);
  for (uint64_t done = 0; done < fragment.length;) {
    const uint64_t at = checked::add(fragment.physical, done);
    if (at >= packed_->size)
      throw CorruptError(fmt::format("fragment at {} runs past the packed inode", fragment.physical));
    const MappedExtent z = packed.map(at);
    const uint64_t n = std::min(fragment.length - done, z.la + z.llen - at);
    out.push_back({fragment.offset + done, n, Extent::Kind::Fragment, at});
    done += n;
  }
}

Extent ImageImpl::extent_at(const Inode& file, uint64_t offset) const {
  if (!file.is_reg() || offset >= file.size)
    throw IoError(fmt::format("nid {}: no byte {} in a regular file", file.nid, offset), EINVAL);
  if (file.layout() == format::Layout::CompressedFull || file.layout() == format::Layout::CompressedCompact)
    return public_extent(CompressedMap(*this, file).map(offset));
  for (const Extent& e : extents(file))  // flat: two at most; chunked: one per chunk
    if (offset < e.offset + e.length) return e;
  throw CorruptError(fmt::format("nid {}: byte {} is mapped nowhere", file.nid, offset));
}

}  // namespace erofs::reader
