// A salt and a superblock UUID derived from content instead of drawn at random (veritysetup's
// way), so that equal inputs give byte-identical trees and images.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace erofs::verity {

// 32 bytes (veritysetup's salt size) from `seed`, something that identifies the data and is
// known before its tree is built (the image's content hash).
std::vector<uint8_t> derive_salt(std::span<const uint8_t> seed);
// A UUID from the tree's root hash (which covers the salt and every data block), marked as an
// RFC 9562 version 8 UUID like the image UUIDs mkfs derives.
std::array<uint8_t, 16> derive_uuid(std::span<const uint8_t> root_hash);

}  // namespace erofs::verity
