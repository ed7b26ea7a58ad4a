// Writes one regular file's content into the data area and says where it went.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/constants.h"
#include "writer/image_file.h"
#include "writer/spill_file.h"

namespace erofs::writer {

struct FilePlacement {
  format::Layout layout = format::Layout::FlatPlain;
  uint64_t startblk = format::kNullAddr;
  uint64_t blocks = 0;              // data blocks written for this file
  SpillRef tail;                    // FLAT_INLINE: the bytes after the last full block
  uint16_t chunk_format = 0;        // CHUNK_BASED: i_u format (chunk bits, no indexes)
  std::vector<uint32_t> chunk_map;  // CHUNK_BASED: start block per chunk, kNullAddr for holes
};

struct FileDataOptions {
  uint32_t block_size;
  bool inline_tail;         // the tail fits next to the inode
  unsigned chunk_bits = 0;  // non-zero: CHUNK_BASED with chunks of this size, holes left unmapped
};

// Reads `path` (expected to hold `size` bytes) and appends its blocks to `out`. Throws BuildError naming the path on read errors or
// when the file changed size during the build. `bytes_read` receives the content bytes read.
// With `fd` >= 0 the content is the `size` bytes at `base` in that file (not closed; holes in it
// are holes of the file) and `path` only names it in messages.
FilePlacement write_file_data(ImageFile& out, SpillFile& tails, const std::string& path, uint64_t size,
                              const FileDataOptions& options, uint64_t& bytes_read, int fd = -1, uint64_t base = 0);

}  // namespace erofs::writer
