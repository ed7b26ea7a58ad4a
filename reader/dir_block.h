// Parsing and validation of one directory block: [dirents][names][zero padding].
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace erofs::reader {

struct RawDirent {
  std::string_view name;  // points into the block
  uint64_t nid;
  uint8_t file_type;
};

// Entries of `block` (the block's data bytes: blksz, or less for a directory's last block), in
// on-disk order. Throws CorruptError naming `dir_nid` and `block_index` when the nameoffs, names,
// file types or the order are invalid.
std::vector<RawDirent> parse_dir_block(std::span<const uint8_t> block, uint64_t dir_nid, uint64_t block_index);

// EROFS order: unsigned bytewise, a shorter prefix first (the same as memcmp-based string_view compare).
inline int compare_names(std::string_view a, std::string_view b) { return a.compare(b); }

}  // namespace erofs::reader
