// Extended attributes: the inline ibody header, entries (inline and shared alike), name indexes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace erofs::format {

inline constexpr uint32_t kXattrIbodyHeaderSize = 12;
inline constexpr uint32_t kXattrEntryHeaderSize = 4;
inline constexpr uint8_t kXattrLongPrefixBit = 0x80;

enum XattrIndex : uint8_t {
  kXattrIndexNone = 0,
  kXattrIndexUser = 1,
  kXattrIndexPosixAclAccess = 2,
  kXattrIndexPosixAclDefault = 3,
  kXattrIndexTrusted = 4,
  kXattrIndexLustre = 5,
  kXattrIndexSecurity = 6,
};

struct XattrIbodyHeader {
  uint32_t name_filter = 0;
  uint8_t shared_count = 0;

  void encode(uint8_t* out) const;  // 12 bytes
  static XattrIbodyHeader decode(const uint8_t* in);
};

struct XattrEntryHeader {
  uint8_t name_len = 0;
  uint8_t name_index = 0;
  uint16_t value_size = 0;

  void encode(uint8_t* out) const;  // 4 bytes
  static XattrEntryHeader decode(const uint8_t* in);
  // Entry size with its name and value, padded to 4 bytes.
  uint32_t entry_size() const { return (kXattrEntryHeaderSize + name_len + value_size + 3) & ~3u; }
};

// The prefix string a short name index stands for ("user.", "system.posix_acl_access", ...);
// nullopt for 0 and unknown indexes.
std::optional<std::string_view> xattr_prefix(uint8_t index);

// Splits a full xattr name into the longest matching short index and the rest. ACL names map to
// their index with an empty rest. Returns nullopt when no index matches (such names cannot be stored
// without long prefixes).
struct SplitName {
  uint8_t index;
  std::string_view suffix;
};
std::optional<SplitName> split_xattr_name(std::string_view name);

// Whether an xattr can be stored at all: a known namespace prefix, at most 255 bytes of name after
// it and 65535 bytes of value (the entry header's name_len and value_size). A directory on Linux
// cannot hold anything else, but an archive can.
bool storable_xattr(std::string_view name, size_t value_size);

// Seed of the xattr name filter's xxh32 for a base index; the filter has 32 bits.
inline constexpr uint32_t kXattrFilterSeed = 0x25BBE08F;
inline constexpr uint32_t kXattrFilterBits = 32;

}  // namespace erofs::format
