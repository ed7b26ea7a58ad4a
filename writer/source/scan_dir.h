// Builds a Tree from a directory on disk (lstat, readdir, xattrs; links never followed).
#pragma once

#include <string>

#include "writer/options.h"
#include "writer/source/tree.h"

namespace erofs::writer {

struct ScanResult {
  Tree tree;
  uint64_t skipped = 0;  // unreadable inputs skipped under ignore_unreadable
};

// Throws BuildError naming the path on the first unreadable input, unless ignore_unreadable, in
// which case `warn` is called and the entry is left out.
ScanResult scan_directory(const std::string& root, const SourceOptions& options,
                          const std::function<void(const std::string&)>& warn);

// Opens a regular file of the source for reading, also when its path is longer than PATH_MAX.
int open_source_file(const std::string& path);

// Reads exactly `len` bytes at `offset`; throws BuildError naming `path` on an error or when the
// file is shorter than it was when scanned. at_end: the file must also end there, else it grew
// (`buf` then has room for len + 1 bytes).
void read_source(int fd, const std::string& path, uint64_t offset, uint8_t* buf, size_t len, bool at_end = false);

}  // namespace erofs::writer
