// What the builder decides about each inode before and while the image is written.
#pragma once

#include <cstdint>
#include <vector>

#include "writer/file_data.h"
#include "writer/spill_file.h"
#include "writer/tree.h"
#include "writer/zindex.h"

namespace erofs::writer {

struct Plan {
  Inode* src = nullptr;
  bool extended = false;
  uint32_t xattr_size = 0;
  uint64_t data_size = 0;  // bytes of content: file size, directory size or target length
  bool inline_tail = false;
  uint32_t tail_size = 0;  // flat layouts with inline_tail: data_size mod block size
  SpillRef inline_bytes;   // the inline tail or inline pcluster (directories make theirs at the end)
  FilePlacement data;      // flat and chunked layouts
  uint64_t nid = 0;
  uint32_t serial = 0;

  // Compressed files.
  bool compressed = false;
  ZIndexSpec z;
  bool whole_fragment = false;           // the whole file is one fragment of the packed inode
  uint64_t zblocks = 0;                  // blocks of pclusters written for this file

  uint32_t inode_size() const { return extended ? 64 : 32; }
};

}  // namespace erofs::writer
