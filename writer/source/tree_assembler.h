// Building a Tree from a list of named entries (a tar stream, an mtree manifest): name
// normalisation, exclusions, owner overrides, implicit parent directories, later entries replacing
// earlier ones. Shared by writer/source_tar.cpp and writer/source_mtree.cpp.
//
// Names: "./" prefixes, "." components, repeated and trailing slashes are dropped; a name with a
// ".." component or a leading '/' is an error naming the entry. A later entry for the same path
// replaces the earlier one, except that a directory that has children cannot be replaced by a
// non-directory (an error); a directory entry for an existing directory only updates its metadata.
// Directories that appear only as parents of other entries get mode 0755, owner 0:0 (subject to
// --all-root/--force-uid/--force-gid) and the newest mtime of any entry (note_mtime), so equal
// inputs give equal trees.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "writer/source/exclusions.h"
#include "writer/options.h"
#include "writer/source/tree.h"

struct archive;

namespace erofs::writer {

// libarchive's last error message, on one line.
std::string libarchive_message(archive* a);

std::string quoted(const std::string& name);  // 'name'

class TreeAssembler {
 public:
  // `what` starts every error message: "tar entry", "mtree entry".
  TreeAssembler(Tree& tree, const SourceOptions& options, std::string what);

  // "WHAT 'entry': " for messages.
  std::string prefix(const std::string& entry) const;
  // A symlink's target from the source (null: none); empty or over 4095 bytes is an error.
  void set_symlink(TreeInode& ino, const char* target, const std::string& entry) const;

  // The name's components; throws on absolute names, ".." components and components longer than
  // 255 bytes.
  std::vector<std::string> split(const std::string& raw, const std::string& entry) const;
  static std::string join(const std::vector<std::string>& parts, size_t n);
  bool excluded(const std::vector<std::string>& parts) const;

  // A character or block device's number; throws when EROFS cannot store it (its 32-bit rdev
  // holds a 12-bit major and a 20-bit minor, as Linux's dev_t does).
  void set_device(TreeInode& ino, uint64_t major, uint64_t minor, const std::string& entry) const;
  // An entry's mtime; the newest becomes the implicit directories' mtime.
  void note_mtime(int64_t mtime);

  TreeInode* root() const { return tree_.root; }
  TreeInode* lookup(TreeInode* dir, const std::string& name);
  // The directory `parts[0..n)`, creating missing ones as implicit directories.
  TreeInode* parent_dir(const std::vector<std::string>& parts, size_t n, const std::string& entry);
  // Gives the root the metadata (mode, owner, mtime, xattrs) of `from`.
  void set_root(const TreeInode& from);
  // Puts `ino` under `name` in `dir`; the last entry for a name wins. A directory entry for an
  // existing directory updates its metadata and returns that directory.
  TreeInode* place(TreeInode* dir, const std::string& name, TreeInode* ino, const std::string& entry);
  // Adds `ino` to the tree and places it; returns what `name` names now.
  TreeInode* add(TreeInode* dir, const std::string& name, std::unique_ptr<TreeInode> ino, const std::string& entry);

  // Sets the implicit directories' mtimes, drops replaced entries and finishes the tree.
  void finish();

 private:
  TreeInode* implicit_dir();
  void copy_metadata(TreeInode& to, const TreeInode& from);
  void drop_unreachable();

  Tree& tree_;
  const SourceOptions& opt_;
  std::string what_;
  Exclusions exclusions_;
  std::unordered_map<const TreeInode*, std::unordered_map<std::string, size_t>> index_;
  std::unordered_set<TreeInode*> implicit_;
  int64_t newest_ = 0;
  bool newest_set_ = false;
};

}  // namespace erofs::writer
