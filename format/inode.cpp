#include "format/inode.h"

#include <cstring>

#include "format/endian.h"

namespace erofs::format {

uint16_t DiskInode::format_field() const {
  return uint16_t((extended ? kInodeExtendedBit : 0) | (uint16_t(layout) << kInodeLayoutShift) |
                  (flag ? kInodeFlagBit : 0));
}

void DiskInode::encode(std::span<uint8_t> out) const {
  uint8_t* p = out.data();
  std::memset(p, 0, disk_size());
  put_le16(p + 0, format_field());
  put_le16(p + 2, xattr_icount);
  put_le16(p + 4, mode);
  put_le16(p + 6, nb);
  if (!extended) {
    put_le32(p + 8, uint32_t(size));
    put_le32(p + 12, uint32_t(mtime));
    put_le32(p + 16, u);
    put_le32(p + 20, ino);
    put_le16(p + 24, uint16_t(uid));
    put_le16(p + 26, uint16_t(gid));
    return;
  }
  put_le64(p + 8, size);
  put_le32(p + 16, u);
  put_le32(p + 20, ino);
  put_le32(p + 24, uid);
  put_le32(p + 28, gid);
  put_le64(p + 32, uint64_t(mtime));
  put_le32(p + 40, mtime_nsec);
  put_le32(p + 44, nlink);
}

DiskInode DiskInode::decode(std::span<const uint8_t> in) {
  const uint8_t* p = in.data();
  DiskInode ino;
  uint16_t fmt = get_le16(p);
  ino.extended = is_extended(fmt);
  ino.layout = Layout((fmt >> kInodeLayoutShift) & kInodeLayoutMask);
  ino.flag = fmt & kInodeFlagBit;
  ino.xattr_icount = get_le16(p + 2);
  ino.mode = get_le16(p + 4);
  ino.nb = get_le16(p + 6);
  ino.u = get_le32(p + 16);
  ino.ino = get_le32(p + 20);
  if (!ino.extended) {
    ino.size = get_le32(p + 8);
    ino.mtime = get_le32(p + 12);
    ino.uid = get_le16(p + 24);
    ino.gid = get_le16(p + 26);
    ino.nlink = ino.nb;
    return ino;
  }
  ino.size = get_le64(p + 8);
  ino.uid = get_le32(p + 24);
  ino.gid = get_le32(p + 28);
  ino.mtime = int64_t(get_le64(p + 32));
  ino.mtime_nsec = get_le32(p + 40);
  ino.nlink = get_le32(p + 44);
  return ino;
}

uint32_t encode_rdev(uint32_t major, uint32_t minor) {
  return (minor & 0xFF) | (major << 8) | ((minor & ~0xFFu) << 12);
}

void decode_rdev(uint32_t v, uint32_t& major, uint32_t& minor) {
  major = (v & 0xFFF00) >> 8;
  minor = (v & 0xFF) | ((v >> 12) & 0xFFF00);
}

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::FlatPlain: return "flat-plain";
    case Layout::CompressedFull: return "compressed-full";
    case Layout::FlatInline: return "flat-inline";
    case Layout::CompressedCompact: return "compressed-compact";
    case Layout::ChunkBased: return "chunk-based";
  }
  return "unknown";
}

}  // namespace erofs::format
