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

}  // namespace

ZSegment compress_segment(compress::Encoder& enc, std::span<const uint8_t> data, uint64_t lstart,
                          const ZSegmentOptions& o) {
  ZSegment seg;
  const uint32_t bs = o.block_size;
  std::vector<uint8_t> out(o.pcluster_bytes);
  uint64_t pos = 0, blk = 0;
  while (pos < data.size()) {
    uint64_t remaining = data.size() - pos;
    auto window = data.subspan(pos, size_t(std::min<uint64_t>(remaining, o.max_extent)));
    // A block of input or less cannot compress into fewer blocks, so it is stored as it is
    // without trying (also as a tail: a compressed tail is kept only when it saves a block).
    compress::FillResult r = remaining > bs ? enc.fill(window, out) : compress::FillResult{};
    uint32_t nblocks = uint32_t((r.produced + bs - 1) / bs);
    bool saves = r.consumed > 0 && uint64_t(nblocks) * bs < r.consumed;
    uint64_t length = saves ? r.consumed : std::min<uint64_t>(bs, remaining);
    bool last_piece = o.last_segment && length == remaining;
    if (o.digests) {
      XXH128_hash_t h = XXH3_128bits(window.data(), size_t(length));
      seg.digests.push_back({h.low64, h.high64});
      seg.prefix_digests.push_back(saves ? block_prefix_digests(window.first(size_t(length)), bs)
                                         : std::vector<ZDigest>{});
    }

    // A small last piece is kept apart: the caller may inline it or move it to the packed inode.
    if (last_piece && o.tail_candidates && (saves ? nblocks == 1 : length < bs)) {
      seg.has_tail = true;
      seg.tail.lstart = lstart + pos;
      seg.tail.length = length;
      seg.tail.plain = !saves;
      seg.tail.raw.assign(window.begin(), window.begin() + length);
      seg.tail.stream = saves ? std::vector<uint8_t>(out.begin(), out.begin() + r.produced) : seg.tail.raw;
      seg.extents.push_back({lstart + pos, length, 0, 1, !saves, false, false});
      break;
    }

    PlannedExtent e{lstart + pos, length, blk, saves ? nblocks : 1, !saves, false, false};
    size_t at = seg.blocks.size();
    const size_t room = size_t(e.nblocks) * bs, used = saves ? r.produced : size_t(length);
    seg.blocks.resize(at + room);
    uint8_t* dst = seg.blocks.data() + at;
    if (saves) {  // right-aligned after zero padding (0PADDING)
      std::memset(dst, 0, room - used);
      std::memcpy(dst + room - used, out.data(), used);
    } else {
      std::memcpy(dst, window.data(), used);
      std::memset(dst + used, 0, room - used);
    }
    seg.extents.push_back(e);
    blk += e.nblocks;
    pos += length;
  }
  return seg;
}

}  // namespace erofs::writer
