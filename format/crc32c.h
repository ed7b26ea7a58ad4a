#pragma once

#include <cstddef>
#include <cstdint>

namespace erofs::format {

// Raw CRC32C (Castagnoli, reflected) update: no initial or final inversion, so
// crc32c_update(~0u, data) is the EROFS superblock checksum and ~crc32c_update(~0u, data) the
// standard CRC-32C of the data.
uint32_t crc32c_update(uint32_t crc, const void* data, size_t len);

}  // namespace erofs::format
