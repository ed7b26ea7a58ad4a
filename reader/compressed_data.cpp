#include <fmt/format.h>

#include "reader/image_impl.h"

namespace erofs::reader {

size_t ImageImpl::read_compressed(const Inode& ino, uint64_t, std::span<uint8_t>) const {
  throw UnsupportedError(fmt::format("nid {}: compressed data is not supported yet", ino.nid));
}

}  // namespace erofs::reader
