#include "format/zmap.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "format/endian.h"

namespace erofs::format {

void MapHeader::encode(uint8_t* out) const {
  put_le32(out, fragment_off);
  put_le16(out + 4, advise);
  out[6] = algorithm_type;
  out[7] = cluster_bits;
}

MapHeader MapHeader::decode(const uint8_t* in) { return {get_le32(in), get_le16(in + 4), in[6], in[7]}; }

bool MapHeader::whole_file_fragment(const uint8_t* in, uint64_t& offset) {
  uint64_t v = get_le64(in);
  offset = v & ~kWholeFileFragmentBit;
  return v & kWholeFileFragmentBit;
}

void MapHeader::encode_whole_file_fragment(uint8_t* out, uint64_t offset) {
  put_le64(out, offset | kWholeFileFragmentBit);
}

void LclusterIndex::encode(uint8_t* out) const {
  put_le16(out, uint16_t(uint16_t(type) | (partial_ref ? kLclusterPartialRef : 0)));
  put_le16(out + 2, clusterofs);
  if (type == LclusterType::NonHead) {
    put_le16(out + 4, delta[0]);
    put_le16(out + 6, delta[1]);
  } else {
    put_le32(out + 4, blkaddr);
  }
}

LclusterIndex LclusterIndex::decode(const uint8_t* in) {
  LclusterIndex e;
  uint16_t adv = get_le16(in);
  e.type = LclusterType(adv & kLclusterTypeMask);
  e.partial_ref = adv & kLclusterPartialRef;
  e.clusterofs = get_le16(in + 2);
  e.blkaddr = get_le32(in + 4);
  e.delta[0] = get_le16(in + 4);
  e.delta[1] = get_le16(in + 6);
  return e;
}

CompactLayout CompactLayout::compute(uint64_t ebase, uint32_t total_lclusters, bool use_2b) {
  CompactLayout l;
  l.total = total_lclusters;
  uint32_t initial = uint32_t(((32 - ebase % 32) / 4) & 7);
  l.initial_4b = std::min(initial, total_lclusters);
  if (use_2b && initial < total_lclusters) l.compacted_2b = (total_lclusters - initial) / 16 * 16;
  return l;
}

uint64_t CompactLayout::bytes() const {
  uint64_t trailing = total - initial_4b - compacted_2b;
  return 4ull * ((initial_4b + 1) & ~1u) + 2ull * compacted_2b + 4 * ((trailing + 1) & ~1ull);
}

CompactLayout::Slot CompactLayout::locate(uint32_t lcn) const {
  if (lcn < initial_4b) return {uint64_t(lcn / 2) * kPack4BBytes, kPack4BEntries, lcn % 2};
  uint64_t base = 4ull * initial_4b;
  lcn -= initial_4b;
  if (lcn < compacted_2b) return {base + uint64_t(lcn / 16) * kPack2BBytes, kPack2BEntries, lcn % 16};
  base += 2ull * compacted_2b;
  lcn -= compacted_2b;
  return {base + uint64_t(lcn / 2) * kPack4BBytes, kPack4BEntries, lcn % 2};
}

uint32_t compact_entry(const uint8_t* pack, uint32_t encodebits, uint32_t i) {
  uint32_t bitpos = encodebits * i;
  return (get_le32(pack + bitpos / 8) >> (bitpos & 7)) & ((1u << encodebits) - 1);
}

void set_compact_entry(uint8_t* pack, uint32_t encodebits, uint32_t i, uint32_t v) {
  uint32_t bitpos = encodebits * i;
  uint8_t* p = pack + bitpos / 8;
  uint32_t mask = ((1u << encodebits) - 1) << (bitpos & 7);
  uint32_t word = get_le32(p);
  put_le32(p, (word & ~mask) | ((v << (bitpos & 7)) & mask));
}

ExtentRecord ExtentRecord::decode(const uint8_t* in, uint32_t recsz) {
  ExtentRecord r;
  r.plen = get_le32(in);
  if (recsz >= 8) r.pstart = get_le32(in + 4);
  if (recsz >= 16) {
    r.pstart |= uint64_t(get_le32(in + 8)) << 32;
    r.lstart = get_le32(in + 12);
  }
  if (recsz >= 32) r.lstart |= uint64_t(get_le32(in + 16)) << 32;
  return r;
}

void ChunkIndex::encode(uint8_t* out) const {
  put_le16(out, startblk_hi);
  put_le16(out + 2, device_id);
  put_le32(out + 4, startblk_lo);
}

ChunkIndex ChunkIndex::decode(const uint8_t* in) { return {get_le16(in), get_le16(in + 2), get_le32(in + 4)}; }

namespace {

constexpr uint16_t kRecordSizes[4] = {14, 14, 6, 6};

}  // namespace

std::vector<uint8_t> ComprConfigs::encode(uint16_t bitmap) const {
  std::vector<uint8_t> out;
  for (unsigned alg = 0; alg < 4; ++alg) {
    if (!(bitmap & (1u << alg))) continue;
    size_t at = out.size();
    out.resize(at + ((2 + kRecordSizes[alg] + 3) & ~3u), 0);
    uint8_t* p = out.data() + at;
    put_le16(p, kRecordSizes[alg]);
    p += 2;
    switch (alg) {
      case 0: put_le16(p, lz4_max_distance); put_le16(p + 2, lz4_max_pclusterblks); break;
      case 1: put_le32(p, lzma_dict_size); break;
      case 2: p[0] = deflate_window_bits; break;
      case 3: p[1] = zstd_window_log; break;
    }
  }
  return out;
}

bool ComprConfigs::decode(std::span<const uint8_t> in, uint16_t bitmap, ComprConfigs& out, std::string* why) {
  size_t pos = 0;
  for (unsigned alg = 0; alg < 16; ++alg) {
    if (!(bitmap & (1u << alg))) continue;
    if (alg >= 4) {
      *why = fmt::format("unknown compression algorithm id {}", alg);
      return false;
    }
    pos = (pos + 3) & ~size_t(3);
    if (pos + 2 > in.size()) {
      *why = "compression configuration records run past their block";
      return false;
    }
    uint16_t size = get_le16(in.data() + pos);
    pos += 2;
    if (size < kRecordSizes[alg] || pos + size > in.size()) {
      *why = fmt::format("bad size {} of the configuration record for algorithm {}", size, alg);
      return false;
    }
    const uint8_t* p = in.data() + pos;
    switch (alg) {
      case 0: out.lz4_max_distance = get_le16(p); out.lz4_max_pclusterblks = get_le16(p + 2); break;
      case 1:
        out.lzma_dict_size = get_le32(p);
        if (get_le16(p + 4) != 0) {
          *why = "unsupported lzma configuration format";
          return false;
        }
        break;
      case 2: out.deflate_window_bits = p[0]; break;
      case 3:
        out.zstd_window_log = p[1];
        if (p[0] != 0) {
          *why = "unsupported zstd configuration format";
          return false;
        }
        break;
    }
    pos += size;
  }
  return true;
}

}  // namespace erofs::format
