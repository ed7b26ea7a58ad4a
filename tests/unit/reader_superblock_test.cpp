// Image::open's superblock checks, on damaged copies of a reference image.
#include <cerrno>

#include <gtest/gtest.h>

#include "format/constants.h"
#include "format/superblock.h"
#include "reader/image.h"
#include "tests/unit/reader_test_support.h"

namespace erofs::test {
namespace {

using reader::CorruptError;
using reader::Image;
using reader::IoError;
using reader::UnsupportedError;

// A copy of plain.img with superblock fields changed by `edit` and the checksum recomputed, so
// that the check under test, not the CRC, is what rejects it.
std::string edited(const std::function<void(format::Superblock&)>& edit, const std::string& base = "plain.img") {
  std::string bytes = compat_image_bytes(base);
  auto* p = reinterpret_cast<uint8_t*>(bytes.data()) + format::kSuperblockOffset;
  auto sb = format::Superblock::decode(std::span<const uint8_t>(p, format::Superblock::kEncodedSize));
  edit(sb);
  sb.encode(std::span(p, sb.size()));
  const uint32_t len = format::checksum_length(1u << p[12]);
  if (len <= bytes.size() - format::kSuperblockOffset) {
    sb.checksum = format::compute_checksum(std::span<const uint8_t>(p, len));
    sb.encode(std::span(p, sb.size()));
  }
  return bytes;
}

template <class E>
std::string open_error(const std::string& bytes, reader::OpenOptions options = {}) {
  try {
    Image::open(write_scratch_image("sb.img", bytes), options);
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "open did not throw the expected error";
  return "";
}

TEST(Superblock, OpensTheReferenceImage) {
  const auto image = Image::open(compat_path("images/plain.img"));
  EXPECT_EQ(image->block_size(), 4096u);
  EXPECT_EQ(image->image_size(), 1028096u);
  EXPECT_EQ(image->superblock().epoch, 1700000000);
  EXPECT_TRUE(image->inode(image->root_nid()).is_dir());
}

TEST(Superblock, RejectsBadMagic) {
  EXPECT_NE(open_error<CorruptError>(edited([](auto& sb) { sb.magic ^= 1; })).find("magic"), std::string::npos);
}

TEST(Superblock, RejectsChecksumMismatchUnlessTold) {
  std::string bytes = compat_image_bytes("plain.img");
  bytes[format::kSuperblockOffset + 64] ^= 0x40;  // inside the volume name
  EXPECT_NE(open_error<CorruptError>(bytes).find("checksum"), std::string::npos);
  EXPECT_NO_THROW(Image::open(write_scratch_image("sb.img", bytes), {.verify_checksum = false}));
}

TEST(Superblock, NamesUnknownIncompatibleFeatures) {
  const auto what = open_error<UnsupportedError>(edited([](auto& sb) { sb.feature_incompat |= 0x200; }));
  EXPECT_NE(what.find("unknown(0x200)"), std::string::npos) << what;
}

TEST(Superblock, RejectsBadGeometry) {
  open_error<CorruptError>(edited([](auto& sb) { sb.blkszbits = 8; }));
  open_error<UnsupportedError>(edited([](auto& sb) { sb.blkszbits = 14; }));
  open_error<CorruptError>(edited([](auto& sb) { sb.sb_extslots = 250; }));
  open_error<UnsupportedError>(edited([](auto& sb) { sb.dirblkbits = 1; }));
  EXPECT_NE(open_error<CorruptError>(edited([](auto& sb) { sb.blocks_lo += 1; })).find("truncated"), std::string::npos);
  open_error<CorruptError>(edited([](auto& sb) { sb.meta_blkaddr = 0xFFFFFFFF; }));
}

TEST(Superblock, RejectsABadRoot) {
  const auto image = Image::open(compat_path("images/plain.img"));
  const auto file = image->resolve("docs/text_100.txt");
  open_error<CorruptError>(edited([&](auto& sb) { sb.root_nid_2b = uint16_t(file.nid); }));
  open_error<CorruptError>(edited([&](auto& sb) { sb.root_nid_2b = 0xFFFF; }));  // past the end of a 1 MiB image
}

TEST(Superblock, RejectsSpecialNidsWithTheMetaboxBit) {
  open_error<CorruptError>(edited([](auto& sb) { sb.packed_nid = 1ull << 63; }));
}

TEST(Superblock, RejectsTinyAndMissingFiles) {
  open_error<CorruptError>(std::string(1100, '\0'));
  open_error<CorruptError>(compat_image_bytes("plain.img").substr(0, 2048));
  try {
    Image::open(::testing::TempDir() + "/does-not-exist.img");
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_EQ(e.error, ENOENT);
  }
}

}  // namespace
}  // namespace erofs::test
