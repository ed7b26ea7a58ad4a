#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "reader/image.h"

namespace erofs::tools {

// Opens an image; any failure becomes one message that starts with the image's path. Reading
// tools skip the LZ4 offset-0 walk, which cost about a third of an extraction's time: the reader
// zeroes what it decodes into, so the bytes still depend on the image alone. fsck keeps the walk.
// `reads_every_file`: the tool reads every file once (reader::OpenOptions::whole_extents and
// direct_reads).
inline std::unique_ptr<reader::Image> open_image(const std::string& path, uint64_t pcluster_cache_bytes = 64ull << 20,
                                                 bool reads_every_file = false) {
  try {
    return reader::Image::open(path, {.pcluster_cache_bytes = pcluster_cache_bytes,
                                      .check_lz4_offsets = false,
                                      .whole_extents = reads_every_file,
                                      .direct_reads = reads_every_file});
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace erofs::tools
