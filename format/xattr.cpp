#include "format/xattr.h"

#include <array>
#include <limits>

#include "format/endian.h"

namespace erofs::format {

void XattrIbodyHeader::encode(uint8_t* out) const {
  put_le32(out, name_filter);
  out[4] = shared_count;
  for (int i = 5; i < 12; ++i) out[i] = 0;
}

XattrIbodyHeader XattrIbodyHeader::decode(const uint8_t* in) { return {get_le32(in), in[4]}; }

void XattrEntryHeader::encode(uint8_t* out) const {
  out[0] = name_len;
  out[1] = name_index;
  put_le16(out + 2, value_size);
}

XattrEntryHeader XattrEntryHeader::decode(const uint8_t* in) { return {in[0], in[1], get_le16(in + 2)}; }

namespace {

constexpr std::array<std::string_view, 7> kPrefixes = {
    "", "user.", "system.posix_acl_access", "system.posix_acl_default", "trusted.", "lustre.", "security.",
};

}  // namespace

std::optional<std::string_view> xattr_prefix(uint8_t index) {
  if (index == kXattrIndexNone || index >= kPrefixes.size()) return std::nullopt;
  return kPrefixes[index];
}

std::optional<SplitName> split_xattr_name(std::string_view name) {
  // ACL names are whole names; lustre. is defined but the kernel has no handler for it.
  for (uint8_t idx : {kXattrIndexPosixAclAccess, kXattrIndexPosixAclDefault})
    if (name == kPrefixes[idx]) return SplitName{idx, {}};
  for (uint8_t idx : {kXattrIndexUser, kXattrIndexTrusted, kXattrIndexSecurity}) {
    auto p = kPrefixes[idx];
    if (name.size() > p.size() && name.starts_with(p)) return SplitName{idx, name.substr(p.size())};
  }
  return std::nullopt;
}

bool storable_xattr(std::string_view name, size_t value_size) {
  auto split = split_xattr_name(name);
  return split && split->suffix.size() <= std::numeric_limits<decltype(XattrEntryHeader::name_len)>::max() &&
         value_size <= std::numeric_limits<decltype(XattrEntryHeader::value_size)>::max();
}

}  // namespace erofs::format
