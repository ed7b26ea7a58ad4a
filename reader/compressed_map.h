// Logical-to-physical mapping of compressed inodes (COMPRESSED_FULL / COMPRESSED_COMPACT):
// full and compact lcluster indexes, 48-bit encoded extents, inline (ztailpacking) tails and
// fragments. Every index number is validated; the bytes are not read here.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "format/zmap.h"
#include "reader/image.h"
#include "reader/meta_cache.h"

namespace erofs::reader {

class ImageImpl;

// One extent: the decoded bytes [la, la + llen) of the file.
struct MappedExtent {
  enum class Source : uint8_t {
    Hole,      // reads as zeros (unmapped encoded extent)
    Device,    // pcluster at byte `pa` of the device
    Inline,    // pcluster at byte `pa` of the inode's metadata stream (ztailpacking)
    Fragment,  // bytes at offset `pa` of the packed inode's data (nothing to decode)
  };
  uint64_t la = 0;
  uint64_t llen = 0;
  Source source = Source::Hole;
  uint64_t pa = 0;
  uint32_t plen = 0;
  int algorithm = -1;        // compress::Algorithm id; -1: stored uncompressed
  bool interlaced = false;   // uncompressed and rotated in its pcluster (format §3.12)
  bool partial = false;      // the stream decodes to more than llen bytes (dedupe PARTIAL_REF)

  bool operator==(const MappedExtent&) const = default;
};

// Where the pclusters of files with 4-byte encoded-extent records start. Such a record holds only
// a length: the pcluster of record i starts at the file's 64-bit base plus the lengths of records
// 0..i-1. Adding them up again for every extent mapped would make reading a file quadratic in its
// number of lclusters (each read request maps its extents afresh), so the sums are kept, one per
// kStride records, for as long as the image is open: mapping then reads fewer than kStride records
// past the nearest kept sum, and each record is added up once. One per image; thread-safe.
class ExtentStarts {
 public:
  static constexpr uint64_t kStride = 512;  // one 8-byte sum per 2 KiB of records
  // At most this many sums (32 MiB) and files are kept; past either, all are dropped and built
  // again as needed.
  static constexpr uint64_t kMaxSums = uint64_t(1) << 22;
  static constexpr size_t kMaxTables = 4096;

  struct Table {
    std::mutex mutex;
    std::vector<uint64_t> sums;  // sums[k]: start of record k * kStride (sums[0]: the base)
  };
  // The table of the file whose records start at `records_pos` (a position in its metadata stream).
  std::shared_ptr<Table> table(uint64_t nid, uint64_t records_pos);
  // Counts sums as they are added to a table, for the bound.
  void added(uint64_t n) { total_.fetch_add(n, std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<Table>> tables_;
  std::atomic<uint64_t> total_{0};
};

class CompressedMap {
 public:
  // Index records read for 4-byte encoded extents so far, by every CompressedMap of the process
  // (for tests: the bound that keeps reads linear).
  static uint64_t extent_records_read();

  // Reads and validates the map header of `inode`.
  CompressedMap(const ImageImpl& image, const Inode& inode);
  // The extent holding byte `offset` (< inode size).
  MappedExtent map(uint64_t offset) const;
  // How far apart offsets that read different index entries lie (the lcluster size); 0 when an
  // offset's entry is found by a search over all of them (sorted extent records, whole-file
  // fragments), so mapping every offset would follow nothing new.
  uint64_t index_step() const;

 private:
  // One lcluster index entry, full or compact, decoded to the same shape.
  struct Lcluster {
    uint64_t lcn = 0;
    format::LclusterType type = format::LclusterType::Plain;
    uint16_t clusterofs = 0;  // HEAD/PLAIN
    uint64_t pblk = 0;        // HEAD/PLAIN
    bool partial_ref = false;
    uint16_t delta0 = 0;      // NONHEAD: lookback distance (1 for the CBLKCNT entry)
    uint16_t delta1 = 0;      // NONHEAD: lookahead distance (0: unknown, step by one)
    uint16_t cblkcnt = 0;     // NONHEAD carrying the pcluster block count
    bool is_head() const { return type != format::LclusterType::NonHead; }
  };

  Lcluster load(uint64_t lcn) const;
  Lcluster load_full(uint64_t lcn) const;
  Lcluster load_compact(uint64_t lcn) const;
  // The HEAD/PLAIN entry of the extent holding `offset`, and where that extent ends if the first
  // entry already told (a HEAD after `offset` in the same lcluster).
  Lcluster find_head(uint64_t offset, std::optional<uint64_t>& end) const;
  uint64_t extent_end(uint64_t lcn, uint64_t la) const;
  uint32_t compressed_blocks(const Lcluster& head) const;
  uint64_t index_end() const;
  MappedExtent map_lclusters(uint64_t offset) const;
  MappedExtent map_encoded_extents(uint64_t offset) const;
  // The start of the pcluster of 4-byte record `index`; `base` is the file's 64-bit start and
  // `records` the position of record 0.
  uint64_t record_start(uint64_t index, uint64_t base, uint64_t records) const;
  // `base` plus the lengths of the `n` 4-byte records from position `pos`.
  uint64_t add_lengths(uint64_t base, uint64_t pos, uint64_t n) const;
  MappedExtent fragment(uint64_t la, uint64_t llen) const;
  // Index bytes at `pos` of the inode's metadata stream. The cache unit they came from is kept:
  // the entries one mapping reads, one after another, then cost a copy each, not a lookup.
  void read_index(uint64_t pos, std::span<uint8_t> out) const;
  [[noreturn]] void corrupt(const std::string& what) const;

  const ImageImpl& image_;
  const Inode& inode_;
  format::MapHeader header_;
  uint64_t header_pos_ = 0;
  unsigned lcluster_bits_ = 0;
  uint64_t lclusters_ = 0;        // index entries that exist (full: per lcluster, compact: per block)
  bool whole_file_fragment_ = false;
  uint64_t fragment_off_ = 0;
  bool has_fragment_ = false;
  uint16_t inline_size_ = 0;
  uint64_t inline_pos_ = 0;
  std::optional<uint64_t> tail_head_lcn_;
  bool extents_ = false;          // 48-bit encoded extent records instead of lcluster indexes
  uint32_t record_size_ = 0;
  uint64_t extent_count_ = 0;
  format::CompactLayout compact_;
  mutable MetaCache::Block unit_;  // the metadata cache unit read_index used last
  mutable uint64_t unit_pos_ = 0;  // where it starts in the stream
};

}  // namespace erofs::reader
