#include "writer/layout/dir_blocks.h"

#include <cstring>

#include "format/dirent.h"

namespace erofs::writer {

std::vector<uint8_t> encode_directory(const std::vector<DirRecord>& entries, uint32_t block_size) {
  using format::kDirentSize;
  std::vector<uint8_t> out;
  size_t i = 0;
  while (i < entries.size()) {
    // Take as many entries as fit in this block.
    size_t j = i;
    uint32_t used = 0;
    while (j < entries.size() && used + kDirentSize + entries[j].name.size() <= block_size) {
      used += kDirentSize + uint32_t(entries[j].name.size());
      ++j;
    }
    bool last = j == entries.size();
    size_t base = out.size();
    out.resize(base + (last ? used : block_size), 0);
    uint8_t* blk = out.data() + base;
    uint32_t nameoff = uint32_t(j - i) * kDirentSize;
    for (size_t k = i; k < j; ++k) {
      format::Dirent{entries[k].nid, uint16_t(nameoff), entries[k].file_type}.encode(blk + (k - i) * kDirentSize);
      std::memcpy(blk + nameoff, entries[k].name.data(), entries[k].name.size());
      nameoff += uint32_t(entries[k].name.size());
    }
    i = j;
  }
  return out;
}

}  // namespace erofs::writer
