// Restores an image's tree into a directory: contents, modes, owners, mtimes with nanoseconds,
// xattrs, symlinks, hard links, devices, FIFOs and sockets. Everything is created relative to
// directory file descriptors without following links, so nothing outside the destination is
// created or changed, whatever the image or the destination already holds.
//
// Files are spread over worker threads (large files in pieces that end on extent boundaries, so
// each pcluster is decoded once); one thread walks the tree and creates the directories. A
// directory's attributes and times are set once all its entries are done, a hard link is made
// once its target is complete. Memory stays bounded whatever the image: jobs wait in a short
// queue, and only directories with entries in flight are held open.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace erofs::reader {

class Image;

struct ExtractProgress {
  uint64_t entries = 0;        // inodes created so far (hard links not counted)
  uint64_t total_inodes = 0;   // the image's inode count (the superblock's)
  uint64_t bytes = 0;          // file bytes written (holes included)
};

struct ExtractOptions {
  bool owners = true;   // chown (as root); off: keep the extracting user
  bool xattrs = true;
  std::string subtree = "/";  // extract only this directory or file of the image
  unsigned workers = 0;       // threads creating files; 0: one per core; 1: all on the calling thread
  // Problems that leave an entry extracted (an xattr the destination refuses).
  std::function<void(const std::string&)> warn;
  // An entry that could not be extracted because the image is damaged there (its inode, its
  // data): one line naming the path. Nothing of that entry stays behind; the rest goes on.
  std::function<void(const std::string&)> error;
  // Called about every progress_interval_ms from the calling thread, and once at the end.
  std::function<void(const ExtractProgress&)> progress;
  unsigned progress_interval_ms = 200;
};

struct ExtractStats {
  uint64_t directories = 0, files = 0, symlinks = 0, specials = 0, hard_links = 0, bytes = 0;
  uint64_t errors = 0, warnings = 0;  // calls of ExtractOptions::error and ::warn
  unsigned workers = 0;               // threads that created files
};

// Throws (a one-line message naming the path) when the extraction cannot go on: the destination
// fails (an entry that exists already, a failing system call, no space) or the tree itself is
// hostile (a directory loop, a directory under two names, an unsafe name, an unreadable
// directory). The callbacks may be called from any thread, one call at a time.
ExtractStats extract_image(const Image& image, const std::string& dest, const ExtractOptions& options);

}  // namespace erofs::reader
