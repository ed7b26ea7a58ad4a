// Directory blocks: [dirent 0..n-1][name 0..n-1][zero padding]; 12-byte dirents.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "format/constants.h"

namespace erofs::format {

inline constexpr uint32_t kDirentSize = 12;

struct Dirent {
  uint64_t nid = 0;
  uint16_t nameoff = 0;
  uint8_t file_type = 0;

  void encode(uint8_t* out) const;
  static Dirent decode(const uint8_t* in);
};

// The dirent file type for a POSIX mode (S_IFMT bits).
FileType file_type_of_mode(uint32_t mode);

// Bytes a directory with these names takes when packed in order, blocks filled as the format
// requires (an entry that does not fit the block's remainder starts a new block).
struct DirSizer {
  explicit DirSizer(uint32_t block_size) : block_size_(block_size) {}
  void add(size_t name_len);
  uint64_t size() const { return full_blocks_ * block_size_ + used_; }

 private:
  uint32_t block_size_;
  uint64_t full_blocks_ = 0;
  uint32_t used_ = 0;
};

}  // namespace erofs::format
