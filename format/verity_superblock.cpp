#include "format/verity_superblock.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "format/endian.h"

namespace erofs::format {
namespace {

// Field offsets (veritysetup's struct verity_sb, packed, little-endian).
constexpr size_t kSignature = 0, kVersion = 8, kHashType = 12, kUuid = 16, kAlgorithm = 32,
                 kDataBlockSize = 64, kHashBlockSize = 68, kDataBlocks = 72, kSaltSize = 80,
                 kSalt = 88;
constexpr size_t kAlgorithmField = 32;
constexpr char kMagic[8] = {'v', 'e', 'r', 'i', 't', 'y', 0, 0};
// Version 1 of the superblock, hash type 1: the standard dm-verity tree, hashes of salt || block
// (type 0, Chrome OS's block || salt, is not written or read here).
constexpr uint32_t kSuperblockVersion = 1;
constexpr uint32_t kHashTypeNormal = 1;

bool all_zero(const uint8_t* begin, const uint8_t* end) {
  return std::all_of(begin, end, [](uint8_t b) { return b == 0; });
}

bool block_size_ok(uint32_t size) {
  return size >= VeritySuperblock::kMinBlockSize && size <= VeritySuperblock::kMaxBlockSize &&
         (size & (size - 1)) == 0;
}

bool has_signature(std::span<const uint8_t> in) {
  return in.size() >= kSignature + sizeof kMagic && std::memcmp(in.data() + kSignature, kMagic, sizeof kMagic) == 0;
}

}  // namespace

void VeritySuperblock::encode(std::span<uint8_t> out) const {
  if (algorithm.size() > kMaxAlgorithmName) throw std::invalid_argument("verity algorithm name too long");
  if (salt.size() > kMaxSalt) throw std::invalid_argument("verity salt longer than 256 bytes");
  uint8_t* p = out.subspan(0, kSize).data();
  std::memset(p, 0, kSize);
  std::memcpy(p + kSignature, kMagic, sizeof kMagic);
  put_le32(p + kVersion, kSuperblockVersion);
  put_le32(p + kHashType, kHashTypeNormal);
  std::memcpy(p + kUuid, uuid.data(), uuid.size());
  std::memcpy(p + kAlgorithm, algorithm.data(), algorithm.size());
  put_le32(p + kDataBlockSize, data_block_size);
  put_le32(p + kHashBlockSize, hash_block_size);
  put_le64(p + kDataBlocks, data_blocks);
  put_le16(p + kSaltSize, uint16_t(salt.size()));
  std::copy(salt.begin(), salt.end(), p + kSalt);  // (memcpy from an empty vector's null data() is undefined)
}

bool VeritySuperblock::recognisable(std::span<const uint8_t> in) {
  return has_signature(in) || (in.size() >= kHashType + 4 && get_le32(in.data() + kVersion) == kSuperblockVersion &&
                               get_le32(in.data() + kHashType) == kHashTypeNormal);
}

std::string VeritySuperblock::decode(std::span<const uint8_t> in, VeritySuperblock& out) {
  if (in.size() < kSize) return fmt::format("verity superblock: {} bytes, needs {}", in.size(), kSize);
  const uint8_t* p = in.data();
  if (!has_signature(in)) return "verity superblock: no \"verity\" signature";
  if (uint32_t v = get_le32(p + kVersion); v != kSuperblockVersion)
    return fmt::format("verity superblock: version {} (only 1 is defined)", v);
  if (uint32_t t = get_le32(p + kHashType); t != kHashTypeNormal)
    return fmt::format("verity superblock: hash type {} (only 1, salt before data, is supported)", t);

  const uint8_t* name = p + kAlgorithm;
  const uint8_t* name_end = std::find(name, name + kAlgorithmField, 0);
  if (name_end == name) return "verity superblock: no hash algorithm name";
  if (name_end == name + kAlgorithmField) return "verity superblock: hash algorithm name not terminated";
  if (!all_zero(name_end, name + kAlgorithmField)) return "verity superblock: bytes after the algorithm name are not zero";

  const uint32_t data_block_size = get_le32(p + kDataBlockSize);
  const uint32_t hash_block_size = get_le32(p + kHashBlockSize);
  if (!block_size_ok(data_block_size))
    return fmt::format("verity superblock: data block size {} is not a power of two from 512 to 512 KiB", data_block_size);
  if (!block_size_ok(hash_block_size))
    return fmt::format("verity superblock: hash block size {} is not a power of two from 512 to 512 KiB", hash_block_size);
  const uint64_t data_blocks = get_le64(p + kDataBlocks);
  if (data_blocks == 0) return "verity superblock: data block count is 0";

  const uint16_t salt_size = get_le16(p + kSaltSize);
  if (salt_size > kMaxSalt) return fmt::format("verity superblock: salt size {} exceeds 256", salt_size);
  if (!all_zero(p + kSaltSize + 2, p + kSalt)) return "verity superblock: padding after the salt size is not zero";
  if (!all_zero(p + kSalt + salt_size, p + kSize)) return "verity superblock: bytes after the salt are not zero";

  std::memcpy(out.uuid.data(), p + kUuid, out.uuid.size());
  out.algorithm.assign(name, name_end);
  out.data_block_size = data_block_size;
  out.hash_block_size = hash_block_size;
  out.data_blocks = data_blocks;
  out.salt.assign(p + kSalt, p + kSalt + salt_size);
  return {};
}

}  // namespace erofs::format
