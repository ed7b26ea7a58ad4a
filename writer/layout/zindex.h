// Turns the extent list of a compressed file into the on-disk map header and lcluster indexes
// (full or compact), exactly as the kernel reads them back.
#pragma once

#include <cstdint>
#include <vector>

namespace erofs::writer {

struct PlannedExtent {
  uint64_t lstart = 0;   // first logical byte
  uint64_t length = 0;   // decoded bytes
  uint64_t pblk = 0;     // first block of the pcluster (unused for an inline or fragment tail)
  uint32_t nblocks = 0;  // pcluster blocks
  bool plain = false;    // stored uncompressed (one block, SHIFTED)
  bool head2 = false;    // compressed with the second algorithm of the file
  bool partial = false;  // decodes only a prefix of a shared pcluster (full indexes only)
};

enum class ZTail { Normal, Inline, Fragment };

struct ZIndexSpec {
  uint64_t size = 0;
  unsigned block_bits = 12;
  bool compact = true;
  uint8_t algorithm_type = 0;  // HEAD1 algorithm | HEAD2 algorithm << 4
  ZTail tail = ZTail::Normal;  // how the last extent is stored
  uint16_t inline_size = 0;    // ZTail::Inline: bytes of the inline pcluster
  uint64_t fragment_off = 0;   // ZTail::Fragment: offset in the packed inode
  std::vector<PlannedExtent> extents;  // sorted, contiguous, covering [0, size)
};

// Compact indexes need contiguous pclusters in extent order and no partial references.
bool compact_possible(const ZIndexSpec& spec);

// The bytes from the 8-aligned map header position to the end of the index area. `header_pos` is
// the absolute byte position of the map header (compact pack alignment depends on it).
std::vector<uint8_t> encode_zindex(const ZIndexSpec& spec, uint64_t header_pos);
// The size of what encode_zindex returns, without encoding it: the writer asks often (does a tail
// fit inline, where does each inode go) and encodes once.
uint64_t zindex_size(const ZIndexSpec& spec, uint64_t header_pos);

// The same for a file stored entirely as one fragment of the packed inode.
std::vector<uint8_t> encode_whole_fragment(uint64_t fragment_off);

}  // namespace erofs::writer
