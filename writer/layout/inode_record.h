// The bytes that follow an inode in the inode area: xattr body, then the chunk map or the
// compressed-file map header and indexes, then inline data (a flat tail or an inline pcluster).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "writer/layout/plan.h"

namespace erofs::writer {

struct RecordLayout {
  uint64_t index_off = 0;        // from the inode's position
  std::vector<uint8_t> index;    // chunk map, or map header + lcluster indexes
  uint64_t inline_off = 0;
  uint64_t inline_size = 0;  // the bytes themselves: Plan::inline_bytes, or a directory's tail
  uint64_t size = 0;             // the whole record
};

// `pos` is the record's byte position in the inode area (a multiple of 32).
RecordLayout layout_record(const Plan& p, uint64_t pos);

}  // namespace erofs::writer
