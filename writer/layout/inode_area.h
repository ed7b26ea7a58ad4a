// The inode area: where each inode's record goes (its nid), and the directory blocks, which name
// those nids. Runs once the data is written, when every record's size is known.
#pragma once

#include <cstdint>
#include <vector>

#include "writer/layout/inode_planner.h"

namespace erofs::writer {

// Packs the records on 32-byte slots and sets every plan's nid (and each directory's flat
// layout); returns the area's size, a whole number of blocks. A record that fits in a block goes
// into the fullest block that still has room for all of it (best fit), so an inline tail never
// crosses a block boundary and little space is lost; a larger record starts new blocks. Slot 0
// stays unused: nid 0 means "none" in several superblock fields. The root comes first, so its
// nid is small.
uint64_t assign_nids(std::vector<Plan>& plans, uint32_t block_size);

// A directory's entries, "." and ".." included, in directory blocks naming their nids.
std::vector<uint8_t> directory_content(const TreeInode* dir, const InodePlans& plans, uint32_t block_size);

}  // namespace erofs::writer
