// Compressed-file metadata: the map header, full and compact lcluster indexes, encoded extents,
// and the per-algorithm configuration records that follow the superblock.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace erofs::format {

inline constexpr uint32_t kMapHeaderSize = 8;

// h_advise bits
inline constexpr uint16_t kAdviseCompacted2B = 0x0001;  // also EXTENTS for COMPRESSED_FULL
inline constexpr uint16_t kAdviseBigPcluster1 = 0x0002;
inline constexpr uint16_t kAdviseBigPcluster2 = 0x0004;
inline constexpr uint16_t kAdviseInlinePcluster = 0x0008;
inline constexpr uint16_t kAdviseInterlacedPcluster = 0x0010;
inline constexpr uint16_t kAdviseFragmentPcluster = 0x0020;
inline constexpr uint16_t kAdviseAllKnown = 0x003F;

inline constexpr uint64_t kWholeFileFragmentBit = 1ull << 63;

struct MapHeader {
  uint32_t fragment_off = 0;  // h_fragmentoff (FRAGMENT), or h_idata_size << 16 (INLINE)
  uint16_t advise = 0;
  uint8_t algorithm_type = 0;  // bits 0-3 HEAD1, 4-7 HEAD2
  uint8_t cluster_bits = 0;    // bits 0-3: lclusterbits - blkszbits

  uint16_t idata_size() const { return uint16_t(fragment_off >> 16); }
  void set_idata_size(uint16_t n) { fragment_off = (fragment_off & 0xFFFF) | (uint32_t(n) << 16); }

  void encode(uint8_t* out) const;
  static MapHeader decode(const uint8_t* in);
  // Bit 63 of the 8 bytes read as le64: the whole file is one fragment at the returned offset.
  static bool whole_file_fragment(const uint8_t* in, uint64_t& offset);
  static void encode_whole_file_fragment(uint8_t* out, uint64_t offset);
};

enum class LclusterType : uint8_t { Plain = 0, Head1 = 1, NonHead = 2, Head2 = 3 };

inline constexpr uint16_t kLclusterTypeMask = 0x3;
inline constexpr uint16_t kLclusterPartialRef = 0x8000;
inline constexpr uint16_t kDeltaCblkcnt = 0x0800;  // first NONHEAD of a big pcluster: 0x800 | block count
inline constexpr uint32_t kFullIndexSize = 8;
inline constexpr uint32_t kFullIndexReserved = 8;  // zero bytes between the map header and full indexes

// One lcluster of a full (legacy) index.
struct LclusterIndex {
  LclusterType type = LclusterType::Plain;
  bool partial_ref = false;
  uint16_t clusterofs = 0;
  uint32_t blkaddr = 0;             // HEAD/PLAIN
  uint16_t delta[2] = {0, 0};       // NONHEAD: lookback, lookahead

  void encode(uint8_t* out) const;  // 8 bytes
  static LclusterIndex decode(const uint8_t* in);
};

// Where a compressed inode's index metadata sits (format §3.2, §3.3, §3.6). `meta_end` is the
// position just past the inode and its xattr ibody in its metadata stream.
inline constexpr uint64_t map_header_position(uint64_t meta_end) { return (meta_end + 7) & ~uint64_t(7); }
// Full (legacy) lcluster index `lcn`: after the map header and 8 reserved bytes.
inline constexpr uint64_t full_index_position(uint64_t header_pos, uint64_t lcn) {
  return header_pos + kMapHeaderSize + kFullIndexReserved + lcn * kFullIndexSize;
}
// First byte of the compact index packs ("ebase"): right after the map header.
inline constexpr uint64_t compact_index_base(uint64_t header_pos) { return header_pos + kMapHeaderSize; }

// The worked example of the format notes (§3.7): inode at 1568, 32 + 36 bytes -> header at 1640,
// packs from 1648.
static_assert(map_header_position(1568 + 32 + 36) == 1640);
static_assert(map_header_position(1640) == 1640);
static_assert(compact_index_base(map_header_position(1636)) == 1648);
static_assert(full_index_position(1640, 0) == 1656 && full_index_position(1640, 2) == 1672);

// Where the compact index packs of an inode sit.
struct CompactLayout {
  uint32_t total = 0;         // number of lclusters
  uint32_t initial_4b = 0;    // 4B-pack entries before the 2B region
  uint32_t compacted_2b = 0;  // entries in 2B packs

  // ebase: absolute byte offset of the first index byte (map header + 8).
  static CompactLayout compute(uint64_t ebase, uint32_t total_lclusters, bool use_2b);
  // Total bytes of all packs.
  uint64_t bytes() const;
  // Byte offset from ebase of the pack holding entry `lcn`, its entry count and its index in it.
  struct Slot {
    uint64_t pack_offset;
    uint32_t vcnt;
    uint32_t index;
  };
  Slot locate(uint32_t lcn) const;
};

inline constexpr uint32_t kPack4BBytes = 8, kPack4BEntries = 2, kPack4BBits = 16;
inline constexpr uint32_t kPack2BBytes = 32, kPack2BEntries = 16, kPack2BBits = 14;

// Raw value of entry i in a pack (encodebits wide, LSB-first), and its write counterpart.
uint32_t compact_entry(const uint8_t* pack, uint32_t encodebits, uint32_t i);
void set_compact_entry(uint8_t* pack, uint32_t encodebits, uint32_t i, uint32_t v);

// A compact entry's raw value split into its type and its low field (clusterofs, lookback
// distance or CBLKCNT): v = (type << lobits) | lo, with lobits = max(lclusterbits, 12).
inline constexpr unsigned compact_lo_bits(unsigned lcluster_bits) { return lcluster_bits < 12 ? 12 : lcluster_bits; }
struct CompactEntry {
  LclusterType type = LclusterType::Plain;
  uint32_t lo = 0;
  static constexpr CompactEntry decode(uint32_t v, unsigned lobits) {
    return {LclusterType((v >> lobits) & kLclusterTypeMask), v & ((1u << lobits) - 1)};
  }
  constexpr uint32_t encode(unsigned lobits) const { return (uint32_t(type) << lobits) | (lo & ((1u << lobits) - 1)); }
};
// Entry 12 of the §3.7 example pack: NONHEAD, lookback 17; and CBLKCNT 16 round trips in 14 bits.
static_assert(CompactEntry::decode(0x2011, 12).type == LclusterType::NonHead && CompactEntry::decode(0x2011, 12).lo == 17);
static_assert(CompactEntry{LclusterType::NonHead, kDeltaCblkcnt | 16}.encode(12) == 0x2810);
static_assert(compact_lo_bits(9) == 12 && compact_lo_bits(14) == 14);

// Encoded extents (48BIT images, COMPRESSED_FULL with the EXTENTS advise bit).
inline constexpr uint32_t kExtentPlenMask = 0x1FFFFF;
inline constexpr uint32_t kExtentPartialRef = 1u << 27;
inline constexpr unsigned kExtentFmtShift = 28;

struct ExtentRecord {
  uint32_t plen = 0;
  uint64_t pstart = 0;
  uint64_t lstart = 0;
  static ExtentRecord decode(const uint8_t* in, uint32_t recsz);
};

// Chunk-based files: 8-byte chunk indexes (or 4-byte block maps).
struct ChunkIndex {
  uint16_t startblk_hi = 0;
  uint16_t device_id = 0;
  uint32_t startblk_lo = 0;
  void encode(uint8_t* out) const;
  static ChunkIndex decode(const uint8_t* in);
};

// Compression configuration records (COMPR_CFGS), one per algorithm present, ascending id.
struct ComprConfigs {
  uint16_t lz4_max_distance = 0;
  uint16_t lz4_max_pclusterblks = 0;
  uint32_t lzma_dict_size = 0;
  uint8_t deflate_window_bits = 0;
  uint8_t zstd_window_log = 0;

  // Serialised records for the algorithms in `bitmap` (each le16 size + payload, 4-byte aligned).
  std::vector<uint8_t> encode(uint16_t bitmap) const;
  // Parses records for `bitmap` from `in`; returns false if they do not fit or a size is wrong.
  static bool decode(std::span<const uint8_t> in, uint16_t bitmap, ComprConfigs& out, std::string* why);
};

}  // namespace erofs::format
