// Data of compressed inodes: extents mapped by CompressedMap, decoded once into the pcluster cache.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "compress/codec.h"
#include "format/constants.h"
#include "reader/checked.h"
#include "reader/compressed_map.h"
#include "reader/image_impl.h"

namespace erofs::reader {

namespace {

// Extents whose bytes come out of a decoder: not holes, stored data or fragments.
bool is_decoded(const MappedExtent& ext) { return ext.algorithm >= 0 && ext.source != MappedExtent::Source::Fragment; }

// Reads from this size on come from a sequential reader (random readers ask for pages).
constexpr uint64_t kStreamingReadBytes = 128 << 10;

}  // namespace

// A read that covers a whole extent nobody has decoded or is decoding takes it straight from the
// decoder into its own buffer: a sequential reader then costs one decode per extent, no copy, and
// nothing for the cache to keep. An extent being decoded by another request is waited for instead.
bool ImageImpl::decode_direct(const MappedExtent& ext, uint64_t skip, uint64_t length, ExtentInCache& in_cache) const {
  return is_decoded(ext) && skip == 0 && length == ext.llen && !in_cache.cached();
}

// A read that needs two or more pclusters from the device asks for all of them before it waits
// for the first: their reads overlap instead of following each other (a random 4 KiB read often
// ends in the next extent, and each cold pcluster costs a disk round trip).
void ImageImpl::ask_ahead(const Inode& ino, std::span<const MappedExtent> extents) const {
  auto cold = [&](const MappedExtent& ext) {
    return ext.source == MappedExtent::Source::Device && !(is_decoded(ext) && cache_->has(extent_key(ino, ext)));
  };
  if (std::count_if(extents.begin(), extents.end(), cold) < 2) return;
  // One hint per run of pclusters that follow each other on the device.
  uint64_t from = 0, to = 0;
  for (const MappedExtent& ext : extents) {
    if (!cold(ext)) continue;
    if (to > from && ext.pa >= from && ext.pa <= to) {
      to = std::max(to, ext.pa + ext.plen);
      continue;
    }
    if (to > from) file_.will_need(from, to - from);
    from = ext.pa;
    to = ext.pa + ext.plen;
  }
  if (to > from) file_.will_need(from, to - from);
}

void ImageImpl::ask_for_index(const Inode& ino, uint64_t pos, uint64_t bytes) const {
  constexpr uint64_t kMostAsked = 16 << 20;  // the index of a file of tens of GB in 4 KiB lclusters
  constexpr size_t kNidsKept = 4096;
  if (ino.in_metabox() || bytes <= (1u << kMetaUnitBits) || bytes > kMostAsked) return;
  {
    std::lock_guard l(indexes_asked_mutex_);
    if (indexes_asked_.size() >= kNidsKept) indexes_asked_.clear();
    if (!indexes_asked_.insert(ino.nid).second) return;
  }
  file_.will_need(pos, bytes);
}

size_t ImageImpl::read_compressed(const Inode& ino, uint64_t offset, std::span<uint8_t> buf) const {
  const CompressedMap map(*this, ino);
  // Whole extents of consecutive pclusters are read together, then decoded in order; those
  // gathered are decoded before an error of a later extent is thrown, as one by one.
  PclusterRun run(*this, ino);
  std::vector<std::span<uint8_t>> outs;  // where each extent of the run goes
  auto flush = [&] {
    for (size_t i = 0; i < outs.size(); ++i) run.decode(i, outs[i], compress::Decoder::Unchecked::Zero);
    run.clear();
    outs.clear();
  };
  size_t done = 0;
  while (done < buf.size()) {
    const uint64_t pos = offset + done;
    MappedExtent ext;
    try {
      ext = map.map(pos);  // holds pos, and lies inside the file
    } catch (...) {
      flush();
      throw;
    }
    const size_t n = size_t(std::min<uint64_t>(buf.size() - done, ext.la + ext.llen - pos));
    ExtentInCache in_cache(*this, ino, ext);
    const bool direct = decode_direct(ext, pos - ext.la, n, in_cache);
    if (direct && !run.joins(ext)) flush();
    if (direct && run.joins(ext)) {
      run.add(ext);
      outs.push_back(buf.subspan(done, n));
    } else if (direct) {
      decode_into(ino, ext, buf.subspan(done, n), compress::Decoder::Unchecked::Zero);
    } else {
      flush();
      read_extent(ino, ext, pos - ext.la, buf.subspan(done, n), in_cache);
    }
    done += n;
  }
  flush();
  return done;
}

std::vector<SharedBytes> ImageImpl::read_shared(const Inode& ino, uint64_t offset, uint64_t length) const {
  std::vector<SharedBytes> pieces;
  const uint64_t end = std::min(ino.size, checked::add(offset, length));
  if (offset >= end) return pieces;
  auto own = [&](size_t n, auto&& fill) {
    auto bytes = std::make_shared<std::vector<uint8_t>>(n);
    fill(std::span<uint8_t>(*bytes));
    pieces.push_back({bytes, *bytes});
  };
  if (!ino.is_reg() || !format::is_compressed(ino.layout())) {
    own(size_t(end - offset), [&](std::span<uint8_t> b) { read(ino, offset, b); });
    return pieces;
  }
  // Whole extents go into one buffer for this read (see decode_direct).
  std::shared_ptr<compress::UninitBytes> direct;
  const CompressedMap map(*this, ino);
  std::vector<MappedExtent> extents;
  for (uint64_t pos = offset; pos < end; pos = extents.back().la + extents.back().llen) extents.push_back(map.map(pos));
  // A streaming reader's pclusters follow each other on the device, where the kernel's readahead
  // of the image file already reads ahead in large requests; hints for each read of it only cut
  // those into smaller ones, each a notification of the virtual disk (the 10^9-byte file read in
  // order through FUSE, 4 KiB pclusters: 1.05-1.09 s with the hints, 0.89-0.92 s without).
  const bool streaming = end - offset >= kStreamingReadBytes;
  if (!streaming) ask_ahead(ino, extents);
  for (uint64_t pos = offset; const MappedExtent& ext : extents) {
    const size_t n = size_t(std::min<uint64_t>(end - pos, ext.la + ext.llen - pos));
    const uint64_t skip = pos - ext.la;
    ExtentInCache in_cache(*this, ino, ext);
    if (decode_direct(ext, skip, n, in_cache)) {
      if (!direct) direct = buffers_.take_brief(size_t(end - offset));
      const std::span<uint8_t> at = std::span(*direct).subspan(size_t(pos - offset), n);
      decode_into(ino, ext, at, compress::Decoder::Unchecked::Zero);
      if (!pieces.empty() && pieces.back().owner == direct && pieces.back().bytes.data() + pieces.back().bytes.size() == at.data())
        pieces.back().bytes = {pieces.back().bytes.data(), pieces.back().bytes.size() + n};
      else
        pieces.push_back({direct, at});
    } else if (is_decoded(ext) && (head_only(ext, skip, n, in_cache) || (!whole_extents_ && !streaming && !in_cache.cached()))) {
      // Small reads come from random readers (a sequential one's come from the kernel's readahead,
      // large): an extent nobody has decoded is decoded as far as the read goes and not cached.
      // Random pages seldom come back for the same extent before the page store hands the kernel
      // all of it, and kept, such extents filled the cache with fresh memory (a reader of every
      // page of the 10^9-byte file in random order, 4 KiB pclusters: 72,000 page faults, a third
      // of the daemon's CPU).
      auto head = decoded_head(ino, ext, skip + n);
      pieces.push_back({head, std::span<const uint8_t>(*head).subspan(size_t(skip), n)});
    } else if (is_decoded(ext)) {
      auto data = decoded_extent(ino, ext);
      pieces.push_back({data, std::span<const uint8_t>(*data).subspan(size_t(skip), n)});
      // A streaming reader (the kernel's readahead asks for large pieces) that takes an extent
      // through its end will not come back for it: kept, the extents at the edges of its reads
      // would fill the whole cache with fresh memory, each page faulted in once (the 10^9-byte
      // file through FUSE at 64 KiB pclusters: 75,000 page faults, a fifth of the daemon's CPU).
      if (streaming && skip + n == ext.llen) cache_->forget(in_cache.key());
    } else {
      own(n, [&](std::span<uint8_t> b) { read_extent(ino, ext, skip, b, in_cache); });
    }
    pos += n;
  }
  return pieces;
}

void ImageImpl::prefetch(const Inode& ino, uint64_t offset, uint64_t length) const {
  if (!ino.is_reg() || !format::is_compressed(ino.layout())) return;
  const uint64_t end = std::min(ino.size, checked::add(offset, length));
  const CompressedMap map(*this, ino);
  for (uint64_t pos = offset; pos < end;) {
    const MappedExtent ext = map.map(pos);
    if (is_decoded(ext)) decoded_extent(ino, ext);
    pos = ext.la + ext.llen;
  }
}

void ImageImpl::read_extent(const Inode& ino, const MappedExtent& ext, uint64_t skip, std::span<uint8_t> out,
                            ExtentInCache& in_cache) const {
  switch (ext.source) {
    case MappedExtent::Source::Hole:
      std::memset(out.data(), 0, out.size());
      return;
    case MappedExtent::Source::Fragment:
      return read_fragment(ino, checked::add(ext.pa, skip), out);
    case MappedExtent::Source::Device:
    case MappedExtent::Source::Inline:
      if (ext.algorithm < 0) return read_stored(ino, ext, skip, out);
      if (head_only(ext, skip, out.size(), in_cache)) return read_extent_head(ino, ext, skip, out);
      const auto data = decoded_extent(ino, ext);
      std::memcpy(out.data(), data->data() + skip, out.size());
      return;
  }
}

// Uncompressed extents are read in place. SHIFTED data starts at the pcluster's first byte;
// INTERLACED data is rotated so that each byte keeps its offset within the block (format §3.12):
// the first (blksz - la % blksz) bytes sit at the end of the pcluster, the rest from its start.
void ImageImpl::read_stored(const Inode& ino, const MappedExtent& ext, uint64_t skip, std::span<uint8_t> out) const {
  uint64_t rotation = 0;
  if (ext.interlaced) {
    const uint64_t head = blksz_ - (ext.la & (blksz_ - 1));
    rotation = (ext.plen - head % ext.plen) % ext.plen;
  }
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t at = (rotation + skip + done) % ext.plen;
    const size_t n = size_t(std::min<uint64_t>(out.size() - done, ext.plen - at));
    if (ext.source == MappedExtent::Source::Device)
      read_device(ext.pa + at, out.subspan(done, n));
    else
      read_meta(ino.in_metabox(), ext.pa + at, out.subspan(done, n));
    done += n;
  }
}

void ImageImpl::read_fragment(const Inode& ino, uint64_t offset, std::span<uint8_t> out) const {
  if (!packed_) throw CorruptError(fmt::format("nid {}: data in a fragment, but the image has no packed inode", ino.nid));
  // The packed inode's own data cannot live in fragments: that would never end.
  if (ino.nid == packed_->nid) throw CorruptError(fmt::format("nid {}: the packed inode refers to fragments", ino.nid));
  if (checked::add(offset, out.size()) > packed_->size || read(*packed_, offset, out) != out.size())
    throw CorruptError(fmt::format("nid {}: fragment at {} runs past the packed inode", ino.nid, offset));
}

// A read that starts inside an extent nobody has decoded is random access: decoding the extent
// only up to the bytes asked for saves half a decode on average. A sequential reader meets every
// extent at its start first, so it still decodes each one once, whole, into the cache.
// So does one that reads the start of an extent whose rest a streaming reader took already
// (requests handled out of order): nobody else will want the extent.
bool ImageImpl::head_only(const MappedExtent& ext, uint64_t skip, uint64_t length, ExtentInCache& in_cache) const {
  // Up to the extent's end, the head is the whole extent: decoded into the cache, the reader of
  // the part before (a request handled at the same time) finds it there.
  if (whole_extents_ || skip + length >= ext.llen) return false;
  return skip > 0 ? !in_cache.cached() : cache_->finished(in_cache.key());
}

std::shared_ptr<compress::UninitBytes> ImageImpl::decoded_head(const Inode& ino, const MappedExtent& ext,
                                                                uint64_t length) const {
  MappedExtent head = ext;
  head.llen = length;
  head.partial = true;
  // An unchecked LZ4 decode needs zeroed memory: a zeroed buffer is zeroed again when let go,
  // after a FUSE read's reply went out, where zeroing it here would add to the reader's wait.
  if (lz4_unchecked_ && ext.algorithm == int(compress::Algorithm::Lz4)) {
    auto bytes = buffers_.take_zeroed(size_t(length));
    decode_head_into(ino, head, *bytes, compress::Decoder::Unchecked::Zeroed);
    return bytes;
  }
  auto bytes = buffers_.take_brief(size_t(length));
  decode_head_into(ino, head, *bytes, compress::Decoder::Unchecked::Zero);
  return bytes;
}

void ImageImpl::decode_head_into(const Inode& ino, const MappedExtent& ext, std::span<uint8_t> out,
                                 compress::Decoder::Unchecked unchecked) const {
  // The check and the decoder come inside: a pcluster the mapping does not serve (no mapping,
  // a small one) goes to decode_into, which takes both itself.
  bool decoded = false;
  if (ext.source == MappedExtent::Source::Device &&
      file_.read_mapped(ext.pa, size_t(ext.plen), [&](std::span<const uint8_t> raw) {
        check_primary_device(ext.pa, checked::add(ext.pa, ext.plen));
        decoded = true;
        auto lease = decoders_->acquire();
        decode_stream(ino, ext, raw, out, unchecked, lease->decoder);
      }))
    return;
  // The mapping failed under the decode: what it wrote goes, since an unchecked LZ4 decode must
  // start from zeros.
  if (decoded && unchecked == compress::Decoder::Unchecked::Zeroed) std::memset(out.data(), 0, out.size());
  decode_into(ino, ext, out, unchecked);
}

void ImageImpl::read_extent_head(const Inode& ino, const MappedExtent& ext, uint64_t skip, std::span<uint8_t> out) const {
  const auto bytes = decoded_head(ino, ext, skip + out.size());
  std::memcpy(out.data(), bytes->data() + skip, out.size());
}

bool ImageImpl::decodes_partly(const MappedExtent& ext) const {
  // Without 0PADDING the stream's end is unknown, so it may hold more than the extent.
  return ext.partial || !sb_.has_incompat(format::kIncompatZeroPadding);
}

PclusterKey ImageImpl::extent_key(const Inode& ino, const MappedExtent& ext) const {
  // Inline pclusters are addressed within their metadata stream, so the stream is part of the key.
  const uint8_t source = ext.source == MappedExtent::Source::Device ? 0 : ino.in_metabox() ? 2 : 1;
  return {source, ext.pa, ext.plen, ext.llen, int8_t(ext.algorithm), ext.partial};
}

PclusterCache::Bytes ImageImpl::decoded_extent(const Inode& ino, const MappedExtent& ext) const {
  return cache_->get_or_load(extent_key(ino, ext), [&] {
    // Unchecked LZ4 (the mount, extract) decodes into a buffer that is zero already and zeroed
    // again as it is let go: cheaper than walking the stream for offset-0 matches, which was
    // 8% of the daemon's CPU for sequential reads of 64 KiB pclusters (extracting the tail-packed
    // tree: 1.11-1.15 s against 1.16-1.19 s, user CPU 0.69-0.90 s against 0.90-0.96 s).
    // A whole extent needs no zeroed memory where liblz4 writes zeros for offset-0 matches itself:
    // the decoder then neither zeroes nor walks (compress::Decoder::Unchecked). Reading the 10^9-byte
    // file's 64k image in order through FUSE, cold: median 0.80 s against 0.86 s, daemon CPU
    // 480-510 ms against 510-550 ms (5 alternating runs; squashfuse 0.89 s).
    if (lz4_unchecked_ && ext.algorithm == int(compress::Algorithm::Lz4) &&
        (decodes_partly(ext) || !compress::lz4_zeroes_offset_zero_matches())) {
      auto out = buffers_.take_zeroed_kept(size_t(ext.llen));
      decode_into(ino, ext, *out, compress::Decoder::Unchecked::Zeroed);
      return PclusterCache::Bytes(std::move(out));
    }
    // Every other decoder refuses streams that would read bytes it has not written (and for a
    // whole LZ4 extent as above, Walk does nothing).
    auto out = buffers_.take(size_t(ext.llen));
    decode_into(ino, ext, *out, compress::Decoder::Unchecked::Walk);
    return PclusterCache::Bytes(std::move(out));
  });
}

void ImageImpl::decode_into(const Inode& ino, const MappedExtent& ext, std::span<uint8_t> out,
                            compress::Decoder::Unchecked unchecked, Keep keep) const {
  auto lease = decoders_->acquire();
  compress::UninitBytes& raw = lease->input;
  raw.resize(ext.plen);  // CompressedMap bounded plen by the 1 MiB pcluster limit; read in full
  if (ext.source == MappedExtent::Source::Device)
    read_device(ext.pa, raw);
  else
    read_meta(ino.in_metabox(), ext.pa, raw);
  decode_stream(ino, ext, raw, out, unchecked, lease->decoder, keep);
}

void ImageImpl::decode_stream(const Inode& ino, const MappedExtent& ext, std::span<const uint8_t> raw,
                              std::span<uint8_t> out, compress::Decoder::Unchecked unchecked,
                              compress::Decoder& decoder, Keep keep) const {
  std::span<const uint8_t> in = raw;
  if (sb_.has_incompat(format::kIncompatZeroPadding)) {
    // The stream is right-aligned after zero padding; like the kernel, look for its first byte
    // within the pcluster's first block only.
    const size_t limit = size_t(std::min<uint64_t>(in.size(), blksz_ - (ext.pa & (blksz_ - 1))));
    const auto first = std::find_if(in.begin(), in.begin() + limit, [](uint8_t b) { return b != 0; });
    if (first == in.begin() + limit)
      throw CorruptError(fmt::format("nid {}: pcluster at byte {} holds only zero padding", ino.nid, ext.pa));
    in = in.subspan(size_t(first - in.begin()));
  }
  try {
    const auto alg = compress::Algorithm(ext.algorithm);
    const bool partial = decodes_partly(ext);
    if (keep == Keep::Verdict)
      decoder.verify(alg, in, out, partial);
    else
      decoder.decode(alg, in, out, partial, unchecked);
  } catch (const compress::DecodeError& e) {
    throw CorruptError(fmt::format("nid {}: extent at {} ({} bytes from byte {}): {}", ino.nid, ext.la, ext.plen,
                                   ext.pa, e.what()));
  }
}

namespace {

// What one read of a run may cover (its bytes stay in the decoder's buffer while its pclusters
// are decoded). A read around the page cache (OpenOptions::direct_reads) waits for the disk, and
// fewer, larger ones wait less: a check of a 10^9-byte file's 64 KiB-pcluster image took 0.24 s
// with 256 KiB reads, 0.21 s with 1 MiB ones (medians of 7, caches dropped).
constexpr uint64_t kRunBytes = 1 << 20;

}  // namespace

bool ImageImpl::PclusterRun::joins(const MappedExtent& ext) const {
  if (ext.source != MappedExtent::Source::Device || ext.algorithm < 0 || ext.llen > format::kMaxExtentBytes)
    return false;
  const uint64_t size = image_.file_.size();
  if (ext.pa > size || ext.plen > size - ext.pa) return false;
  // Extra devices' addresses are refused when read; one read of several pclusters could refuse
  // an earlier one's bytes with a later one's error.
  if (std::any_of(image_.devices_.begin(), image_.devices_.end(), [](const auto& d) { return d.uniaddr != 0; }))
    return false;
  if (extents_.empty()) return true;
  const MappedExtent &first = extents_.front(), &last = extents_.back();
  return ext.pa == last.pa + last.plen && ext.pa + ext.plen - first.pa <= kRunBytes;
}

void ImageImpl::PclusterRun::decode(size_t i, std::span<uint8_t> out, compress::Decoder::Unchecked unchecked,
                                     Keep keep) {
  if (!lease_) lease_.reset(new DecoderPool::Lease(image_.decoders_->acquire()));
  compress::UninitBytes& raw = (*lease_)->input;
  const MappedExtent &first = extents_.front(), &ext = extents_[i];
  if (!read_) {
    const MappedExtent& last = extents_.back();
    raw.resize(size_t(last.pa + last.plen - first.pa));
    image_.read_device(first.pa, raw);
    read_ = true;
  }
  image_.decode_stream(ino_, ext, std::span<const uint8_t>(raw).subspan(size_t(ext.pa - first.pa), ext.plen), out,
                       unchecked, (*lease_)->decoder, keep);
}

}  // namespace erofs::reader
