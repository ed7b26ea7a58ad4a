// The layout decisions made before any data is written: the image epoch (and every inode's mtime
// under -T), the order of the inodes (breadth-first from the root, so a directory's children sit
// together), their serial numbers, their forms (compact or extended), xattr body sizes and
// whether a flat tail goes inline. Compressed and chunk-based files decide their layout in the
// data phase, once their data is written.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "writer/layout/plan.h"
#include "writer/layout/xattr_plan.h"
#include "writer/options.h"
#include "writer/source/tree.h"

namespace erofs::writer {

struct InodePlans {
  std::vector<Plan> plans;  // inode order: the root first
  std::unordered_map<const TreeInode*, size_t> index;
  int64_t epoch = 0;  // the superblock's build time; compact inodes show it as their mtime
  Plan& at(const TreeInode* ino) { return plans[index.at(ino)]; }
  const Plan& at(const TreeInode* ino) const { return plans[index.at(ino)]; }
};

// Counts the inodes into `stats` (types, forms, hard links) as it plans them.
InodePlans plan_inodes(Tree& tree, const XattrPlan& xattrs, const BuildOptions& options, BuildStats& stats);

// Compact inodes carry no time of their own, only 32-bit sizes, 16-bit owners and link counts.
bool fits_compact(const TreeInode* ino, uint64_t data_size, int64_t epoch, InodeForm form);

}  // namespace erofs::writer
