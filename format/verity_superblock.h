// veritysetup's 512-byte verity superblock: what `veritysetup format` writes in front of a
// dm-verity hash tree (at --hash-offset) so that `veritysetup verify` and `open` find the tree's
// parameters on the hash device. The root hash is not in it; it travels separately.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace erofs::format {

struct VeritySuperblock {
  static constexpr size_t kSize = 512;
  static constexpr size_t kMaxAlgorithmName = 31;  // a 32-byte field that keeps a terminating NUL
  static constexpr size_t kMaxSalt = 256;
  static constexpr uint32_t kMinBlockSize = 512;
  static constexpr uint32_t kMaxBlockSize = 512 * 1024;  // veritysetup's limit, above the kernel's

  std::array<uint8_t, 16> uuid{};
  std::string algorithm;  // a kernel crypto name: "sha256"
  uint32_t data_block_size = 4096;
  uint32_t hash_block_size = 4096;
  uint64_t data_blocks = 0;
  std::vector<uint8_t> salt;

  // Writes kSize bytes to the start of `out` (version 1, hash type 1; unused bytes zero). Throws
  // std::invalid_argument when the algorithm name or the salt does not fit its field.
  void encode(std::span<uint8_t> out) const;
  // Reads kSize bytes from `in` into `out`. Returns an empty string when they form a valid
  // superblock, else one line saying what is wrong. Unused bytes must be zero, as veritysetup
  // writes them, so that any damage to the 512 bytes is noticed.
  static std::string decode(std::span<const uint8_t> in, VeritySuperblock& out);
  // Whether `in` is meant to be a superblock, damaged or not: it starts with veritysetup's
  // signature, or holds the version and hash type veritysetup writes after it (1 and 1), so that
  // one damaged byte still leaves it recognisable.
  static bool recognisable(std::span<const uint8_t> in);
};

}  // namespace erofs::format
