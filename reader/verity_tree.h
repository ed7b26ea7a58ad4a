// Finding the dm-verity hash tree stored with an image, for `erofs fsck` and `erofs dump`:
// veritysetup's superblock and the tree after it, either appended to the image (as `erofs mkfs
// --verity` writes it) or in a file of their own (--verity-file, systemd's `.verity`).
//
// An appended tree's superblock lies at the first boundary of its block size at or after the
// filesystem's end (the EROFS superblock's block count times its block size), with zeros between.
// The block size is not known before the superblock is read, so the candidates are the end
// rounded up to 512, 1024, 2048 and 4096 bytes: the first of them whose 512 bytes are not all
// zero holds it. Bytes there that are not recognisably veritysetup's superblock (its signature,
// or the version and hash type after it) are not a tree: a partition larger than its filesystem
// may hold anything. A recognisable superblock that does not decode is damage to report.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/verity_superblock.h"
#include "reader/image.h"
#include "reader/input_image.h"

namespace erofs::reader {

// Where a tree is stored: the image itself or a file of its own.
class HashDevice {
 public:
  explicit HashDevice(const Image& image) : image_(&image) {}
  // Throws IoError when the file cannot be opened.
  explicit HashDevice(const std::string& path) : file_(std::in_place, path, InputImage::Access{}) {}

  uint64_t size() const { return file_ ? file_->size() : image_->image_size(); }
  // Exactly out.size() bytes at `offset`; throws CorruptError outside the file, IoError.
  void read(uint64_t offset, std::span<uint8_t> out) const {
    file_ ? file_->read(offset, out) : image_->read_raw(offset, out);
  }
  bool separate() const { return file_.has_value(); }

 private:
  const Image* image_ = nullptr;
  std::optional<InputImage> file_;
};

struct StoredSuperblock {
  uint64_t offset = 0;  // in its hash device
  std::optional<format::VeritySuperblock> superblock;
  std::string damage;   // why the bytes there do not decode (then no superblock)
};

// The filesystem's size: the EROFS superblock's block count times its block size.
uint64_t filesystem_bytes(const Image& image);

// The appended superblock as described above; nullopt when there is none. Throws IoError.
std::optional<StoredSuperblock> find_appended_superblock(const Image& image);
// The superblock at the start of a separate hash file (`damage` says what is wrong, also when
// there is no signature). Throws IoError.
StoredSuperblock read_superblock(const HashDevice& device);

// The root hash the stored tree claims: the hash of its top block, or of the only data block
// for a device of one block. Reads neither the rest of the tree nor the data. Throws
// verity::ParamError for parameters dm-verity refuses, CorruptError when the tree or block lies
// outside its file.
std::vector<uint8_t> stored_root_hash(const Image& image, const HashDevice& device, const StoredSuperblock& stored);

}  // namespace erofs::reader
