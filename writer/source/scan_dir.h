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

}  // namespace erofs::writer
