// Reads a finished image back and compares every entry with the tree it was built from.
#pragma once

#include <string>
#include <vector>

#include "writer/source/tree.h"

namespace erofs::lib {

struct VerifyOptions {
  bool check_mtime = true;  // off when compact inodes were forced (they keep no time of their own)
  size_t max_problems = 20;
};

// Returns one line per difference ("path: what differs"); empty when the image matches.
std::vector<std::string> verify_image(const writer::Tree& tree, const std::string& image_path, const VerifyOptions& options);

}  // namespace erofs::lib
