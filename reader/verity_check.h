// fsck's dm-verity check: the hash tree stored with an image (appended, or in a file of its own;
// see reader/verity_tree.h) against the tree the image's data yields and, when one is given, a
// trusted root hash, trusted from the top down as the kernel trusts it (verity/check.h). Each
// data block that does not match is a problem line naming the block, its bytes and the files
// whose data lie there; each hash block that does not match, the data blocks it leaves unchecked;
// a damaged superblock, one whose numbers do not fit the image, or a tree that runs past its file,
// what is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/verity_superblock.h"
#include "reader/image.h"

namespace erofs::reader {

struct VerityCheckOptions {
  std::vector<uint8_t> root_hash;  // the trusted root hash; empty: none given
  std::string hash_file;           // the tree's own file (--verity-file); empty: appended to the image
  unsigned threads = 0;            // hashing threads; 0: one per core
  size_t max_problems = 1000;
};

struct VerityCheckReport {
  // A tree was found. Without one, and without a root hash or hash file asking for one, the
  // image simply has none: not a problem.
  bool found = false;
  std::optional<format::VeritySuperblock> superblock;  // when it decodes
  uint64_t hash_offset = 0;                            // the superblock's, in its file
  std::vector<uint8_t> root_hash;                      // of the tree the data yields, once checked
  std::vector<std::string> problems;                   // one line each, starting "verity: "
  bool clean() const { return problems.empty(); }
};

// Throws IoError when the image or the hash file cannot be read, verity::Error when the hash
// library fails; damage of any kind is a problem line.
VerityCheckReport check_verity(const Image& image, const VerityCheckOptions& options);
// The same for the image at `path`, opened as fsck_image opens it. An image that does not open as
// EROFS (CorruptError) gives an empty report: fsck_image names why.
VerityCheckReport check_verity(const std::string& path, const VerityCheckOptions& options);

}  // namespace erofs::reader
