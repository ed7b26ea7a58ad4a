// Long xattr name prefixes (INCOMPAT_XATTR_PREFIXES): records of `le16 len, u8 base_index,
// infix[len - 1]`, each starting 4-byte aligned, the first at xattr_prefix_start * 4.
#pragma once

#include <cstdint>

namespace erofs::format {

inline constexpr uint32_t kLongPrefixHeaderSize = 3;  // le16 len + u8 base_index
inline constexpr uint32_t kLongPrefixMaxLen = 256;    // base_index + 255 infix bytes
inline constexpr uint32_t kLongPrefixMaxCount = 128;  // indexes left by kXattrLongPrefixBit

struct LongPrefixHeader {
  uint16_t len = 0;  // counts base_index and the infix
  uint8_t base_index = 0;

  uint32_t infix_size() const { return len ? len - 1u : 0; }
  // Bytes from this record's start to the next record's (4-byte aligned).
  uint32_t stride() const { return (2u + len + 3u) & ~3u; }

  void encode(uint8_t* out) const;  // kLongPrefixHeaderSize bytes
  static LongPrefixHeader decode(const uint8_t* in);
};

}  // namespace erofs::format
