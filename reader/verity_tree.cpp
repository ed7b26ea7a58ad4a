#include "reader/verity_tree.h"

#include <algorithm>

#include <fmt/format.h>

#include "reader/checked.h"
#include "verity/block_hasher.h"
#include "verity/layout.h"
#include "verity/params.h"

namespace erofs::reader {
namespace {

StoredSuperblock decode_at(uint64_t offset, std::span<const uint8_t> bytes) {
  StoredSuperblock s{offset, format::VeritySuperblock{}, {}};
  s.damage = format::VeritySuperblock::decode(bytes, *s.superblock);
  if (!s.damage.empty()) s.superblock.reset();
  return s;
}

}  // namespace

uint64_t filesystem_bytes(const Image& image) {
  return checked::shl(image.superblock().blocks(), image.superblock().blkszbits);
}

std::optional<StoredSuperblock> find_appended_superblock(const Image& image) {
  const uint64_t end = filesystem_bytes(image);
  std::vector<uint8_t> bytes(format::VeritySuperblock::kSize);
  for (uint64_t align = 512, last = UINT64_MAX; align <= 4096; align *= 2) {
    const uint64_t at = checked::round_up(end, align);
    if (at == last) continue;  // the same candidate as the smaller alignment
    last = at;
    if (checked::add(at, bytes.size()) > image.image_size()) return std::nullopt;
    image.read_raw(at, bytes);
    if (std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; })) continue;
    if (!format::VeritySuperblock::recognisable(bytes)) return std::nullopt;
    return decode_at(at, bytes);
  }
  return std::nullopt;
}

StoredSuperblock read_superblock(const HashDevice& device) {
  std::vector<uint8_t> bytes(format::VeritySuperblock::kSize);
  if (device.size() < bytes.size())
    return {0, std::nullopt, fmt::format("verity superblock: the file has {} bytes, not {}", device.size(), bytes.size())};
  device.read(0, bytes);
  return decode_at(0, bytes);
}

std::vector<uint8_t> stored_root_hash(const Image& image, const HashDevice& device, const StoredSuperblock& stored) {
  const verity::Params params = verity::params_of(*stored.superblock);
  const verity::Layout layout = verity::compute_layout(params, stored.superblock->data_blocks);
  std::vector<uint8_t> block(layout.levels.empty() ? layout.data_block_size : layout.hash_block_size);
  if (layout.levels.empty())
    image.read_raw(0, block);  // one data block: its hash is the root
  else
    device.read(verity::tree_offset(stored.offset, layout.hash_block_size), block);  // the top block comes first
  std::vector<uint8_t> root(layout.digest_size);
  verity::BlockHasher(params.algorithm, params.salt).hash(block, root.data());
  return root;
}

}  // namespace erofs::reader
