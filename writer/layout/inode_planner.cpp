#include "writer/layout/inode_planner.h"

#include <algorithm>
#include <deque>
#include <map>
#include <string_view>
#include <unordered_set>

#include "format/constants.h"
#include "format/dirent.h"

namespace erofs::writer {
namespace {

// Compact inodes show the superblock epoch as their mtime. The epoch is the fixed time if one was
// given, else the most common whole-second mtime, so that as many inodes as possible can be
// compact without losing their time.
int64_t apply_times(Tree& tree, const BuildOptions& o) {
  if (o.fixed_time && !o.mkfs_time_only)
    for (auto& ino : tree.inodes) {
      ino->mtime = *o.fixed_time;
      ino->mtime_nsec = 0;
    }
  if (o.fixed_time) return *o.fixed_time;
  std::map<int64_t, uint64_t> counts;
  int64_t newest = INT64_MIN;
  for (auto& ino : tree.inodes) {
    newest = std::max(newest, ino->mtime);
    if (ino->mtime_nsec == 0) ++counts[ino->mtime];
  }
  int64_t epoch = newest;
  uint64_t best = 0;
  for (auto [t, n] : counts)
    if (n > best) {
      best = n;
      epoch = t;
    }
  return epoch;
}

uint64_t dir_size(const TreeInode* dir, uint32_t bs) {
  // "." and ".." sort among the children; the packing depends on the order.
  std::vector<std::string_view> names = {".", ".."};
  for (auto& d : dir->children) names.push_back(d.name);
  std::sort(names.begin(), names.end());
  format::DirSizer sizer(bs);
  for (auto n : names) sizer.add(n.size());
  return sizer.size();
}

void count(const TreeInode* ino, const Plan& p, BuildStats& stats) {
  ++stats.inodes;
  (p.extended ? stats.extended_inodes : stats.compact_inodes)++;
  if (ino->is_dir()) ++stats.directories;
  else if (ino->is_reg()) ++stats.regular_files;
  else if (ino->is_symlink()) ++stats.symlinks;
  else ++stats.specials;
  if (!ino->is_dir() && ino->nlink > 1) stats.hard_links += ino->nlink - 1;
}

}  // namespace

bool fits_compact(const TreeInode* ino, uint64_t data_size, int64_t epoch, InodeForm form) {
  if (form == InodeForm::Extended) return false;
  if (data_size > UINT32_MAX || ino->uid > 0xFFFF || ino->gid > 0xFFFF || ino->nlink > 0xFFFF) return false;
  if (form == InodeForm::Compact) return true;
  return ino->mtime == epoch && ino->mtime_nsec == 0;
}

InodePlans plan_inodes(Tree& tree, const XattrPlan& xattrs, const BuildOptions& o, BuildStats& stats) {
  InodePlans out;
  out.epoch = apply_times(tree, o);
  const uint32_t bs = o.block_size;
  std::deque<TreeInode*> queue = {tree.root};
  std::unordered_set<const TreeInode*> seen = {tree.root};
  out.plans.reserve(tree.inodes.size() + 1);  // +1: the packed inode, added after the data
  out.index.reserve(tree.inodes.size() + 1);
  while (!queue.empty()) {
    TreeInode* ino = queue.front();
    queue.pop_front();
    out.index[ino] = out.plans.size();
    Plan& p = out.plans.emplace_back();
    p.src = ino;
    p.serial = uint32_t(out.plans.size());
    p.xattr_size = xattrs.ibody_size(ino);
    if (ino->is_dir()) p.data_size = dir_size(ino, bs);
    else if (ino->is_reg() || ino->is_symlink()) p.data_size = ino->size;
    p.extended = !fits_compact(ino, p.data_size, out.epoch, o.inode_form);
    const uint64_t tail = p.data_size % bs;
    const uint32_t isize = p.extended ? format::kExtendedInodeSize : format::kCompactInodeSize;
    // Compressed builds decide a regular file's layout once its data is compressed.
    const bool flat_decided_later = ino->is_reg() && (o.chunk_size || o.compression);
    p.inline_tail = tail && isize + p.xattr_size + tail <= bs && !flat_decided_later;
    p.tail_size = p.inline_tail ? uint32_t(tail) : 0;
    for (auto& d : ino->children)
      if (seen.insert(d.inode).second) queue.push_back(d.inode);
    count(ino, p, stats);
  }
  return out;
}

}  // namespace erofs::writer
