// Image::read_shared: the same bytes as read(), in pieces that point into the pcluster cache.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include <gtest/gtest.h>

#include "compress/codec.h"
#include "reader/image.h"
#include "tests/unit/reader_test_support.h"
#include "tests/unit/text_image.h"

namespace erofs::test {
namespace {

std::vector<uint8_t> joined(const std::vector<reader::SharedBytes>& pieces) {
  std::vector<uint8_t> out;
  for (const auto& p : pieces) {
    EXPECT_FALSE(p.bytes.empty());
    EXPECT_TRUE(p.owner);
    out.insert(out.end(), p.bytes.begin(), p.bytes.end());
  }
  return out;
}

class SharedRead : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedRead, PiecesHoldTheBytesReadReturns) {
  const std::string path = compat_path("images/" + GetParam());
  for (bool check : {true, false}) {
    SCOPED_TRACE(check ? "lz4 offsets checked" : "lz4 offsets not checked");
    const auto image = reader::Image::open(path, {.pcluster_cache_bytes = 1 << 20, .check_lz4_offsets = check});
    size_t files = 0;
    for (const auto& [name, entry] : walk_image(*image)) {
      if (!entry.inode.is_reg()) continue;
      ++files;
      const uint64_t size = entry.inode.size;
      std::vector<uint8_t> whole(size);
      ASSERT_EQ(image->read(entry.inode, 0, whole), size) << name;
      // Whole file, block-sized requests at odd offsets, and ranges running past the end.
      EXPECT_EQ(joined(image->read_shared(entry.inode, 0, size)), whole) << name;
      for (uint64_t off = size / 3; off < size; off += 4093) {
        const uint64_t len = std::min<uint64_t>(4096, size - off);
        const std::vector<uint8_t> want(whole.begin() + off, whole.begin() + off + len);
        EXPECT_EQ(joined(image->read_shared(entry.inode, off, 4096)), want) << name << " at " << off;
      }
      EXPECT_TRUE(image->read_shared(entry.inode, size, 4096).empty()) << name;
    }
    EXPECT_GT(files, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Images, SharedRead,
                         ::testing::Values("plain.img", "lz4hc-64k.img", "lz4hc-ztailpacking.img",
                                           "lz4hc-fragments-dedupe.img", "lz4hc-all-fragments.img", "lzma-1m.img"),
                         image_test_name);

TEST(SharedRead, AReadOfTwoColdPclustersAsksForBothBeforeWaiting) {
  const std::string path = compat_path("images/lz4.img");
  const auto image = reader::Image::open(path);
  // A file whose first two extents are pclusters on the device.
  std::optional<reader::Inode> file;
  uint64_t boundary = 0;
  for (const auto& [name, entry] : walk_image(*image)) {
    if (!entry.inode.is_reg() || entry.inode.size < 8192) continue;
    const reader::Extent first = image->extent_at(entry.inode, 0);
    boundary = first.offset + first.length;
    if (first.kind == reader::Extent::Kind::Compressed && boundary + 100 < entry.inode.size &&
        image->extent_at(entry.inode, boundary).kind == reader::Extent::Kind::Compressed) {
      file = entry.inode;
      break;
    }
  }
  ASSERT_TRUE(file);
  const auto fresh = reader::Image::open(path);
  // Inside one extent: one pcluster, nothing to overlap.
  fresh->read_shared(*file, 10, 100);
  EXPECT_EQ(fresh->image_hints(), 0u);
  // Across the boundary, neither decoded: one hint (the pclusters lie side by side).
  fresh->read_shared(*file, boundary - 100, 200);
  EXPECT_EQ(fresh->image_hints(), 1u);
  // Again: small reads cache nothing, so both are cold again.
  fresh->read_shared(*file, boundary - 100, 200);
  EXPECT_EQ(fresh->image_hints(), 2u);
  // With the second extent in the cache, one pcluster is read and nothing is asked for.
  fresh->prefetch(*file, boundary, 1);
  fresh->read_shared(*file, boundary - 100, 200);
  EXPECT_EQ(fresh->image_hints(), 2u);
}

// A file of text in 64 KiB pclusters (tests/unit/text_image.h), in a folder of its own (ctest
// runs tests side by side).
struct StreamedFile {
  std::string image_path;
  explicit StreamedFile(const std::string& name)
      : image_path(test::build_text_image(std::filesystem::current_path() / name, 2u << 20, 7).image) {}
};

// The third extent: it starts past 128 KiB and has room for 128 KiB reads on both sides of its middle.
reader::Extent middle_extent(const reader::Image& image, const reader::Inode& file) {
  const auto extents = image.extents(file);
  EXPECT_GT(extents.size(), 4u);
  const reader::Extent e = extents.at(2);
  EXPECT_EQ(e.kind, reader::Extent::Kind::Compressed);
  EXPECT_GT(e.offset, 128u << 10);
  return e;
}

// A streaming reader's pclusters follow each other on the device, where the kernel's own
// readahead reads ahead in larger requests than hints for each read would: a large read asks for
// nothing, a small one across two cold extents asks for both.
TEST(SharedRead, OnlyASmallReadAsksForItsColdPclustersAhead) {
  const StreamedFile src("reader_shared_read_hints");
  const auto image = reader::Image::open(src.image_path);
  const reader::Inode file = image->resolve("/big");
  const reader::Extent e = middle_extent(*image, file);
  image->read_shared(file, 0, 100);  // maps the file: its index, if asked for, is asked now
  const uint64_t asked = image->image_hints();
  const auto large = image->read_shared(file, e.offset - 1000, 256 << 10);  // three or more cold extents
  ASSERT_FALSE(large.empty());
  EXPECT_EQ(image->image_hints(), asked);
  const reader::Extent next = image->extent_at(file, e.offset + e.length + 1000);
  image->read_shared(file, next.offset + next.length - 100, 200);  // across two extents the large read left
  EXPECT_EQ(image->image_hints(), asked + 1);
}

// Small reads (random readers') decode an extent only as far as they go, into buffers of their
// own, and cache nothing; a large read that ends inside an extent decodes it whole into the
// cache, and later reads share those bytes.
TEST(SharedRead, DecodedExtentsAreSharedWithTheCacheNotCopied) {
  const StreamedFile src("reader_shared_read_shared");
  const auto image = reader::Image::open(src.image_path);
  const reader::Inode file = image->resolve("/big");
  const reader::Extent e = middle_extent(*image, file);
  const auto random = image->read_shared(file, e.offset + 50, 100);
  const auto first = image->read_shared(file, e.offset, 100);
  const auto random_again = image->read_shared(file, e.offset + 50, 100);
  ASSERT_EQ(random.size(), 1u);
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(random_again.size(), 1u);
  EXPECT_EQ(random[0].bytes.size(), 100u);
  EXPECT_NE(random[0].owner, first[0].owner);
  EXPECT_NE(random[0].owner, random_again[0].owner);
  EXPECT_NE(first[0].owner, random_again[0].owner);  // the read from e's start cached nothing
  EXPECT_TRUE(std::equal(random[0].bytes.begin(), random[0].bytes.end(), random_again[0].bytes.begin()));
  const uint64_t piece = 128 << 10;
  const auto large = image->read_shared(file, e.offset + 1000 - piece, piece);
  ASSERT_FALSE(large.empty());
  const auto again = image->read_shared(file, e.offset + 50, 100);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(large.back().owner, again[0].owner);
  EXPECT_EQ(large.back().bytes.data() + 50, again[0].bytes.data());
  EXPECT_TRUE(std::equal(random[0].bytes.begin(), random[0].bytes.end(), again[0].bytes.begin()));
}

// A streaming reader (large reads, as the kernel's readahead sends) that takes an extent through
// its end drops it from the cache: a later read of it decodes again instead of sharing the bytes.
// A page-sized reader that takes the end keeps it.
TEST(SharedRead, AStreamingReaderThatTookAnExtentsEndDropsItFromTheCache) {
  const StreamedFile src("reader_shared_read_streaming_tail");
  for (const uint64_t piece : {uint64_t(256) << 10, uint64_t(4096)}) {
    SCOPED_TRACE(piece);
    const auto image = reader::Image::open(src.image_path);
    const reader::Inode file = image->resolve("/big");
    const reader::Extent e = middle_extent(*image, file);
    // A large read ends in e's middle; then a large read runs from there past e's end, or a page
    // read takes e's last page.
    const bool large = piece > 4096;
    const uint64_t mid = e.offset + e.length / 2, first = 256 << 10;
    const auto before = image->read_shared(file, mid - first, first);  // ends in e: e decoded into the cache
    const auto after = image->read_shared(file, large ? mid : e.offset + e.length - piece, piece);
    ASSERT_FALSE(before.empty());
    ASSERT_FALSE(after.empty());
    EXPECT_EQ(before.back().owner, after.front().owner);  // e's tail came from the cache
    const auto later = image->read_shared(file, e.offset + e.length - 100, 100);
    ASSERT_EQ(later.size(), 1u);
    if (!large) {
      EXPECT_EQ(later[0].owner, before.back().owner);  // a page-sized reader left e cached
    } else {
      EXPECT_NE(later[0].owner, before.back().owner);
    }
    std::vector<uint8_t> want(100);
    image->read(file, e.offset + e.length - 100, want);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), later[0].bytes.begin()));
  }
}

// Requests handled out of order: the one for the extent's tail came first and dropped it, so the
// late one for its head decodes only that head, and leaves nothing in the cache.
TEST(SharedRead, AHeadReadAfterAStreamingReaderTookTheTailIsNotCached) {
  const StreamedFile src("reader_shared_read_streaming_head");
  const auto image = reader::Image::open(src.image_path);
  const reader::Inode file = image->resolve("/big");
  const reader::Extent e = middle_extent(*image, file);
  const uint64_t mid = e.offset + e.length / 2, piece = 256 << 10;
  image->read_shared(file, mid, piece);
  const auto head = image->read_shared(file, mid - piece, piece);
  ASSERT_FALSE(head.empty());
  const auto again = image->read_shared(file, e.offset, 100);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_NE(again[0].owner, head.back().owner);
  std::vector<uint8_t> want(static_cast<size_t>(piece));
  image->read(file, mid - piece, want);
  std::vector<uint8_t> got;
  for (const auto& p : head) got.insert(got.end(), p.bytes.begin(), p.bytes.end());
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace erofs::test
