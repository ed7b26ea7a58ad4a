// Builds a Tree from a tar stream (plain or compressed; ustar, GNU and PAX headers) read once,
// front to back, through libarchive. Regular files' contents are copied into one unlinked
// temporary file beside the image (holes stay holes); the tree's inodes point into it
// (FileContent::in_shared_file, kept open by Tree::data_owner). Memory holds metadata only.
//
// Names: "./" prefixes, "." components, repeated and trailing slashes are dropped; a name with a
// ".." component or a leading '/' is an error naming the entry. A later entry for the same path
// replaces the earlier one (as tar extraction does), except that a directory that has children
// cannot be replaced by a non-directory (an error); a directory entry for an existing directory
// only updates its metadata. Directories that appear only as parents of other entries get mode
// 0755, owner 0:0 (subject to --all-root/--force-uid/--force-gid) and the newest mtime of any
// entry in the archive, so equal archives give equal images.
//
// Xattrs EROFS cannot store (a name without a known namespace prefix such as "user." or
// "trusted.", more than 255 bytes of name after the prefix, a value over 65535 bytes) are left
// out with a warning naming the entry. A device number EROFS cannot store (a major above 4095, a
// minor above 1048575) is an error naming the entry.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "writer/options.h"
#include "writer/source/scan_dir.h"

namespace erofs::writer {

struct TarOptions {
  // .wh.NAME entries become overlayfs whiteouts (a character device 0/0 named NAME);
  // .wh..wh..opq marks its directory opaque (trusted.overlay.opaque=y); other .wh..wh.* entries
  // (aufs' own bookkeeping) are left out.
  bool aufs = false;
  bool ovlfs_strip = false;  // leave out the archive's trusted.overlay.* xattrs
};

// Reads the archive at `archive` ("-": standard input). The data file is created beside
// `image_path`. Throws BuildError with one line naming the entry on a malformed archive.
// libarchive's warnings (an entry it could only partly decode) go to `warn`.
ScanResult scan_tar(const std::string& archive, const std::string& image_path, const SourceOptions& options,
                    const TarOptions& tar_options, const std::function<void(const std::string&)>& warn);

// The system.posix_acl_access/default xattr value (little-endian version 2 header, then
// (tag, perm, id) entries sorted by tag and id) for POSIX ACL entries given as (tag, perm, id)
// with the kernel's tag values (ACL_USER_OBJ = 1 ... ACL_OTHER = 0x20).
std::string posix_acl_xattr(std::vector<std::tuple<uint16_t, uint16_t, uint32_t>> entries);

}  // namespace erofs::writer
