#include "writer/source/tree.h"

#include <sys/stat.h>

#include <algorithm>

namespace erofs::writer {

bool TreeInode::is_dir() const { return S_ISDIR(mode); }
bool TreeInode::is_reg() const { return S_ISREG(mode); }
bool TreeInode::is_symlink() const { return S_ISLNK(mode); }

void apply_owner_overrides(const SourceOptions& o, TreeInode& ino) {
  if (o.all_root) ino.uid = ino.gid = 0;
  if (o.force_uid) ino.uid = *o.force_uid;
  if (o.force_gid) ino.gid = *o.force_gid;
}

void Tree::finish() {
  for (auto& ino : inodes) ino->nlink = ino->is_dir() ? 2 : 0;
  for (auto& ino : inodes) {
    if (!ino->is_dir()) continue;
    std::sort(ino->children.begin(), ino->children.end(),
              [](const Dentry& a, const Dentry& b) { return a.name < b.name; });
    for (auto& d : ino->children) {
      if (d.inode->is_dir()) {
        ++ino->nlink;  // the child's ".."
        d.inode->parent = ino.get();
      } else {
        ++d.inode->nlink;
      }
    }
  }
  root->parent = root;
}

}  // namespace erofs::writer
