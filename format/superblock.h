// The 128-byte superblock (+16 bytes per extension slot) at byte 1024 of the image.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace erofs::format {

struct Superblock {
  uint32_t magic = 0;
  uint32_t checksum = 0;
  uint32_t feature_compat = 0;
  uint8_t blkszbits = 12;
  uint8_t sb_extslots = 0;
  uint16_t root_nid_2b = 0;  // blocks_hi with 48BIT and root_nid_8b != 0
  uint64_t inos = 0;
  int64_t epoch = 0;
  uint32_t fixed_nsec = 0;
  uint32_t blocks_lo = 0;
  uint32_t meta_blkaddr = 0;
  uint32_t xattr_blkaddr = 0;
  std::array<uint8_t, 16> uuid{};
  std::array<uint8_t, 16> volume_name{};
  uint32_t feature_incompat = 0;
  uint16_t u1 = 0;  // available_compr_algs (COMPR_CFGS) or lz4_max_distance
  uint16_t extra_devices = 0;
  uint16_t devt_slotoff = 0;
  uint8_t dirblkbits = 0;
  uint8_t xattr_prefix_count = 0;
  uint32_t xattr_prefix_start = 0;
  uint64_t packed_nid = 0;
  uint8_t xattr_filter_reserved = 0;
  uint8_t ishare_xattr_prefix_id = 0;
  uint32_t build_time = 0;
  uint64_t root_nid_8b = 0;
  uint64_t metabox_nid = 0;

  static constexpr size_t kEncodedSize = 144;  // with one extension slot

  uint32_t block_size() const { return 1u << blkszbits; }
  uint32_t size() const { return 128 + 16u * sb_extslots; }
  bool has_incompat(uint32_t bit) const { return (feature_incompat & bit) != 0; }
  uint64_t root_nid() const;
  uint64_t blocks() const;
  std::string label() const;
  std::string uuid_text() const;  // xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx

  // `out` must hold size() bytes; the checksum field is written as stored in `checksum`.
  void encode(std::span<uint8_t> out) const;
  // `in` must hold at least 128 bytes (144 to read the extension slot). No validation here.
  static Superblock decode(std::span<const uint8_t> in);
};

// Bytes the superblock checksum covers: from byte 1024 to the end of the block holding it.
uint32_t checksum_length(uint32_t block_size);
// CRC32C of `region` (checksum_length bytes starting at the superblock) with the checksum field zeroed.
uint32_t compute_checksum(std::span<const uint8_t> region);

// Names of the feature bits set in `bits`, for dump and error messages; unknown bits as hex.
std::vector<std::string> incompat_feature_names(uint32_t bits);
std::vector<std::string> compat_feature_names(uint32_t bits);

}  // namespace erofs::format
