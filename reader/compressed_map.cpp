#include "reader/compressed_map.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "compress/codec.h"
#include "format/constants.h"
#include "format/endian.h"
#include "reader/checked.h"
#include "reader/image_impl.h"

namespace erofs::reader {

using format::LclusterType;

namespace {

constexpr unsigned kMaxCompactLclusterBits = 14;    // 4B packs hold 14-bit lclusters at most
constexpr unsigned kMax2BLclusterBits = 12;         // 2B packs only 12
constexpr unsigned kCompactLoBitsMin = 12;          // clusterofs/delta field width is at least 12 bits
constexpr uint32_t kFullIndexStartPad = format::kMapHeaderSize + format::kFullIndexReserved;

std::atomic<uint64_t> records_read{0};  // 4-byte extent records, for CompressedMap::extent_records_read

}  // namespace

std::shared_ptr<ExtentStarts::Table> ExtentStarts::table(uint64_t nid, uint64_t records_pos) {
  std::lock_guard l(mutex_);
  // Tables in use stay alive through their shared_ptr; the next lookups rebuild what they need.
  if (total_.load(std::memory_order_relaxed) > kMaxSums || tables_.size() >= kMaxTables) {
    tables_.clear();
    total_ = 0;
  }
  auto& t = tables_[{nid, records_pos}];
  if (!t) t = std::make_shared<Table>();
  return t;
}

uint64_t CompressedMap::extent_records_read() { return records_read.load(std::memory_order_relaxed); }

void CompressedMap::corrupt(const std::string& what) const {
  throw CorruptError(fmt::format("nid {}: {}", inode_.nid, what));
}

CompressedMap::CompressedMap(const ImageImpl& image, const Inode& inode) : image_(image), inode_(inode) {
  using namespace format;
  const bool mb = inode.in_metabox();
  const uint64_t stream = image.meta_size(mb);
  header_pos_ = checked::round_up(inode.meta_end(), 8);
  if (checked::add(header_pos_, kMapHeaderSize) > stream) corrupt("compression map header is outside the image");
  uint8_t raw[kMapHeaderSize];
  read_index(header_pos_, raw);
  if (uint64_t offset; MapHeader::whole_file_fragment(raw, offset)) {
    whole_file_fragment_ = has_fragment_ = true;
    fragment_off_ = offset;
    return;
  }
  header_ = MapHeader::decode(raw);
  lcluster_bits_ = image.block_bits() + (header_.cluster_bits & 15);
  const bool full = inode.layout() == Layout::CompressedFull;
  const uint64_t lcluster_count = (inode.size >> lcluster_bits_) + ((inode.size & ((1ull << lcluster_bits_) - 1)) != 0);

  // COMPRESSED_FULL with the EXTENTS bit: 48-bit encoded extent records (format §3.10).
  if (full && (header_.advise & kAdviseCompacted2B)) {
    extents_ = true;
    record_size_ = 4u << ((header_.advise >> 1) & 3);
    // For record sizes above 8 the extent count takes h_fragmentoff and the two bytes after h_advise.
    extent_count_ = header_.fragment_off | (uint64_t(header_.algorithm_type | (header_.cluster_bits << 8)) << 32);
    has_fragment_ = header_.advise & kAdviseFragmentPcluster;
    const uint64_t records = record_size_ <= 8 ? lcluster_count : extent_count_;
    const uint64_t bytes = checked::add(record_size_ == 4 ? 8 : 0, checked::mul(records, record_size_));
    const uint64_t start = checked::round_up(header_pos_ + kMapHeaderSize, record_size_);
    if (checked::add(start, bytes) > stream) corrupt(fmt::format("{} extent records run past the image", records));
    image.ask_for_index(inode, start, bytes);
    return;
  }

  const uint8_t head1 = header_.algorithm_type & 15, head2 = header_.algorithm_type >> 4;
  if (head1 >= compress::kAlgorithmCount || head2 >= compress::kAlgorithmCount)
    throw UnsupportedError(fmt::format("nid {}: unknown compression algorithm {}", inode.nid, std::max(head1, head2)));
  const bool big1 = header_.advise & kAdviseBigPcluster1, big2 = header_.advise & kAdviseBigPcluster2;
  if ((big1 || big2) && !image.superblock().has_incompat(kIncompatComprCfgs))
    corrupt("big pclusters without the superblock's BIG_PCLUSTER feature");
  uint64_t index_bytes;
  if (full) {
    lclusters_ = lcluster_count;
    index_bytes = checked::add(kFullIndexStartPad, checked::mul(lclusters_, kFullIndexSize));
  } else {
    if (big1 != big2) corrupt("compact indexes with different HEAD1 and HEAD2 big-pcluster flags");
    if (lcluster_bits_ > kMaxCompactLclusterBits)
      throw UnsupportedError(fmt::format("nid {}: compact indexes with {}-bit lclusters", inode.nid, lcluster_bits_));
    // The compact format counts one index per block, whatever the lcluster size.
    lclusters_ = checked::div_round_up(inode.size, image.block_size());
    if (lclusters_ > UINT32_MAX) corrupt(fmt::format("{} lclusters", lclusters_));
    compact_ = CompactLayout::compute(header_pos_ + kMapHeaderSize, uint32_t(lclusters_),
                                      header_.advise & kAdviseCompacted2B);
    if (compact_.compacted_2b > 0 && lcluster_bits_ > kMax2BLclusterBits)
      throw UnsupportedError(fmt::format("nid {}: 2-byte compact indexes with {}-bit lclusters", inode.nid, lcluster_bits_));
    index_bytes = checked::add(kMapHeaderSize, compact_.bytes());
  }
  if (checked::add(header_pos_, index_bytes) > stream) corrupt(fmt::format("{} lcluster indexes run past the image", lclusters_));
  image.ask_for_index(inode, header_pos_, index_bytes);

  if (header_.advise & kAdviseFragmentPcluster) {
    has_fragment_ = true;
    fragment_off_ = header_.fragment_off;
  } else if (header_.advise & kAdviseInlinePcluster) {
    inline_size_ = header_.idata_size();
  }
  if (inline_size_ || has_fragment_) {
    // The tail extent (holding byte size-1) is the one that is inline or a fragment.
    std::optional<uint64_t> unused;
    const Lcluster tail = find_head(inode.size - 1, unused);
    tail_head_lcn_ = tail.lcn;
    if (has_fragment_ && full) fragment_off_ |= tail.pblk << 32;  // full indexes keep the high half there
    if (inline_size_) inline_pos_ = index_end();
  }
}

// End of the index entry (full) or pack (compact) holding the last lcluster: where an inline
// pcluster starts.
uint64_t CompressedMap::index_end() const {
  const uint64_t last = (inode_.size - 1) >> lcluster_bits_;
  if (inode_.layout() == format::Layout::CompressedFull)
    return header_pos_ + kFullIndexStartPad + (last + 1) * format::kFullIndexSize;
  const auto slot = compact_.locate(uint32_t(last));
  return header_pos_ + format::kMapHeaderSize + slot.pack_offset +
         (slot.vcnt == format::kPack4BEntries ? format::kPack4BBytes : format::kPack2BBytes);
}

CompressedMap::Lcluster CompressedMap::load(uint64_t lcn) const {
  if (lcn >= lclusters_) corrupt(fmt::format("lcluster {} is beyond the {} indexes", lcn, lclusters_));
  return inode_.layout() == format::Layout::CompressedFull ? load_full(lcn) : load_compact(lcn);
}

CompressedMap::Lcluster CompressedMap::load_full(uint64_t lcn) const {
  uint8_t raw[format::kFullIndexSize];
  read_index(header_pos_ + kFullIndexStartPad + lcn * format::kFullIndexSize, raw);
  const auto idx = format::LclusterIndex::decode(raw);
  Lcluster e;
  e.lcn = lcn;
  e.type = idx.type;
  if (idx.type == LclusterType::NonHead) {
    e.delta0 = idx.delta[0];
    e.delta1 = idx.delta[1];
    if (e.delta0 & format::kDeltaCblkcnt) {
      if (!(header_.advise & (format::kAdviseBigPcluster1 | format::kAdviseBigPcluster2)))
        corrupt(fmt::format("lcluster {} has a block count without big pclusters", lcn));
      e.cblkcnt = e.delta0 & ~format::kDeltaCblkcnt;
      e.delta0 = 1;
    }
    return e;
  }
  e.partial_ref = idx.partial_ref;
  e.clusterofs = idx.clusterofs;
  if (e.clusterofs >> lcluster_bits_) corrupt(fmt::format("lcluster {} has clusterofs {}", lcn, e.clusterofs));
  e.pblk = idx.blkaddr;
  return e;
}

CompressedMap::Lcluster CompressedMap::load_compact(uint64_t lcn) const {
  using namespace format;
  const auto slot = compact_.locate(uint32_t(lcn));
  const bool four = slot.vcnt == kPack4BEntries;
  const uint32_t pack_size = four ? kPack4BBytes : kPack2BBytes;
  const uint32_t encode_bits = four ? kPack4BBits : kPack2BBits;
  uint8_t pack[kPack2BBytes];
  read_index(header_pos_ + kMapHeaderSize + slot.pack_offset, std::span(pack, pack_size));

  const unsigned lo_bits = std::max(lcluster_bits_, kCompactLoBitsMin);
  struct Entry {
    LclusterType type;
    uint32_t lo;
  };
  auto entry = [&](int i) {
    const uint32_t v = compact_entry(pack, encode_bits, uint32_t(i));
    return Entry{LclusterType((v >> lo_bits) & kLclusterTypeMask), v & ((1u << lo_bits) - 1)};
  };
  const bool big = header_.advise & kAdviseBigPcluster1;
  const int vcnt = int(slot.vcnt);
  int i = int(slot.index);
  const Entry cur = entry(i);

  Lcluster e;
  e.lcn = lcn;
  e.type = cur.type;
  if (cur.type == LclusterType::NonHead) {
    // Lookahead: the NONHEADs up to the end of the pack, plus the last one's stored distance.
    uint32_t ahead = 0;
    Entry last = cur;
    for (int j = i; j < vcnt; ++j) {
      last = entry(j);
      if (last.type != LclusterType::NonHead) break;
      ++ahead;
    }
    if (i + int(ahead) == vcnt && !(last.lo & kDeltaCblkcnt)) ahead += last.lo - 1;
    e.delta1 = uint16_t(std::min<uint32_t>(ahead, UINT16_MAX));
    if (cur.lo & kDeltaCblkcnt) {
      if (!big) corrupt(fmt::format("lcluster {} has a block count without big pclusters", lcn));
      e.cblkcnt = uint16_t(cur.lo & ~uint32_t(kDeltaCblkcnt));
      e.delta0 = 1;
    } else if (i + 1 != vcnt) {
      e.delta0 = uint16_t(cur.lo);
    } else {
      // The last entry of a pack stores the lookahead; its lookback follows from the previous entry.
      const Entry prev = entry(i - 1);
      const uint32_t prev_delta = prev.type != LclusterType::NonHead ? 0 : (prev.lo & kDeltaCblkcnt) ? 1 : prev.lo;
      e.delta0 = uint16_t(prev_delta + 1);
    }
    return e;
  }

  e.clusterofs = uint16_t(cur.lo);
  if (cur.lo >> lcluster_bits_) corrupt(fmt::format("lcluster {} has clusterofs {}", lcn, cur.lo));
  // The pack stores one base block; a HEAD's block is the base plus the blocks of the
  // pclusters whose HEADs come before it in the pack (format §3.6).
  uint32_t nblk;
  if (!big) {
    nblk = 1;
    while (i > 0) {
      --i;
      const Entry p = entry(i);
      if (p.type == LclusterType::NonHead) i -= int(p.lo);
      if (i >= 0) ++nblk;
    }
  } else {
    nblk = 0;
    while (i > 0) {
      --i;
      const Entry p = entry(i);
      if (p.type != LclusterType::NonHead) {
        ++nblk;
        continue;
      }
      if (p.lo & kDeltaCblkcnt) {
        --i;
        nblk += p.lo & ~uint32_t(kDeltaCblkcnt);
        continue;
      }
      if (p.lo <= 1) corrupt(fmt::format("lcluster {}: a big-pcluster pack holds lookback distance {}", lcn, p.lo));
      i -= int(p.lo) - 2;
    }
  }
  e.pblk = uint64_t(get_le32(pack + pack_size - 4)) + nblk;
  return e;
}

CompressedMap::Lcluster CompressedMap::find_head(uint64_t offset, std::optional<uint64_t>& end) const {
  const uint64_t lcn = offset >> lcluster_bits_;
  Lcluster e = load(lcn);
  if (e.is_head() && (offset & ((1ull << lcluster_bits_) - 1)) >= e.clusterofs) return e;
  uint64_t distance = e.delta0;
  if (e.is_head()) {
    // `offset` lies before this lcluster's HEAD: it belongs to the previous extent, which ends here.
    if (lcn == 0) corrupt("lcluster 0 does not start with an extent");
    end = (lcn << lcluster_bits_) + e.clusterofs;
    distance = 1;
  }
  uint64_t at = lcn;
  while (true) {
    if (distance == 0 || distance > at) corrupt(fmt::format("bogus lookback distance {} at lcluster {}", distance, at));
    at -= distance;
    // No extent spans more than 12 MiB: a longer chain is damage, and not worth following.
    if (((lcn - at - 1) << lcluster_bits_) > format::kMaxExtentBytes)
      corrupt(fmt::format("lookback from lcluster {} passes 12 MiB", lcn));
    e = load(at);
    if (e.is_head()) return e;
    distance = e.delta0;
  }
}

// Scans forward from `lcn` for the next HEAD: the extent starting at `la` ends where that one
// starts, or at EOF.
uint64_t CompressedMap::extent_end(uint64_t lcn, uint64_t la) const {
  while (true) {
    if ((lcn << lcluster_bits_) >= inode_.size) return inode_.size;
    if ((lcn << lcluster_bits_) - la > format::kMaxExtentBytes)
      corrupt(fmt::format("extent at {} runs past 12 MiB", la));
    const Lcluster e = load(lcn);
    if (e.is_head()) return (lcn << lcluster_bits_) + e.clusterofs;
    lcn += std::max<uint16_t>(e.delta1, 1);
  }
}

uint32_t CompressedMap::compressed_blocks(const Lcluster& head) const {
  const bool big1 = header_.advise & format::kAdviseBigPcluster1;
  const bool big2 = header_.advise & format::kAdviseBigPcluster2;
  if ((head.type == LclusterType::Head1 && !big1) || (head.type != LclusterType::Head1 && !big2) ||
      ((head.lcn + 1) << lcluster_bits_) >= inode_.size)
    return 1;
  const Lcluster next = load(head.lcn + 1);
  if (next.is_head()) return 1;
  // As in the kernel, the first NONHEAD of a big pcluster must carry a block count, and not 0.
  if (next.delta0 != 1 || next.cblkcnt == 0)
    corrupt(fmt::format("lcluster {} lacks the pcluster block count (or has a block count of 0)", next.lcn));
  return next.cblkcnt;
}

void CompressedMap::read_index(uint64_t pos, std::span<uint8_t> out) const {
  const bool mb = inode_.in_metabox();
  const uint64_t end = checked::add(pos, out.size());
  if (!unit_ || pos < unit_pos_ || end > unit_pos_ + unit_->size()) {
    const uint64_t first = pos >> kMetaUnitBits;
    // Entries across two units, or outside the stream (read_meta says so), are read as they are.
    if (((end - 1) >> kMetaUnitBits) != first || end > image_.meta_size(mb)) return image_.read_meta(mb, pos, out);
    unit_ = image_.meta_unit(mb, first);
    unit_pos_ = first << kMetaUnitBits;
  }
  std::memcpy(out.data(), unit_->data() + (pos - unit_pos_), out.size());
}

uint64_t CompressedMap::index_step() const {
  if (whole_file_fragment_ || (extents_ && record_size_ > 8)) return 0;
  return uint64_t(1) << lcluster_bits_;
}

MappedExtent CompressedMap::fragment(uint64_t la, uint64_t llen) const {
  MappedExtent x;
  x.la = la;
  x.llen = llen;
  x.source = MappedExtent::Source::Fragment;
  x.pa = fragment_off_;
  return x;
}

MappedExtent CompressedMap::map(uint64_t offset) const {
  if (whole_file_fragment_) return fragment(0, inode_.size);
  MappedExtent x = extents_ ? map_encoded_extents(offset) : map_lclusters(offset);
  if (x.la > offset || x.llen > inode_.size - x.la || offset - x.la >= x.llen)
    corrupt(fmt::format("extent {}+{} does not hold offset {} inside the file", x.la, x.llen, offset));
  if (x.llen > format::kMaxExtentBytes) corrupt(fmt::format("extent of {} bytes exceeds 12 MiB", x.llen));
  if (x.source == MappedExtent::Source::Device || x.source == MappedExtent::Source::Inline) {
    if (x.plen > compress::kMaxPclusterBytes) corrupt(fmt::format("pcluster of {} bytes exceeds 1 MiB", x.plen));
    if (x.algorithm < 0 && x.llen > x.plen)
      corrupt(fmt::format("uncompressed extent of {} bytes in a pcluster of {}", x.llen, x.plen));
    if (x.algorithm >= int(compress::kAlgorithmCount))
      throw UnsupportedError(fmt::format("nid {}: unknown compression algorithm {}", inode_.nid, x.algorithm));
    if (x.algorithm >= 0 && !(image_.available_algorithms() & (1u << x.algorithm)))
      corrupt(fmt::format("extent uses algorithm {}, which the superblock does not list", x.algorithm));
  }
  return x;
}

MappedExtent CompressedMap::map_lclusters(uint64_t offset) const {
  // A fragment tail headed in lcluster 0 is the whole file (the kernel reads it so).
  if (has_fragment_ && tail_head_lcn_ == 0) return fragment(0, inode_.size);
  std::optional<uint64_t> end;
  const Lcluster head = find_head(offset, end);
  MappedExtent x;
  x.la = (head.lcn << lcluster_bits_) + head.clusterofs;
  const uint64_t stop = end ? *end : extent_end((offset >> lcluster_bits_) + 1, x.la);
  if (stop <= x.la || stop > inode_.size) corrupt(fmt::format("extent at {} ends at {}", x.la, stop));
  x.llen = stop - x.la;
  if (has_fragment_ && head.lcn == tail_head_lcn_) return fragment(x.la, x.llen);

  x.partial = head.partial_ref;
  if (inline_size_ && head.lcn == tail_head_lcn_) {
    x.source = MappedExtent::Source::Inline;
    x.pa = inline_pos_;
    x.plen = inline_size_;
    if ((x.pa & (image_.block_size() - 1)) + x.plen > image_.block_size())
      corrupt(fmt::format("inline pcluster of {} bytes crosses a block boundary", x.plen));
    if (checked::add(x.pa, x.plen) > image_.meta_size(inode_.in_metabox())) corrupt("inline pcluster runs past the image");
  } else {
    x.source = MappedExtent::Source::Device;
    x.pa = checked::shl(head.pblk, image_.block_bits());
    x.plen = compressed_blocks(head) << image_.block_bits();
  }
  if (head.type == LclusterType::Plain) {
    x.interlaced = header_.advise & format::kAdviseInterlacedPcluster;
  } else {
    x.algorithm = head.type == LclusterType::Head2 ? header_.algorithm_type >> 4 : header_.algorithm_type & 15;
  }
  return x;
}

uint64_t CompressedMap::add_lengths(uint64_t base, uint64_t pos, uint64_t n) const {
  uint8_t chunk[ExtentStarts::kStride * 4];
  while (n > 0) {
    const size_t k = size_t(std::min<uint64_t>(n, sizeof chunk / 4));
    read_index(pos, std::span(chunk, k * 4));
    for (size_t i = 0; i < k; ++i) base = checked::add(base, format::get_le32(chunk + 4 * i) & format::kExtentPlenMask);
    records_read.fetch_add(k, std::memory_order_relaxed);
    pos += k * 4;
    n -= k;
  }
  return base;
}

uint64_t CompressedMap::record_start(uint64_t index, uint64_t base, uint64_t records) const {
  constexpr uint64_t S = ExtentStarts::kStride;
  const uint64_t k = index / S;
  if (k == 0) return add_lengths(base, records, index);
  // The sum kept for record k * S, added up (once per image) from the last one kept before it.
  const auto table = image_.extent_starts().table(inode_.nid, records);
  uint64_t from;
  {
    std::lock_guard l(table->mutex);
    auto& sums = table->sums;
    if (sums.empty()) sums.push_back(base);
    while (sums.size() <= k) {
      const uint64_t next = add_lengths(sums.back(), records + (sums.size() - 1) * S * 4, S);
      sums.push_back(next);
      image_.extent_starts().added(1);
    }
    from = sums[k];
  }
  return add_lengths(from, records + k * S * 4, index - k * S);
}

MappedExtent CompressedMap::map_encoded_extents(uint64_t offset) const {
  using namespace format;
  uint64_t pos = checked::round_up(header_pos_ + kMapHeaderSize, record_size_);
  uint8_t rec[32];
  ExtentRecord r;
  uint64_t lstart, lend;
  bool last;
  if (record_size_ <= 8) {
    // One record per lcluster. 4-byte records hold only lengths: the data is contiguous from a
    // 64-bit start, so the start of record i is the sum of the lengths before it.
    const uint64_t index = offset >> lcluster_bits_;
    const uint64_t count = (inode_.size >> lcluster_bits_) + ((inode_.size & ((1ull << lcluster_bits_) - 1)) != 0);
    if (record_size_ == 4) {
      uint8_t start[8];
      read_index(pos, start);
      pos += 8;
      const uint64_t pa = record_start(index, get_le64(start), pos);
      read_index(pos + index * 4, std::span(rec, 4));
      records_read.fetch_add(1, std::memory_order_relaxed);
      r = ExtentRecord::decode(rec, 4);
      r.pstart = pa;
    } else {
      read_index(pos + index * 8, std::span(rec, 8));
      r = ExtentRecord::decode(rec, 8);
    }
    lstart = index << lcluster_bits_;
    lend = std::min<uint64_t>(lstart + (1ull << lcluster_bits_), inode_.size);
    last = index + 1 >= count;
  } else {
    // Records sorted by logical start: the last one starting at or before `offset`.
    uint64_t lo = 0, hi = extent_count_;
    bool found = false;
    lend = inode_.size;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      read_index(pos + mid * record_size_, std::span(rec, record_size_));
      const ExtentRecord m = ExtentRecord::decode(rec, record_size_);
      if (m.lstart > offset) {
        if (m.lstart > lend) corrupt(fmt::format("extent record {} starts at {}, past {}", mid, m.lstart, lend));
        lend = m.lstart;
        hi = mid;
      } else {
        r = m;
        found = true;
        lo = mid + 1;
      }
    }
    if (!found) {  // before the first record: unmapped
      MappedExtent hole;
      hole.la = offset;
      hole.llen = lend - offset;
      return hole;
    }
    lstart = r.lstart;
    last = lo >= extent_count_;
  }

  MappedExtent x;
  x.la = lstart;
  x.llen = lend - lstart;
  if (last && has_fragment_) {
    x.source = MappedExtent::Source::Fragment;
    x.pa = r.plen | (record_size_ > 4 ? r.pstart << 32 : 0);
    return x;
  }
  const uint32_t plen = r.plen & kExtentPlenMask;
  if (plen == 0) return x;  // a hole
  x.source = MappedExtent::Source::Device;
  x.pa = r.pstart;
  x.plen = plen;
  x.partial = r.plen & kExtentPartialRef;
  if (const uint32_t fmt = r.plen >> kExtentFmtShift)
    x.algorithm = int(fmt) - 1;
  else
    x.interlaced = (header_.advise & kAdviseInterlacedPcluster) && (x.pa & (image_.block_size() - 1)) == 0;
  return x;
}

}  // namespace erofs::reader
