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

// Where a file's last piece may go instead of pclusters of its own.
enum class TailMode {
  None,
  // ztailpacking: a last piece that compresses below one block goes inline, next to the inode.
  // Inline bytes are metadata the image pays for too, so even a piece of a block or less is
  // compressed, and a last pcluster of several blocks is compressed again into one block fewer
  // when what is left then fits inline.
  Inline,
  // fragments: everything after the file's last full pcluster (the whole file when it fills
  // none) goes to the packed inode as it is, to be compressed there together with the tails of
  // the files beside it.
  Fragment,
};

struct ZSegmentOptions {
  uint32_t block_size = 4096;
  uint32_t pcluster_bytes = 4096;  // the largest pcluster (-C)
  uint64_t max_extent = 4 << 20;   // decoded bytes per extent, kept below the index's lookback range
  bool last_segment = false;       // the segment ends the file: its last piece may become a tail
  TailMode tail = TailMode::None;  // what the last segment's last piece may become
  bool digests = false;            // dedupe: hash each extent's decoded bytes and block prefixes
};

// The last piece of a file, kept apart to be stored inline or as a fragment.
struct ZTailPiece {
  uint64_t lstart = 0, length = 0;
  std::vector<uint8_t> raw;         // the raw bytes (fragments store these)
  std::vector<uint8_t> compressed;  // the compressed stream; empty when the tail is stored as it is
  bool plain() const { return compressed.empty(); }
  // What an inline tail stores. A plain tail's bytes are held once: tails of small files are
  // whole files, many in flight at a time.
  std::span<const uint8_t> stored() const { return plain() ? raw : compressed; }
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
  compress::UninitHeapBytes blocks;  // the pclusters, block-aligned, in extent order
  bool has_tail = false;         // the last extent is `tail`, not in `blocks`
  ZTailPiece tail;
};

// A segment's input as compress_segment reads it: forward only, a window at a time, so a long
// segment need not be in memory at once.
class SegmentInput {
 public:
  virtual ~SegmentInput() = default;
  virtual uint64_t size() const = 0;
  // The bytes [pos, pos + n), contiguous. Calls come with pos never smaller than before and n at
  // most ZSegmentOptions::max_extent; the bytes stay valid until the next call.
  virtual std::span<const uint8_t> at(uint64_t pos, uint64_t n) = 0;
};

// A segment already in memory.
class InputInMemory final : public SegmentInput {
 public:
  explicit InputInMemory(std::span<const uint8_t> data) : data_(data) {}
  uint64_t size() const override { return data_.size(); }
  std::span<const uint8_t> at(uint64_t pos, uint64_t n) override { return data_.subspan(size_t(pos), size_t(n)); }

 private:
  std::span<const uint8_t> data_;
};

// `lstart`: where the segment starts in the file.
ZSegment compress_segment(compress::Encoder& encoder, SegmentInput& input, uint64_t lstart,
                          const ZSegmentOptions& options);

inline ZSegment compress_segment(compress::Encoder& encoder, std::span<const uint8_t> data, uint64_t lstart,
                                 const ZSegmentOptions& options) {
  InputInMemory in(data);
  return compress_segment(encoder, in, lstart, options);
}

}  // namespace erofs::writer
