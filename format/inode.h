// Compact (32-byte) and extended (64-byte) on-disk inodes, decoded into one structure.
#pragma once

#include <cstdint>
#include <span>

#include "format/constants.h"

namespace erofs::format {

struct DiskInode {
  bool extended = false;
  Layout layout = Layout::FlatPlain;
  bool flag = false;  // NLINK_1 for compact non-directories, DOT_OMITTED for directories
  uint16_t xattr_icount = 0;
  uint16_t mode = 0;
  uint16_t nb = 0;  // i_nb: nlink (compact), or the high 16 bits of an address / block count
  uint64_t size = 0;
  uint32_t u = 0;  // i_u: start block, block count, chunk format or rdev
  uint32_t ino = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t mtime = 0;  // extended: seconds; compact: offset to the superblock epoch
  uint32_t mtime_nsec = 0;
  uint32_t nlink = 0;  // extended only; compact keeps it in nb

  uint32_t disk_size() const { return extended ? kExtendedInodeSize : kCompactInodeSize; }
  uint16_t format_field() const;

  // Encodes disk_size() bytes. Compact inodes take nlink from `nb`, and mtime as the unsigned
  // 32-bit offset to the epoch.
  void encode(std::span<uint8_t> out) const;
  // `in` holds at least 32 bytes, 64 when the format field says extended. Checks nothing: the
  // reader validates each field where it knows the context.
  static DiskInode decode(std::span<const uint8_t> in);
  // Only the first 2 bytes are needed to know the size of the inode.
  static bool is_extended(uint16_t format) { return format & kInodeExtendedBit; }
};

// Size of the inline xattr area for an i_xattr_icount value.
inline uint32_t xattr_ibody_size(uint16_t icount) { return icount ? 12 + 4u * (icount - 1) : 0; }

// "flat-plain", "compressed-full", "flat-inline", "compressed-compact", "chunk-based" or "unknown".
const char* layout_name(Layout layout);

// Device numbers in the kernel's "new" encoding stored in i_u.
uint32_t encode_rdev(uint32_t major, uint32_t minor);
void decode_rdev(uint32_t v, uint32_t& major, uint32_t& minor);

}  // namespace erofs::format
