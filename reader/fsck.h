// Checks every structure of an image: superblock, inodes, directories (names, order, "." and
// "..", file types), link counts, directory loops, xattrs, symlinks and all file data.
//
// One thread walks the tree; the data of files is checked by workers (large files in pieces that
// end on extent boundaries). Problems carry their place in the walk and are reported in that
// order, so the report is the same for any number of workers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace erofs::reader {

struct FsckOptions {
  bool check_data = true;  // read (and decompress) every byte of every file
  size_t max_problems = 1000;
  // Threads checking data; 0: two per core (reads around the page cache wait for the disk, and
  // another worker decodes meanwhile); 1: all on the calling thread.
  unsigned workers = 0;
};

struct FsckReport {
  std::vector<std::string> problems;  // one line each, in the order of the walk
  uint64_t inodes = 0, directories = 0, files = 0, data_bytes = 0;
  bool clean() const { return problems.empty(); }
};

// Never throws for a damaged image: every failure becomes a problem line. Throws only when the
// image cannot be opened at all (the message says why).
FsckReport fsck_image(const std::string& path, const FsckOptions& options);

}  // namespace erofs::reader
