// Builds an EROFS image from a source tree.
#pragma once

#include <string>

#include "writer/options.h"
#include "writer/source/tree.h"

namespace erofs::writer {

// Walks `source_dir` and writes the image to `image_path` (through a temporary file beside it).
// Throws BuildError with a one-line message on failure; nothing is left under image_path then.
BuildStats build_image(const std::string& source_dir, const std::string& image_path, const BuildOptions& options);

// Writes an image of an already assembled tree.
BuildStats build_image(Tree& tree, const std::string& image_path, const BuildOptions& options);

}  // namespace erofs::writer
