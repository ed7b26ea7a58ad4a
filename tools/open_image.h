#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "reader/image.h"

namespace erofs::tools {

// Opens an image; any failure becomes one message that starts with the image's path.
inline std::unique_ptr<reader::Image> open_image(const std::string& path) {
  try {
    return reader::Image::open(path);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace erofs::tools
