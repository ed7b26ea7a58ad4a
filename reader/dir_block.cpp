#include "reader/dir_block.h"

#include <algorithm>

#include <fmt/format.h>

#include "format/constants.h"
#include "format/dirent.h"
#include "reader/image.h"

namespace erofs::reader {

std::vector<RawDirent> parse_dir_block(std::span<const uint8_t> block, uint64_t dir_nid, uint64_t block_index) {
  auto fail = [&](const std::string& what) {
    throw CorruptError(fmt::format("nid {}: directory block {}: {}", dir_nid, block_index, what));
  };
  using format::kDirentSize;
  if (block.size() < kDirentSize) fail(fmt::format("{} bytes cannot hold an entry", block.size()));
  const format::Dirent first = format::Dirent::decode(block.data());
  if (first.nameoff % kDirentSize != 0 || first.nameoff == 0 || first.nameoff >= block.size())
    fail(fmt::format("bad first nameoff {}", first.nameoff));
  const size_t count = first.nameoff / kDirentSize;

  std::vector<RawDirent> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const format::Dirent de = format::Dirent::decode(block.data() + i * kDirentSize);
    size_t end;
    if (i + 1 < count) {
      end = format::Dirent::decode(block.data() + (i + 1) * kDirentSize).nameoff;
      if (end <= de.nameoff || end > block.size()) fail(fmt::format("bad nameoff {} after entry {}", end, i));
    } else {
      // The last name runs to the first NUL of the padding, or to the end of the data.
      auto nul = std::find(block.begin() + de.nameoff, block.end(), uint8_t(0));
      end = size_t(nul - block.begin());
    }
    const std::string_view name(reinterpret_cast<const char*>(block.data()) + de.nameoff, end - de.nameoff);
    if (name.empty() || name.size() > format::kNameMax) fail(fmt::format("entry {} has a name of {} bytes", i, name.size()));
    if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos)
      fail(fmt::format("entry {} has a name containing '/' or NUL", i));
    if (de.file_type > format::kFileTypeMax) fail(fmt::format("entry {} has file type {}", i, de.file_type));
    if (!out.empty() && compare_names(out.back().name, name) >= 0)
      fail(fmt::format("entries {} and {} are not in ascending order", i - 1, i));
    out.push_back({name, de.nid, de.file_type});
  }
  return out;
}

}  // namespace erofs::reader
