#include "writer/data/zsegment.h"

#include <algorithm>
#include <cstring>

#include <xxhash.h>

namespace erofs::writer {
namespace {

std::vector<ZDigest> block_prefix_digests(std::span<const uint8_t> data, uint32_t bs) {
  std::vector<ZDigest> out;
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (size_t at = 0; at + bs <= data.size(); at += bs) {
    XXH3_128bits_update(state, data.data() + at, bs);
    XXH128_hash_t h = XXH3_128bits_digest(state);
    out.push_back({h.low64, h.high64});
  }
  XXH3_freeState(state);
  return out;
}

// Input offered to the encoder per byte of pcluster at first (LZ4 at its best stores about 250
// bytes in one); see compress_segment.
constexpr uint64_t kInputPerOutput = 256;
// Segments from this size on have their output reserved whole (see compress_segment).
constexpr uint64_t kReserveFromBytes = 1 << 20;

}  // namespace

ZSegment compress_segment(compress::Encoder& enc, SegmentInput& data, uint64_t lstart, const ZSegmentOptions& o) {
  ZSegment seg;
  enc.start_input();
  const uint32_t bs = o.block_size;
  const TailMode tail = o.last_segment ? o.tail : TailMode::None;
  std::vector<uint8_t> out(o.pcluster_bytes), head_out, tail_out;
  uint64_t pos = 0, blk = 0;
  // A large segment's pclusters take at most its size rounded up to blocks. Reserved at once,
  // pages are touched only as pclusters land in them; grown by doubling, each step copied
  // megabytes, old and new resident together.
  if (data.size() >= kReserveFromBytes) seg.blocks.reserve(size_t((data.size() + bs - 1) / bs * bs));

  // The piece from `pos` on becomes the tail: `stream` is its compressed form (empty: as it is).
  auto keep_tail = [&](std::span<const uint8_t> raw, std::span<const uint8_t> stream) {
    seg.has_tail = true;
    seg.tail.lstart = lstart + pos;
    seg.tail.length = raw.size();
    seg.tail.raw.assign(raw.begin(), raw.end());
    seg.tail.compressed.assign(stream.begin(), stream.end());
    seg.extents.push_back({lstart + pos, raw.size(), 0, 1, stream.empty(), false, false});
  };
  // A pcluster: the compressed stream right-aligned after zero padding (0PADDING), or one block
  // stored as it is.
  auto add_pcluster = [&](std::span<const uint8_t> raw, std::span<const uint8_t> stream) {
    const bool plain = stream.empty();
    const uint32_t nblocks = plain ? 1 : uint32_t((stream.size() + bs - 1) / bs);
    if (o.digests) {
      XXH128_hash_t h = XXH3_128bits(raw.data(), raw.size());
      seg.digests.push_back({h.low64, h.high64});
      seg.prefix_digests.push_back(plain ? std::vector<ZDigest>{} : block_prefix_digests(raw, bs));
    }
    const size_t at = seg.blocks.size(), room = size_t(nblocks) * bs, used = plain ? raw.size() : stream.size();
    seg.blocks.resize(at + room);
    uint8_t* dst = seg.blocks.data() + at;
    if (plain) {
      std::memcpy(dst, raw.data(), used);
      std::memset(dst + used, 0, room - used);
    } else {
      std::memset(dst, 0, room - used);
      std::memcpy(dst + room - used, stream.data(), used);
    }
    seg.extents.push_back({lstart + pos, raw.size(), blk, nblocks, plain, false, false});
    blk += nblocks;
    pos += raw.size();
  };
  // Fills `room` from `in`; the stream when it saves at least a block, else empty.
  auto fill_saving = [&](std::span<const uint8_t> in, std::span<uint8_t> room, compress::FillResult& r) {
    r = enc.fill(in, room);
    const uint64_t blocks = (r.produced + bs - 1) / bs;
    return r.consumed > 0 && blocks * bs < r.consumed;
  };

  while (pos < data.size()) {
    const uint64_t remaining = data.size() - pos;
    const uint64_t most = std::min<uint64_t>(remaining, o.max_extent);
    // The encoder is offered a bounded multiple of a pcluster, and all it may take only when it
    // took that whole: offering 8 MB for every 4 KiB pcluster made the windowed input move twice
    // the file's bytes about in memory.
    auto window = data.at(pos, std::min<uint64_t>(most, kInputPerOutput * o.pcluster_bytes));
    if (tail == TailMode::Fragment && remaining <= o.pcluster_bytes) {
      keep_tail(window, {});
      break;
    }
    compress::FillResult r{};
    // A block of input or less cannot compress into fewer blocks, so it is stored as it is
    // without trying, unless it may go inline, where every byte counts.
    bool inline_rest = tail == TailMode::Inline && window.size() == remaining;
    bool saves = (remaining > bs || inline_rest) && fill_saving(window, out, r);
    if (saves && r.consumed == window.size() && window.size() < most) {
      window = data.at(pos, most);
      inline_rest = tail == TailMode::Inline && window.size() == remaining;
      saves = fill_saving(window, out, r);
    }
    const bool took_rest = r.consumed == remaining;
    if (tail == TailMode::Fragment && took_rest && r.produced < o.pcluster_bytes) {
      keep_tail(window, {});
      break;
    }
    if (inline_rest && took_rest && r.produced < bs && r.produced < remaining) {
      keep_tail(window, std::span(out).first(r.produced));
      break;
    }
    if (inline_rest && remaining < bs) {
      keep_tail(window, {});
      break;
    }
    // The last pcluster of several blocks, compressed again into one block fewer: when what is
    // left then goes inline, the file saves a block. That costs a second pass over the pcluster's
    // input, so it is tried only while the stream spills at most 13/16 of a block into its last
    // block: the rest, compressed alone, then nearly always fits a block; above that it seldom
    // does (linux-6.1 tree, lzma -C65536: 58% of the tries fit at 3072-3327 bytes of 4096, 18% at
    // 3328-3583, 2% above) and the passes wasted there were 16% of the re-compressed input.
    const uint64_t nblocks = (r.produced + bs - 1) / bs, spill = r.produced % bs;
    if (inline_rest && took_rest && saves && nblocks > 1 && spill && spill <= bs / 16 * 13) {
      head_out.resize(size_t(nblocks - 1) * bs);
      tail_out.resize(bs);
      compress::FillResult h, t;
      if (fill_saving(window, head_out, h) && h.consumed < remaining) {
        const auto rest = window.subspan(size_t(h.consumed));
        t = enc.fill(rest, tail_out);
        const bool compressed = t.consumed == rest.size() && t.produced < bs && t.produced < rest.size();
        if (compressed || rest.size() < bs) {
          add_pcluster(window.first(size_t(h.consumed)), std::span(head_out).first(h.produced));
          keep_tail(rest, compressed ? std::span<const uint8_t>(tail_out).first(t.produced) : std::span<const uint8_t>{});
          break;
        }
      }
    }
    if (saves)
      add_pcluster(window.first(size_t(r.consumed)), std::span(out).first(r.produced));
    else
      add_pcluster(window.first(size_t(std::min<uint64_t>(bs, remaining))), {});
  }
  return seg;
}

}  // namespace erofs::writer
