// Which files' contents lie in given blocks of an image, so that a report of a damaged block can
// name the file it damages (fsck's dm-verity check). One walk over the whole tree maps every
// regular file's extents to the bytes that store them: device extents where they lie, inline
// tails where their inode record lies, fragments where the packed inode stores them. Blocks no
// file's data lies in hold metadata (inodes, directories, xattrs, the superblock) or nothing.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "reader/image.h"

namespace erofs::reader {

struct BlockOwners {
  std::vector<std::string> paths;  // the first `max_paths` files, in the walk's (name) order
  uint64_t files = 0;              // all of them
};

// `blocks`: ascending numbers of blocks of `block_size` bytes from the start of the image. The
// result has an entry for each block some file's data lies in; a file reached by several hard
// links counts once, under its first path. Parts of the tree that cannot be read are passed over
// (fsck reports them on its own).
std::map<uint64_t, BlockOwners> block_owners(const Image& image, std::span<const uint64_t> blocks,
                                             uint64_t block_size, size_t max_paths);

}  // namespace erofs::reader
