// Constants of the EROFS on-disk format (docs: shared erofs-format.md, sections 2 and 3).
#pragma once

#include <cstdint>

namespace erofs::format {

inline constexpr uint32_t kMagic = 0xE0F5E1E2;
inline constexpr uint64_t kSuperblockOffset = 1024;
inline constexpr uint32_t kSuperblockSize = 128;
inline constexpr unsigned kSlotBits = 5;  // inodes sit on 32-byte slots
inline constexpr uint32_t kSlotSize = 1u << kSlotBits;
inline constexpr unsigned kMinBlockBits = 9;
inline constexpr unsigned kMaxBlockBits = 12;  // the kernel accepts up to PAGE_SHIFT
inline constexpr uint32_t kNameMax = 255;
inline constexpr uint32_t kSymlinkMax = 4095;
inline constexpr uint32_t kNullAddr = 0xFFFFFFFF;

// feature_compat
inline constexpr uint32_t kCompatSbChksum = 0x01;
inline constexpr uint32_t kCompatMtime = 0x02;
inline constexpr uint32_t kCompatXattrFilter = 0x04;
inline constexpr uint32_t kCompatSharedEaInMetabox = 0x08;
inline constexpr uint32_t kCompatPlainXattrPfx = 0x10;
inline constexpr uint32_t kCompatIshareXattrs = 0x20;

// feature_incompat
inline constexpr uint32_t kIncompatZeroPadding = 0x001;
inline constexpr uint32_t kIncompatComprCfgs = 0x002;  // also BIG_PCLUSTER
inline constexpr uint32_t kIncompatChunkedFile = 0x004;
inline constexpr uint32_t kIncompatDeviceTable = 0x008;  // also COMPR_HEAD2
inline constexpr uint32_t kIncompatZtailpacking = 0x010;
inline constexpr uint32_t kIncompatFragments = 0x020;  // also DEDUPE
inline constexpr uint32_t kIncompatXattrPrefixes = 0x040;
inline constexpr uint32_t kIncompat48Bit = 0x080;
inline constexpr uint32_t kIncompatMetabox = 0x100;
inline constexpr uint32_t kIncompatAll = 0x1FF;

// i_format
inline constexpr uint16_t kInodeExtendedBit = 0x1;
inline constexpr unsigned kInodeLayoutShift = 1;
inline constexpr uint16_t kInodeLayoutMask = 0x7;
inline constexpr uint16_t kInodeFlagBit = 0x10;  // NLINK_1 (compact non-dirs) / DOT_OMITTED (dirs)
inline constexpr uint16_t kInodeFormatAllBits = 0x1F;
inline constexpr uint32_t kCompactInodeSize = 32;
inline constexpr uint32_t kExtendedInodeSize = 64;

enum class Layout : uint8_t {
  FlatPlain = 0,
  CompressedFull = 1,
  FlatInline = 2,
  CompressedCompact = 3,
  ChunkBased = 4,
};
inline constexpr bool is_compressed(Layout l) {
  return l == Layout::CompressedFull || l == Layout::CompressedCompact;
}

// Directory entry file types.
enum class FileType : uint8_t {
  Unknown = 0,
  Regular = 1,
  Directory = 2,
  CharDevice = 3,
  BlockDevice = 4,
  Fifo = 5,
  Socket = 6,
  Symlink = 7,
};
inline constexpr uint8_t kFileTypeMax = 7;

// Chunk-based i_u format bits.
inline constexpr uint16_t kChunkFormatBlkbitsMask = 0x1F;
inline constexpr uint16_t kChunkFormatIndexes = 0x20;
inline constexpr uint16_t kChunkFormat48Bit = 0x40;
inline constexpr uint16_t kChunkFormatAll = 0x7F;

// Compression limits enforced by the kernel (the 1 MiB pcluster limit is compress::kMaxPclusterBytes,
// which also bounds every codec buffer).
inline constexpr uint32_t kMaxExtentBytes = 12u << 20;

}  // namespace erofs::format
