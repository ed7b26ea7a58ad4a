// Writes one regular file's content into the data area and says where it went.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/constants.h"
#include "writer/data/output_image.h"
#include "writer/layout/plan.h"
#include "writer/spill_file.h"

namespace erofs::writer {

struct FileDataOptions {
  uint32_t block_size;
  bool inline_tail;         // the tail fits next to the inode
  unsigned chunk_bits = 0;  // non-zero: CHUNK_BASED with chunks of this size, holes left unmapped
};

// Reads `path` (expected to hold `size` bytes) and appends its blocks to `out`. Throws BuildError naming the path on read errors or
// when the file changed size during the build. `bytes_read` receives the content bytes read.
// With `fd` >= 0 the content is the `size` bytes at `base` in that file (not closed; holes in it
// are holes of the file) and `path` only names it in messages.
FilePlacement write_file_data(OutputImage& out, SpillFile& tails, const std::string& path, uint64_t size,
                              const FileDataOptions& options, uint64_t& bytes_read, int fd = -1, uint64_t base = 0);

}  // namespace erofs::writer
