// An inode's record in the inode area: the inode, its xattr body, then the chunk map or the
// compressed-file map header and indexes, then inline data (a flat tail or an inline pcluster).
// Sizes come without encoding anything (the writer asks while deciding where tails and records
// go); the index bytes are encoded once, when the record is written.
#pragma once

#include <cstdint>
#include <vector>

#include "writer/layout/plan.h"

namespace erofs::writer {

struct RecordLayout {
  uint64_t index_off = 0;    // from the inode's position
  uint64_t index_size = 0;   // chunk map, or map header + lcluster indexes
  uint64_t inline_off = 0;
  uint64_t inline_size = 0;  // the bytes themselves: Plan::inline_bytes, or a directory's tail
  uint64_t size = 0;         // the whole record
};

// `pos` is the record's byte position in the inode area (a multiple of 32).
RecordLayout layout_record(const Plan& p, uint64_t pos);

// The chunk map, or map header and lcluster indexes, of the record at `pos`
// (layout_record(p, pos).index_size bytes).
std::vector<uint8_t> encode_record_index(const Plan& p, uint64_t pos);

// The on-disk inode (p.inode_size() bytes) with `xattr_icount` from the xattr plan.
void encode_inode(const Plan& p, uint16_t xattr_icount, uint8_t* out);

}  // namespace erofs::writer
