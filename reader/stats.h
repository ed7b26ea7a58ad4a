// What an image holds, counted by walking its tree from the root: inodes by type, inode form and
// data layout, file bytes, and the data blocks the files' contents occupy. For `erofs dump` and
// anything else that reports on an image; the counting lives here so that tools only print.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "reader/image.h"

namespace erofs::reader {

struct ImageStats {
  std::map<std::string, uint64_t> by_type;    // "regular", "directory", "symlink", "chardev", ...
  std::map<std::string, uint64_t> by_layout;  // format::layout_name(), for files, directories and symlinks
  uint64_t inodes = 0, compact_inodes = 0, extended_inodes = 0;
  uint64_t file_bytes = 0;   // regular files' sizes, each inode once
  uint64_t data_blocks = 0;  // blocks of file, directory and symlink data outside the inode area, and
                             // of the packed inode's (the fragments)
};

// Every inode reachable from the root, once (hard links and directory loops do not count twice).
// Throws CorruptError (or the reader's other errors) on what the walk cannot read.
ImageStats count_image(const Image& image);

}  // namespace erofs::reader
