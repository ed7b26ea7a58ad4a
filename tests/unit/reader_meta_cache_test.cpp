// The metadata cache: every metadata block (inodes, directory blocks, lcluster indexes, xattrs)
// is read from the image once, however often the walks need it. Counted in pread calls on the
// image file, not timed.
#include <gtest/gtest.h>

#include "reader/image.h"
#include "reader/meta_cache.h"
#include "tests/unit/reader_test_support.h"

namespace erofs::test {
namespace {

// Everything but file data: every inode, directory block, xattr, symlink target and the mapping
// of every block of every file (as fsck follows it).
void walk_metadata(const reader::Image& image, const reader::Inode& dir) {
  std::vector<reader::DirEntry> entries;
  image.read_dir(dir, [&](const reader::DirEntry& e) {
    entries.push_back(e);
    return true;
  });
  for (const auto& e : entries) {
    if (e.name == "." || e.name == "..") continue;
    ASSERT_TRUE(image.lookup(dir, e.name));
    const reader::Inode ino = image.inode(e.nid);
    image.xattrs(ino);
    if (ino.is_symlink()) image.readlink(ino);
    if (ino.is_reg()) {
      image.extents(ino);
      image.check_mapping(ino, 0, ino.size);
    }
    if (ino.is_dir()) walk_metadata(image, ino);
  }
}

class MetaCacheImages : public ::testing::TestWithParam<std::string> {};

TEST_P(MetaCacheImages, EveryMetadataBlockIsReadOnce) {
  const std::string path = compat_path("images/" + GetParam());
  auto image = reader::Image::open(path);
  walk_metadata(*image, image->inode(image->root_nid()));
  const uint64_t first = image->image_reads();
  EXPECT_GT(first, 0u);
  EXPECT_LE(first, (image->image_size() + 4095) / 4096) << "a block was read twice";
  walk_metadata(*image, image->inode(image->root_nid()));
  EXPECT_EQ(image->image_reads(), first) << "the second walk read the image again";

  // Without the cache the same walks read again: the counter sees what the cache saves.
  auto uncached = reader::Image::open(path, {.metadata_cache_bytes = 0});
  walk_metadata(*uncached, uncached->inode(uncached->root_nid()));
  EXPECT_GT(uncached->image_reads(), first);
}

INSTANTIATE_TEST_SUITE_P(Compat, MetaCacheImages,
                         ::testing::Values("plain.img", "chunked.img", "lz4hc-64k.img", "lz4hc-64k-legacy.img",
                                           "lz4hc-ztailpacking.img", "lz4hc-fragments-dedupe.img",
                                           "lz4hc-all-fragments.img", "zstd-48bit.img", "metabox.img"),
                         image_test_name);

TEST(MetaCache, KeepsWithinItsBudgetAndLoadsOnMiss) {
  reader::MetaCache cache(16 * 4096);  // one 4 KiB block per shard
  int loads = 0;
  auto fill = [&](std::span<uint8_t> out) {
    ++loads;
    std::fill(out.begin(), out.end(), uint8_t(loads));
  };
  const auto a = cache.get(0, 0, 4096, fill);
  EXPECT_EQ(cache.get(0, 0, 4096, fill), a);
  EXPECT_EQ(loads, 1);
  // Block 16 shares block 0's shard, and the shard holds one block: block 0 goes.
  cache.get(0, 16, 4096, fill);
  cache.get(0, 0, 4096, fill);
  EXPECT_EQ(loads, 3);
  EXPECT_EQ(cache.loads(), 3u);
  // Streams are told apart.
  cache.get(1, 0, 4096, fill);
  EXPECT_EQ(loads, 4);
}

}  // namespace
}  // namespace erofs::test
