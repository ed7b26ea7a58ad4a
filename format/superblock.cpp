#include "format/superblock.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "format/constants.h"
#include "format/crc32c.h"
#include "format/endian.h"

namespace erofs::format {

uint64_t Superblock::root_nid() const {
  if (has_incompat(kIncompat48Bit) && root_nid_8b != 0) return root_nid_8b;
  return root_nid_2b;
}

uint64_t Superblock::blocks() const {
  if (has_incompat(kIncompat48Bit) && root_nid_8b != 0) return blocks_lo | (uint64_t(root_nid_2b) << 32);
  return blocks_lo;
}

std::string Superblock::label() const {
  auto end = std::find(volume_name.begin(), volume_name.end(), 0);
  return std::string(volume_name.begin(), end);
}

std::string Superblock::uuid_text() const {
  std::string s;
  for (int i = 0; i < 16; ++i) s += fmt::format("{}{:02x}", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "", uuid[i]);
  return s;
}

void Superblock::encode(std::span<uint8_t> out) const {
  uint8_t* p = out.data();
  std::memset(p, 0, size());
  put_le32(p + 0, magic);
  put_le32(p + 4, checksum);
  put_le32(p + 8, feature_compat);
  p[12] = blkszbits;
  p[13] = sb_extslots;
  put_le16(p + 14, root_nid_2b);
  put_le64(p + 16, inos);
  put_le64(p + 24, uint64_t(epoch));
  put_le32(p + 32, fixed_nsec);
  put_le32(p + 36, blocks_lo);
  put_le32(p + 40, meta_blkaddr);
  put_le32(p + 44, xattr_blkaddr);
  std::memcpy(p + 48, uuid.data(), 16);
  std::memcpy(p + 64, volume_name.data(), 16);
  put_le32(p + 80, feature_incompat);
  put_le16(p + 84, u1);
  put_le16(p + 86, extra_devices);
  put_le16(p + 88, devt_slotoff);
  p[90] = dirblkbits;
  p[91] = xattr_prefix_count;
  put_le32(p + 92, xattr_prefix_start);
  put_le64(p + 96, packed_nid);
  p[104] = xattr_filter_reserved;
  p[105] = ishare_xattr_prefix_id;
  put_le32(p + 108, build_time);
  put_le64(p + 112, root_nid_8b);
  if (sb_extslots >= 1) put_le64(p + 128, metabox_nid);
}

Superblock Superblock::decode(std::span<const uint8_t> in) {
  const uint8_t* p = in.data();
  Superblock sb;
  sb.magic = get_le32(p + 0);
  sb.checksum = get_le32(p + 4);
  sb.feature_compat = get_le32(p + 8);
  sb.blkszbits = p[12];
  sb.sb_extslots = p[13];
  sb.root_nid_2b = get_le16(p + 14);
  sb.inos = get_le64(p + 16);
  sb.epoch = int64_t(get_le64(p + 24));
  sb.fixed_nsec = get_le32(p + 32);
  sb.blocks_lo = get_le32(p + 36);
  sb.meta_blkaddr = get_le32(p + 40);
  sb.xattr_blkaddr = get_le32(p + 44);
  std::memcpy(sb.uuid.data(), p + 48, 16);
  std::memcpy(sb.volume_name.data(), p + 64, 16);
  sb.feature_incompat = get_le32(p + 80);
  sb.u1 = get_le16(p + 84);
  sb.extra_devices = get_le16(p + 86);
  sb.devt_slotoff = get_le16(p + 88);
  sb.dirblkbits = p[90];
  sb.xattr_prefix_count = p[91];
  sb.xattr_prefix_start = get_le32(p + 92);
  sb.packed_nid = get_le64(p + 96);
  sb.xattr_filter_reserved = p[104];
  sb.ishare_xattr_prefix_id = p[105];
  sb.build_time = get_le32(p + 108);
  sb.root_nid_8b = get_le64(p + 112);
  if (sb.sb_extslots >= 1 && in.size() >= 136) sb.metabox_nid = get_le64(p + 128);
  return sb;
}

uint32_t checksum_length(uint32_t block_size) {
  return block_size > kSuperblockOffset ? block_size - uint32_t(kSuperblockOffset) : block_size;
}

uint32_t compute_checksum(std::span<const uint8_t> region) {
  uint8_t head[8];
  std::memcpy(head, region.data(), 8);
  std::memset(head + 4, 0, 4);
  uint32_t crc = crc32c_update(~0u, head, 8);
  return crc32c_update(crc, region.data() + 8, region.size() - 8);
}

namespace {

std::vector<std::string> names_of(uint32_t bits, std::initializer_list<std::pair<uint32_t, const char*>> table) {
  std::vector<std::string> out;
  for (auto [bit, name] : table) {
    if (bits & bit) out.emplace_back(name);
    bits &= ~bit;
  }
  for (unsigned b = 0; b < 32; ++b)
    if (bits & (1u << b)) out.push_back(fmt::format("unknown(0x{:x})", 1u << b));
  return out;
}

}  // namespace

std::vector<std::string> incompat_feature_names(uint32_t bits) {
  return names_of(bits, {{kIncompatZeroPadding, "0padding"},
                         {kIncompatComprCfgs, "compr_cfgs/big_pcluster"},
                         {kIncompatChunkedFile, "chunked_file"},
                         {kIncompatDeviceTable, "device_table"},
                         {kIncompatZtailpacking, "ztailpacking"},
                         {kIncompatFragments, "fragments/dedupe"},
                         {kIncompatXattrPrefixes, "xattr_prefixes"},
                         {kIncompat48Bit, "48bit"},
                         {kIncompatMetabox, "metabox"}});
}

std::vector<std::string> compat_feature_names(uint32_t bits) {
  return names_of(bits, {{kCompatSbChksum, "sb_csum"},
                         {kCompatMtime, "mtime"},
                         {kCompatXattrFilter, "xattr_filter"},
                         {kCompatSharedEaInMetabox, "shared_ea_in_metabox"},
                         {kCompatPlainXattrPfx, "plain_xattr_pfx"},
                         {kCompatIshareXattrs, "ishare_xattrs"}});
}

}  // namespace erofs::format
