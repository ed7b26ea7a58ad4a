// Writes one regular file's content into the data area and says where it went.
#pragma once

#include <cstdint>

#include "writer/data/output_image.h"
#include "writer/layout/plan.h"
#include "writer/source/file_content.h"
#include "writer/spill_file.h"

namespace erofs::writer {

struct FileDataOptions {
  uint32_t block_size;
  bool inline_tail;         // the tail fits next to the inode
  unsigned chunk_bits = 0;  // non-zero: CHUNK_BASED with chunks of this size, holes left unmapped
};

// Appends the file's blocks to `out` (the tail to `tails` when it goes inline); `bytes_read`: the
// content bytes read (holes of a chunked file are not). Throws BuildError naming the file on read
// errors or when it changed size since the scan (ContentReader).
FilePlacement write_file_data(OutputImage& out, SpillFile& tails, const ContentReader& in, const FileDataOptions& options,
                              uint64_t& bytes_read);

}  // namespace erofs::writer
