// The dm-verity fields that mkfs, fsck and dump print (root hash, salt, hash offset, algorithm,
// block sizes, data block count), in one spelling for all three, as text and as the JSON object
// `"verity": {...}`. They travel as the library's erofs::VeritySummary.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "erofs-kit/erofs.hpp"
#include "format/verity_superblock.h"

namespace erofs::tools {

// What a stored superblock at `hash_offset` says, with the tree's root hash. Throws
// verity::ParamError for parameters dm-verity refuses.
VeritySummary verity_summary(const format::VeritySuperblock& sb, uint64_t hash_offset,
                             std::span<const uint8_t> root_hash);

// {"root_hash": ..., "salt": ..., "hash_offset": ..., "hash_algorithm": ..., "data_block_size": ...,
//  "hash_block_size": ..., "data_blocks": ..., "tree_bytes": ...}, and "seconds" after a build.
std::string verity_json(const VeritySummary& v);

// Label and value, one pair a line: root hash, salt, hash offset (and in which file), hash
// algorithm, block sizes, data blocks.
std::vector<std::pair<std::string, std::string>> verity_lines(const VeritySummary& v, const std::string& hash_device);

}  // namespace erofs::tools
