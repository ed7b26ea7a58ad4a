// Damaged images (truncated, bytes flipped in the metadata) must raise CorruptError,
// UnsupportedError or IoError from open() or from a full walk, never crash, hang or throw anything else.
#include <random>

#include <gtest/gtest.h>

#include "format/constants.h"
#include "format/superblock.h"
#include "reader/image.h"
#include "tests/unit/reader_test_support.h"

namespace erofs::test {
namespace {

using reader::Image;

constexpr uint64_t kWalkFileLimit = 256 * 1024;  // damaged sizes may declare terabytes of holes

enum class Outcome { Ok, Rejected };

// Opens and walks everything; reader errors count as a rejection, anything else escapes and fails the test.
Outcome open_and_walk(const std::string& path) {
  try {
    const auto image = Image::open(path, {.verify_checksum = false});
    walk_image(*image, kWalkFileLimit);
    return Outcome::Ok;
  } catch (const reader::CorruptError&) {
  } catch (const reader::UnsupportedError&) {
  } catch (const reader::IoError&) {
  }
  return Outcome::Rejected;
}

class Damaged : public ::testing::TestWithParam<std::string> {};

TEST_P(Damaged, TruncatedAtEveryBoundary) {
  const std::string bytes = compat_image_bytes(GetParam());
  const unsigned blkbits = uint8_t(bytes[format::kSuperblockOffset + 12]);
  for (size_t cut = 4096; cut < bytes.size(); cut += 4096) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    std::string truncated = bytes.substr(0, cut);
    // As cut, the block count in the superblock no longer fits the file.
    EXPECT_EQ(open_and_walk(write_scratch_image("truncated.img", truncated)), Outcome::Rejected);
    // With the count patched to match, open succeeds and the damage is met while walking.
    const uint32_t blocks = uint32_t(cut >> blkbits);
    for (int i = 0; i < 4; ++i) truncated[format::kSuperblockOffset + 36 + i] = char(blocks >> (8 * i));
    open_and_walk(write_scratch_image("truncated.img", truncated));
  }
}

// Byte ranges of the pristine image that hold metadata: the superblock block, every inode with its
// xattrs and index or chunk tables (approximated by 256 bytes past the xattrs) and the blocks of flat directories.
std::vector<std::pair<uint64_t, uint64_t>> metadata_ranges(const std::string& name) {
  const auto image = Image::open(compat_path("images/" + name));
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {{format::kSuperblockOffset, format::kSuperblockOffset + 256}};
  for (const auto& [path, entry] : walk_image(*image)) {
    const auto& ino = entry.inode;
    if (ino.in_metabox()) continue;
    ranges.push_back({ino.pos, std::min(ino.meta_end() + 256, image->image_size())});
    if (ino.is_dir() && ino.startblk != format::kNullAddr && ino.size >= image->block_size())
      ranges.push_back({ino.startblk * image->block_size(), ino.startblk * image->block_size() + ino.size / image->block_size() * image->block_size()});
  }
  return ranges;
}

TEST_P(Damaged, RandomByteFlipsInMetadata) {
  const std::string pristine = compat_image_bytes(GetParam());
  const auto ranges = metadata_ranges(GetParam());
  std::mt19937_64 rng(std::hash<std::string>{}(GetParam()));
  int rejected = 0;
  constexpr int kTrials = 200;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::string bytes = pristine;
    std::string flips;
    const int count = 1 + int(rng() % 3);
    for (int i = 0; i < count; ++i) {
      const auto& [lo, hi] = ranges[rng() % ranges.size()];
      const uint64_t at = lo + rng() % (hi - lo);
      const uint8_t mask = uint8_t(1 + rng() % 255);
      bytes[at] = char(uint8_t(bytes[at]) ^ mask);
      flips += " " + std::to_string(at) + "^" + std::to_string(mask);
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + ":" + flips);
    rejected += open_and_walk(write_scratch_image("flipped.img", bytes)) == Outcome::Rejected;
  }
  // Most flips in metadata are noticed; the rest changed something harmless (a name, a mode bit).
  EXPECT_GT(rejected, kTrials / 10);
}

INSTANTIATE_TEST_SUITE_P(AllImages, Damaged, ::testing::ValuesIn(compat_images()), image_test_name);

}  // namespace
}  // namespace erofs::test
