// Restores an image's tree into a directory: contents, modes, owners, mtimes with nanoseconds,
// xattrs, symlinks, hard links, devices, FIFOs and sockets. Everything is created relative to
// directory file descriptors without following links, so nothing outside the destination is
// created or changed, whatever the image or the destination already holds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace erofs::reader {

class Image;

struct ExtractOptions {
  bool owners = true;   // chown (as root); off: keep the extracting user
  bool xattrs = true;
  std::string subtree = "/";  // extract only this directory or file of the image
  std::function<void(const std::string&)> warn;
};

struct ExtractStats {
  uint64_t directories = 0, files = 0, symlinks = 0, specials = 0, hard_links = 0, bytes = 0;
};

// Throws (a one-line message naming the path) on the first error: a corrupt image, an entry that
// exists already in the destination, or a failing system call.
ExtractStats extract_image(const Image& image, const std::string& dest, const ExtractOptions& options);

}  // namespace erofs::reader
