// Compresses one segment of a file into pclusters with fixed-output encoding: each pcluster is
// filled with as much input as fits, so every pcluster but the segment's last is full.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compress/codec.h"
#include "compress/uninit_bytes.h"
#include "writer/layout/zindex.h"

namespace erofs::writer {

struct ZSegmentOptions {
  uint32_t block_size = 4096;
  uint32_t pcluster_bytes = 4096;  // the largest pcluster (-C)
  uint64_t max_extent = 4 << 20;   // decoded bytes per extent, kept below the index's lookback range
  bool last_segment = false;       // the segment ends the file: its last piece may become a tail
  bool tail_candidates = false;    // ztailpacking or fragments: keep a small last piece apart
  bool digests = false;            // dedupe: hash each extent's decoded bytes and block prefixes
};

// The last piece of a file when it is small enough to be stored inline or as a fragment.
struct ZTailPiece {
  uint64_t lstart = 0, length = 0;
  std::vector<uint8_t> stream;  // compressed stream, or the raw bytes when plain
  bool plain = false;
  std::vector<uint8_t> raw;     // the raw bytes (fragments store these)
};

struct ZDigest {
  uint64_t lo = 0, hi = 0;
  auto operator<=>(const ZDigest&) const = default;
};

struct ZSegment {
  std::vector<PlannedExtent> extents;  // pblk counted in blocks from the segment's first block
  std::vector<ZDigest> digests;  // with ZSegmentOptions::digests: one per extent
  // With digests: per extent, the digest of its first k blocks at [k - 1] (whole blocks only), so
  // the writer can find an earlier pcluster whose decoded bytes start like this extent.
  std::vector<std::vector<ZDigest>> prefix_digests;
  compress::UninitBytes blocks;  // the pclusters, block-aligned, in extent order
  bool has_tail = false;         // the last extent is `tail`, not in `blocks`
  ZTailPiece tail;
};

ZSegment compress_segment(compress::Encoder& encoder, std::span<const uint8_t> data, uint64_t lstart,
                          const ZSegmentOptions& options);

}  // namespace erofs::writer
