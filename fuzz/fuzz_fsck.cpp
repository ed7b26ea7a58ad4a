// fuzz_fsck: the input is an EROFS image, checked by reader::fsck_image (structure only: file
// contents are fuzz_image's job, and a hostile image can claim terabytes of sparse data that a
// full check would spend minutes reading as zeros).
//
// fsck opens images with checksum verification, so before the check the superblock checksum is
// recomputed over the mutated bytes: otherwise nearly every mutation of the superblock would stop
// at the checksum. fsck must turn every problem into a report line; it may throw only when the
// image cannot be opened (one of the reader's exception types). Anything else is a crash.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/constants.h"
#include "format/endian.h"
#include "format/superblock.h"
#include "fuzz/check.h"
#include "fuzz/input_file.h"
#include "reader/fsck.h"
#include "reader/image.h"

namespace {

namespace format = erofs::format;
namespace reader = erofs::reader;

// Stores the right checksum when the superblock's block size is one the reader accepts and the
// covered region is inside the input.
void fix_checksum(std::vector<uint8_t>& image) {
  constexpr size_t kAt = format::kSuperblockOffset;
  if (image.size() < kAt + 16) return;
  const unsigned bits = image[kAt + 12];
  if (bits < format::kMinBlockBits || bits > format::kMaxBlockBits) return;
  const size_t length = format::checksum_length(1u << bits);
  if (kAt + length > image.size()) return;
  const uint32_t crc = format::compute_checksum(std::span<const uint8_t>(image).subspan(kAt, length));
  format::put_le32(image.data() + kAt + 4, crc);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static erofs::fuzz::InputFile file;
  std::vector<uint8_t> image(data, data + size);
  fix_checksum(image);
  reader::FsckOptions options;
  options.check_data = false;
  options.max_problems = 100;
  try {
    const reader::FsckReport report = reader::fsck_image(file.put(image.data(), image.size()), options);
    if (report.problems.size() > options.max_problems)
      erofs::fuzz::violation("fsck reported {} problems, more than max_problems {}", report.problems.size(),
                             options.max_problems);
  } catch (const reader::CorruptError&) {
  } catch (const reader::UnsupportedError&) {
  } catch (const reader::IoError&) {
  }
  return 0;
}
