// Encodes a directory's entries into directory blocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace erofs::writer {

struct DirRecord {
  std::string name;
  uint64_t nid;
  uint8_t file_type;
};

// `entries` must be sorted bytewise and include "." and "..". The result is exactly as long as
// format::DirSizer says: every block but the last is block_size bytes.
std::vector<uint8_t> encode_directory(const std::vector<DirRecord>& entries, uint32_t block_size);

}  // namespace erofs::writer
