// mkfs --verity: a dm-verity hash tree over the finished filesystem, in the bytes veritysetup
// writes (its superblock, then the tree), so that `veritysetup verify` and `open` and the kernel
// take it as it is. The tree needs every byte of the filesystem, the superblock written last
// included, so it is built after that, from the temporary image read back (from the page cache)
// on several threads; it goes after the filesystem in the same temporary file, or into a file of
// its own. Nothing is renamed here: the caller commits the side files, then the image, only when
// all of them are written, so a failed build leaves none of them half-written.
//
// Layout of an image with an appended tree (all offsets from the start of the file):
//   [0, fs)                the filesystem: the superblock's block count times its block size
//   [fs, data_end)         zeros up to a verity data block boundary (none when the EROFS block
//                          size is a multiple of it); the kernel's erofs never reads past fs
//   [data_end, hash_off)   zeros up to a hash block boundary
//   [hash_off, +hbs)       veritysetup's 512-byte superblock, zero-padded to a hash block
//   [hash_off + hbs, end)  the tree, its top level first
// With a separate file the image ends at data_end and the file holds the last two parts, from 0.
#pragma once

#include <cstdint>
#include <optional>

#include "writer/data/output_image.h"
#include "writer/options.h"

namespace erofs::writer {

class VerityWriter {
 public:
  // Creates the side files' temporaries beside their targets now, so that a path that cannot be
  // written fails the build before its long part. Throws BuildError.
  explicit VerityWriter(const VerityOptions& options);

  // Hashes the first `fs_bytes` of `image` (all of it written and patched) and writes the
  // superblock and tree, and the root hash file. Returns the image's final size. Throws
  // BuildError, or verity::Error when the hash library fails.
  uint64_t write(OutputImage& image, uint64_t fs_bytes, VerityStats& stats);
  // Renames the side files over their targets.
  void commit();

 private:
  const VerityOptions& options_;
  std::optional<OutputImage> hash_file_, root_hash_file_;
};

}  // namespace erofs::writer
