// Extended attributes: the inline ibody, shared entries and long name prefixes.
#include <fmt/format.h>

#include "format/constants.h"
#include "format/endian.h"
#include "format/xattr.h"
#include "format/xattr_prefix.h"
#include "reader/checked.h"
#include "reader/image_impl.h"

namespace erofs::reader {

namespace {

std::string_view bytes_as_text(std::span<const uint8_t> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace

std::vector<Xattr> ImageImpl::xattrs(const Inode& ino) const {
  using namespace format;
  if (ino.xattr_size == 0) return {};
  // icount 1 would be a header with no room for anything; mkfs never writes it.
  if (ino.xattr_size == kXattrIbodyHeaderSize)
    throw CorruptError(fmt::format("nid {}: xattr area of only a header", ino.nid));
  std::vector<uint8_t> body(ino.xattr_size);  // at most 12 + 4 * 65534 bytes (icount is 16-bit)
  read_meta(ino.in_metabox(), ino.pos + ino.disk.disk_size(), body);
  const auto header = XattrIbodyHeader::decode(body.data());
  const size_t inline_start = kXattrIbodyHeaderSize + 4u * header.shared_count;
  if (inline_start > body.size())
    throw CorruptError(fmt::format("nid {}: {} shared xattr ids do not fit in the xattr area", ino.nid,
                                   header.shared_count));

  // Inline entries first, then the shared ones: the kernel's listxattr order.
  std::vector<Xattr> out;
  for (size_t p = inline_start; p < body.size();) {
    const auto entry = XattrEntryHeader::decode(body.data() + p);  // p + 4 <= size: the area is 4-byte granular
    if (entry.entry_size() > body.size() - p)
      throw CorruptError(fmt::format("nid {}: xattr entry at {} runs past the xattr area", ino.nid, p));
    const auto rest = std::span<const uint8_t>(body).subspan(p + kXattrEntryHeaderSize);
    if (auto name = xattr_name(ino.nid, entry.name_index, bytes_as_text(rest.first(entry.name_len))))
      out.push_back({std::move(*name), std::string(bytes_as_text(rest.subspan(entry.name_len, entry.value_size)))});
    p += entry.entry_size();
  }
  for (uint32_t i = 0; i < header.shared_count; ++i)
    read_shared_xattr(ino.nid, get_le32(body.data() + kXattrIbodyHeaderSize + 4 * i), out);
  return out;
}

void ImageImpl::read_shared_xattr(uint64_t nid, uint32_t id, std::vector<Xattr>& out) const {
  using namespace format;
  const bool in_mb = sb_.feature_compat & kCompatSharedEaInMetabox;
  const uint64_t pos = checked::add(checked::shl(sb_.xattr_blkaddr, sb_.blkszbits), uint64_t(id) * 4);
  uint8_t head[kXattrEntryHeaderSize];
  if (checked::add(pos, sizeof head) > meta_size(in_mb))
    throw CorruptError(fmt::format("nid {}: shared xattr {} is outside the image", nid, id));
  read_meta(in_mb, pos, head);
  const auto entry = XattrEntryHeader::decode(head);
  std::vector<uint8_t> payload(size_t(entry.name_len) + entry.value_size);  // at most 255 + 65535 bytes
  if (checked::add(pos + sizeof head, payload.size()) > meta_size(in_mb))
    throw CorruptError(fmt::format("nid {}: shared xattr {} runs past the image", nid, id));
  read_meta(in_mb, pos + sizeof head, payload);
  const auto bytes = std::span<const uint8_t>(payload);
  if (auto name = xattr_name(nid, entry.name_index, bytes_as_text(bytes.first(entry.name_len))))
    out.push_back({std::move(*name), std::string(bytes_as_text(bytes.subspan(entry.name_len)))});
}

// The full name, or nullopt for entries without a namespace the kernel would show (index 0
// covers the all-zero padding entries too).
std::optional<std::string> ImageImpl::xattr_name(uint64_t nid, uint8_t index, std::string_view suffix) const {
  if (index & format::kXattrLongPrefixBit) {
    const auto& prefixes = long_prefixes();
    const uint8_t i = index & ~format::kXattrLongPrefixBit;
    if (i >= prefixes.size())
      throw CorruptError(fmt::format("nid {}: xattr uses long prefix {} of {}", nid, i, prefixes.size()));
    return prefixes[i] + std::string(suffix);
  }
  const auto prefix = format::xattr_prefix(index);
  if (!prefix) return std::nullopt;
  return std::string(*prefix) + std::string(suffix);
}

const std::vector<std::string>& ImageImpl::long_prefixes() const {
  using namespace format;
  std::lock_guard lock(prefixes_mutex_);
  if (prefixes_) return *prefixes_;

  // Where the records live (format §2.12): raw on the device when PLAIN_XATTR_PFX says so or when
  // there is nowhere else, otherwise in the metabox or packed inode's data.
  const bool plain = (sb_.feature_compat & kCompatPlainXattrPfx) || (!metabox_ && !packed_);
  auto read_at = [&](uint64_t pos, std::span<uint8_t> buf) {
    if (plain || metabox_) {
      if (checked::add(pos, buf.size()) > meta_size(!plain))
        throw CorruptError(fmt::format("long xattr prefix at byte {} is outside its stream", pos));
      return read_meta(!plain, pos, buf);
    }
    if (read(*packed_, pos, buf) != buf.size())
      throw CorruptError(fmt::format("long xattr prefix at byte {} is beyond the packed inode", pos));
  };

  std::vector<std::string> prefixes;
  const uint32_t count = sb_.has_incompat(kIncompatXattrPrefixes) ? sb_.xattr_prefix_count : 0;
  if (count > kLongPrefixMaxCount) throw CorruptError(fmt::format("{} long xattr prefixes (at most 128)", count));
  uint64_t pos = uint64_t(sb_.xattr_prefix_start) * 4;
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t head[kLongPrefixHeaderSize];
    read_at(pos, head);
    const auto record = LongPrefixHeader::decode(head);
    if (record.len == 0 || record.len > kLongPrefixMaxLen)
      throw CorruptError(fmt::format("long xattr prefix {} has length {}", i, record.len));
    const auto base = xattr_prefix(record.base_index);
    if (!base && record.base_index != kXattrIndexNone)
      throw CorruptError(fmt::format("long xattr prefix {} has base index {}", i, record.base_index));
    std::string prefix(base.value_or(""));
    std::vector<uint8_t> infix(record.infix_size());
    read_at(pos + kLongPrefixHeaderSize, infix);
    prefix += bytes_as_text(infix);
    prefixes.push_back(std::move(prefix));
    pos = checked::add(pos, record.stride());
  }
  prefixes_ = std::move(prefixes);
  return *prefixes_;
}

}  // namespace erofs::reader
