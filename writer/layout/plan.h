// What the builder decides about each inode before and while the image is written.
#pragma once

#include <cstdint>
#include <vector>

#include "format/constants.h"
#include "writer/layout/zindex.h"
#include "writer/source/tree.h"
#include "writer/spill_file.h"

namespace erofs::writer {

// Where a flat or chunk-based file's data went.
struct FilePlacement {
  format::Layout layout = format::Layout::FlatPlain;
  uint64_t startblk = format::kNullAddr;
  uint64_t blocks = 0;              // data blocks written for this file
  SpillRef tail;                    // FLAT_INLINE: the bytes after the last full block
  uint16_t chunk_format = 0;        // CHUNK_BASED: i_u format (chunk bits, no indexes)
  std::vector<uint32_t> chunk_map;  // CHUNK_BASED: start block per chunk, kNullAddr for holes
};

struct Plan {
  TreeInode* src = nullptr;
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
  bool hot = false;                      // --hot-list: written first, kept out of fragments
  uint64_t zblocks = 0;                  // blocks of pclusters written for this file

  uint32_t inode_size() const { return extended ? 64 : 32; }
};

}  // namespace erofs::writer
