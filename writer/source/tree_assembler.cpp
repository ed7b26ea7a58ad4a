#include "writer/source/tree_assembler.h"

#include <archive.h>
#include <sys/stat.h>

#include "format/inode.h"
#include "writer/errors.h"

namespace erofs::writer {

std::string libarchive_message(archive* a) {
  const char* m = archive_error_string(a);
  std::string s = m && *m ? m : "truncated or damaged archive (libarchive gives no reason)";
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string quoted(const std::string& name) { return "'" + name + "'"; }

TreeAssembler::TreeAssembler(Tree& tree, const SourceOptions& options, std::string what)
    : tree_(tree), opt_(options), what_(std::move(what)), exclusions_(options) {
  tree_.root = implicit_dir();
}

std::string TreeAssembler::prefix(const std::string& entry) const { return what_ + " " + quoted(entry) + ": "; }

std::vector<std::string> TreeAssembler::split(const std::string& raw, const std::string& entry) const {
  if (raw.starts_with("/")) throw BuildError(prefix(entry) + "absolute name (not allowed)");
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= raw.size()) {
    size_t slash = raw.find('/', pos);
    if (slash == std::string::npos) slash = raw.size();
    std::string part = raw.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") throw BuildError(prefix(entry) + "'..' in the name (not allowed)");
    if (part.size() > 255) throw BuildError(prefix(entry) + "a name component is longer than 255 bytes");
    parts.push_back(std::move(part));
  }
  return parts;
}

std::string TreeAssembler::join(const std::vector<std::string>& parts, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (i) s += '/';
    s += parts[i];
  }
  return s;
}

bool TreeAssembler::excluded(const std::vector<std::string>& parts) const {
  if (exclusions_.empty()) return false;
  for (size_t n = 1; n <= parts.size(); ++n)
    if (exclusions_.excluded(join(parts, n))) return true;
  return false;
}

void TreeAssembler::set_symlink(TreeInode& ino, const char* target, const std::string& entry) const {
  ino.symlink_target = target ? target : "";
  if (ino.symlink_target.empty()) throw BuildError(prefix(entry) + "symlink without a target");
  if (ino.symlink_target.size() > 4095) throw BuildError(prefix(entry) + "symlink target longer than 4095 bytes");
  ino.size = ino.symlink_target.size();
}

void TreeAssembler::set_device(TreeInode& ino, uint64_t major, uint64_t minor, const std::string& entry) const {
  uint32_t ma = 0, mi = 0;
  if (major <= UINT32_MAX && minor <= UINT32_MAX) format::decode_rdev(format::encode_rdev(uint32_t(major), uint32_t(minor)), ma, mi);
  if (ma != major || mi != minor)
    throw BuildError(prefix(entry) + "device number " + std::to_string(major) + "," + std::to_string(minor) +
                     " does not fit (major at most 4095, minor at most 1048575)");
  ino.rdev_major = ma;
  ino.rdev_minor = mi;
}

void TreeAssembler::note_mtime(int64_t mtime) {
  if (!newest_set_ || mtime > newest_) newest_ = mtime;
  newest_set_ = true;
}

TreeInode* TreeAssembler::implicit_dir() {
  auto ino = std::make_unique<TreeInode>();
  ino->mode = S_IFDIR | 0755;
  apply_owner_overrides(opt_, *ino);
  TreeInode* p = tree_.add(std::move(ino));
  implicit_.insert(p);
  return p;
}

TreeInode* TreeAssembler::lookup(TreeInode* dir, const std::string& name) {
  auto& idx = index_[dir];
  auto it = idx.find(name);
  return it == idx.end() ? nullptr : dir->children[it->second].inode;
}

TreeInode* TreeAssembler::parent_dir(const std::vector<std::string>& parts, size_t n, const std::string& entry) {
  TreeInode* dir = tree_.root;
  for (size_t i = 0; i < n; ++i) {
    TreeInode* next = lookup(dir, parts[i]);
    if (!next) {
      next = implicit_dir();
      index_[dir][parts[i]] = dir->children.size();
      dir->children.push_back({parts[i], next});
    } else if (!next->is_dir()) {
      throw BuildError(prefix(entry) + quoted(join(parts, i + 1)) + " is not a directory");
    }
    dir = next;
  }
  return dir;
}

void TreeAssembler::set_root(const TreeInode& from) { copy_metadata(*tree_.root, from); }

TreeInode* TreeAssembler::place(TreeInode* dir, const std::string& name, TreeInode* ino, const std::string& entry) {
  auto& idx = index_[dir];
  auto it = idx.find(name);
  if (it == idx.end()) {
    idx[name] = dir->children.size();
    dir->children.push_back({name, ino});
    return ino;
  }
  TreeInode* old = dir->children[it->second].inode;
  if (old == ino) return ino;
  if (old->is_dir() && ino->is_dir()) {
    copy_metadata(*old, *ino);
    return old;
  }
  if (old->is_dir() && !old->children.empty()) throw BuildError(prefix(entry) + "replaces a directory that has entries");
  dir->children[it->second].inode = ino;
  return ino;
}

TreeInode* TreeAssembler::add(TreeInode* dir, const std::string& name, std::unique_ptr<TreeInode> ino, const std::string& entry) {
  TreeInode* added = tree_.add(std::move(ino));
  TreeInode* now = place(dir, name, added, entry);
  if (now != added) tree_.inodes.pop_back();  // merged into an existing directory
  return now;
}

void TreeAssembler::copy_metadata(TreeInode& to, const TreeInode& from) {
  to.mode = from.mode;
  to.uid = from.uid;
  to.gid = from.gid;
  to.mtime = from.mtime;
  to.mtime_nsec = from.mtime_nsec;
  to.xattrs = from.xattrs;
  implicit_.erase(&to);
}

void TreeAssembler::finish() {
  for (TreeInode* d : implicit_) d->mtime = newest_set_ ? newest_ : 0, d->mtime_nsec = 0;
  drop_unreachable();
  tree_.finish();
}

// Entries replaced by later ones are no longer named by any dentry.
void TreeAssembler::drop_unreachable() {
  std::unordered_set<const TreeInode*> reachable = {tree_.root};
  std::vector<const TreeInode*> stack = {tree_.root};
  while (!stack.empty()) {
    const TreeInode* d = stack.back();
    stack.pop_back();
    for (auto& c : d->children)
      if (reachable.insert(c.inode).second && c.inode->is_dir()) stack.push_back(c.inode);
  }
  std::erase_if(tree_.inodes, [&](const std::unique_ptr<TreeInode>& i) { return !reachable.count(i.get()); });
}

}  // namespace erofs::writer
