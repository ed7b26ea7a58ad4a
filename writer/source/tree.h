// The in-memory tree an image is built from: inodes with their metadata and, for directories,
// sorted dentries. Sources (a directory walk, later tar streams and manifests) produce it; the
// planner and the image writer consume it. Hard links are several dentries naming one inode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "writer/options.h"
#include "writer/source/file_content.h"

namespace erofs::writer {

struct TreeInode;

struct Dentry {
  std::string name;  // raw bytes, 1..255, no '/'
  TreeInode* inode = nullptr;
};

using XattrList = std::vector<std::pair<std::string, std::string>>;  // full name -> value, sorted

struct TreeInode {
  uint32_t mode = 0;  // S_IFMT type and permission bits
  uint32_t uid = 0, gid = 0;
  int64_t mtime = 0;
  uint32_t mtime_nsec = 0;
  uint64_t size = 0;  // regular files: content bytes; symlinks: target length
  uint32_t rdev_major = 0, rdev_minor = 0;
  std::string symlink_target;
  XattrList xattrs;
  FileContent content;             // regular files: where the `size` bytes are read from
  std::string image_path;         // regular files: path in the image, without a leading '/' (first link)
  std::vector<Dentry> children;   // directories: sorted bytewise, without "." and ".."
  TreeInode* parent = nullptr;        // directories: the parent (the root is its own parent)
  uint32_t nlink = 0;             // dentries naming this inode (+ "." and ".." for directories)

  bool is_dir() const;
  bool is_reg() const;
  bool is_symlink() const;
};

struct Tree {
  std::vector<std::unique_ptr<TreeInode>> inodes;  // owning; order is irrelevant
  TreeInode* root = nullptr;
  std::shared_ptr<void> data_owner;  // keeps files that FileContent::in_shared_file names open

  TreeInode* add(std::unique_ptr<TreeInode> inode) {
    inodes.push_back(std::move(inode));
    return inodes.back().get();
  }
  // Sorts every directory's dentries bytewise and computes nlink from the dentries.
  void finish();
};

// --all-root, then --force-uid and --force-gid (which win over it): the one rule every source and
// the library's entries follow.
void apply_owner_overrides(const SourceOptions& options, TreeInode& ino);

}  // namespace erofs::writer
