#include "writer/layout/zindex.h"

#include <algorithm>

#include "format/endian.h"
#include "format/zmap.h"
#include "writer/errors.h"

namespace erofs::writer {

using namespace erofs::format;

namespace {

// The full-index view: one entry per lcluster.
std::vector<LclusterIndex> lcluster_entries(const ZIndexSpec& s) {
  const uint64_t lsize = 1ull << s.block_bits;
  const uint64_t n = (s.size + lsize - 1) >> s.block_bits;
  std::vector<LclusterIndex> out(n);
  std::vector<bool> is_head(n, false);
  for (size_t k = 0; k < s.extents.size(); ++k) {
    const PlannedExtent& e = s.extents[k];
    uint64_t head = e.lstart >> s.block_bits;
    if (is_head[head]) throw BuildError("internal error: two extents start in one lcluster");
    is_head[head] = true;
    LclusterIndex& h = out[head];
    h.type = e.plain ? LclusterType::Plain : (e.head2 ? LclusterType::Head2 : LclusterType::Head1);
    h.partial_ref = e.partial;
    h.clusterofs = uint16_t(e.lstart & (lsize - 1));
    bool last = k + 1 == s.extents.size();
    h.blkaddr = last && s.tail == ZTail::Fragment ? uint32_t(s.fragment_off >> 32)
                : last && s.tail == ZTail::Inline ? 0
                                                  : uint32_t(e.pblk);
    uint64_t next_head = last ? n : s.extents[k + 1].lstart >> s.block_bits;
    for (uint64_t l = head + 1; l < next_head && l < n; ++l) {
      LclusterIndex& nh = out[l];
      nh.type = LclusterType::NonHead;
      nh.clusterofs = h.clusterofs;
      uint64_t back = l - head;
      // The first NONHEAD records the pcluster's block count; the kernel reads delta0 = 1 there.
      nh.delta[0] = back == 1 ? uint16_t(kDeltaCblkcnt | std::max<uint32_t>(e.nblocks, 1)) : uint16_t(std::min<uint64_t>(back, 2047));
      nh.delta[1] = uint16_t(std::min<uint64_t>(next_head - l, 2047));
    }
  }
  // EOF sentinel: a PLAIN entry marking that an (empty) extent starts at i_size.
  if (s.size & (lsize - 1) && out[n - 1].type == LclusterType::NonHead) {
    uint16_t cblk = out[n - 1].delta[0];
    if (cblk & kDeltaCblkcnt && (cblk & 0x7FF) > 1)
      throw BuildError("internal error: EOF sentinel would hide a pcluster block count");
    out[n - 1] = LclusterIndex{LclusterType::Plain, false, uint16_t(s.size & (lsize - 1)), 0, {0, 0}};
  }
  return out;
}

uint16_t advise_of(const ZIndexSpec& s) {
  uint16_t a = kAdviseBigPcluster1;
  if (s.compact) a |= kAdviseBigPcluster2 | (s.block_bits <= 12 ? kAdviseCompacted2B : 0);
  if (s.tail == ZTail::Inline) a |= kAdviseInlinePcluster;
  if (s.tail == ZTail::Fragment) a |= kAdviseFragmentPcluster;
  return a;
}

uint32_t lo_of(const LclusterIndex& e, bool last_in_pack) {
  if (e.type != LclusterType::NonHead) return e.clusterofs;
  if (e.delta[0] & kDeltaCblkcnt) return e.delta[0];
  return last_in_pack ? std::min<uint32_t>(e.delta[1], 2047) : e.delta[0];
}

void encode_compact(const ZIndexSpec& s, const std::vector<LclusterIndex>& entries, uint64_t ebase,
                    std::vector<uint8_t>& out) {
  const uint16_t advise = advise_of(s);
  auto layout = CompactLayout::compute(ebase, uint32_t(entries.size()), advise & kAdviseCompacted2B);
  size_t base_off = out.size();
  out.resize(base_off + layout.bytes(), 0);
  const unsigned lobits = std::max(s.block_bits, 12u);
  // Pack bases follow the writer rule of the format notes: pclusters are consumed in extent order
  // from the first one's block, and each pack stores the running address at its start.
  uint32_t blkaddr = s.extents.empty() ? 0 : uint32_t(s.extents.front().pblk);
  bool dummy = false;
  uint32_t lcn = 0;
  while (lcn < entries.size()) {
    auto slot = layout.locate(lcn);
    uint8_t* pack = out.data() + base_off + slot.pack_offset;
    uint32_t bytes = slot.vcnt == kPack2BEntries ? kPack2BBytes : kPack4BBytes;
    uint32_t bits = slot.vcnt == kPack2BEntries ? kPack2BBits : kPack4BBits;
    uint32_t base = blkaddr;
    bool update = true;
    for (uint32_t i = 0; i < slot.vcnt; ++i, ++lcn) {
      if (lcn >= entries.size()) break;  // zero padding of an odd trailing 4B pack
      const LclusterIndex& e = entries[lcn];
      if (e.type == LclusterType::NonHead && (e.delta[0] & kDeltaCblkcnt)) {
        blkaddr += e.delta[0] & 0x7FF;
        dummy = false;
      } else if (e.type != LclusterType::NonHead) {
        if (dummy) {
          ++blkaddr;
          if (update) base = blkaddr;
        }
        dummy = true;
        update = false;
      }
      uint32_t v = (uint32_t(e.type) << lobits) | lo_of(e, i == slot.vcnt - 1);
      set_compact_entry(pack, bits, i, v);
    }
    put_le32(pack + bytes - 4, base);
  }
}

}  // namespace

bool compact_possible(const ZIndexSpec& s) {
  if (s.block_bits > 14) return false;
  uint64_t expect = s.extents.empty() ? 0 : s.extents.front().pblk;
  for (size_t k = 0; k < s.extents.size(); ++k) {
    const PlannedExtent& e = s.extents[k];
    if (e.partial) return false;
    bool last = k + 1 == s.extents.size();
    if (last && s.tail != ZTail::Normal) break;
    if (e.pblk != expect) return false;
    expect += std::max<uint32_t>(e.nblocks, 1);
  }
  return !(s.tail == ZTail::Fragment && s.fragment_off >> 32);
}

std::vector<uint8_t> encode_zindex(const ZIndexSpec& s, uint64_t header_pos) {
  if (s.compact && !compact_possible(s)) throw BuildError("internal error: compact indexes cannot describe this file");
  auto entries = lcluster_entries(s);
  std::vector<uint8_t> out(kMapHeaderSize, 0);
  MapHeader h;
  h.advise = advise_of(s);
  h.algorithm_type = s.algorithm_type;
  if (s.tail == ZTail::Inline) h.set_idata_size(s.inline_size);
  if (s.tail == ZTail::Fragment) h.fragment_off = uint32_t(s.fragment_off);
  h.encode(out.data());
  if (s.compact) {
    encode_compact(s, entries, header_pos + kMapHeaderSize, out);
  } else {
    out.resize(out.size() + kFullIndexReserved, 0);
    size_t at = out.size();
    out.resize(at + entries.size() * kFullIndexSize);
    for (auto& e : entries) {
      e.encode(out.data() + at);
      at += kFullIndexSize;
    }
  }
  return out;
}

uint64_t zindex_size(const ZIndexSpec& s, uint64_t header_pos) {
  const uint64_t lclusters = (s.size + (1ull << s.block_bits) - 1) >> s.block_bits;
  if (!s.compact) return kMapHeaderSize + kFullIndexReserved + lclusters * kFullIndexSize;
  return kMapHeaderSize + CompactLayout::compute(header_pos + kMapHeaderSize, uint32_t(lclusters),
                                                 advise_of(s) & kAdviseCompacted2B).bytes();
}

std::vector<uint8_t> encode_whole_fragment(uint64_t fragment_off) {
  std::vector<uint8_t> out(kMapHeaderSize);
  MapHeader::encode_whole_file_fragment(out.data(), fragment_off);
  return out;
}

}  // namespace erofs::writer
