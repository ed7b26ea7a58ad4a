// StorePolicy: when the FUSE page store hands an extent to the kernel. A small extent on its
// second read, a large one on its fourth once a 64th of its file was read; a small one on its
// first once an eighth of its file was read; files counted apart.
#include <gtest/gtest.h>

#include "fuse/store_policy.h"

using erofs::fuse::StorePolicy;

namespace {

constexpr uint64_t kFile = 1000000000;  // the benchmark's 10^9-byte file
constexpr uint64_t kSmall = 16384;      // about what a 4 KiB pcluster of it decodes to
constexpr uint64_t kLarge = 368640;     // about what a 64 KiB one decodes to

}  // namespace

TEST(StorePolicy, ASmallExtentIsStoredOnItsSecondRead) {
  StorePolicy p;
  EXPECT_FALSE(p.store_after(7, kFile, 4096, 40960, kSmall));
  EXPECT_FALSE(p.store_after(7, kFile, 4096, 81920, kSmall));  // another extent
  EXPECT_TRUE(p.store_after(7, kFile, 4096, 40960, kSmall));
  // Stored, it is counted afresh (the kernel may have let its pages go).
  EXPECT_FALSE(p.store_after(7, kFile, 4096, 40960, kSmall));
}

TEST(StorePolicy, ALargeExtentIsStoredOnItsFourthRead) {
  StorePolicy p;
  EXPECT_FALSE(p.store_after(7, kFile, kFile / 64, 4 * kLarge, kSmall));  // a 64th of the file, elsewhere
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(p.store_after(7, kFile, 4096, 0, kLarge)) << i;
  EXPECT_TRUE(p.store_after(7, kFile, 4096, 0, kLarge));
}

TEST(StorePolicy, ALargeExtentWaitsUntilA64thOfItsFileWasRead) {
  StorePolicy p;
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(p.store_after(7, kFile, 4096, 0, kLarge)) << i;
  EXPECT_FALSE(p.store_after(7, kFile, kFile / 64 - 7 * 4096 - 1, 4 * kLarge, kSmall));  // one byte short
  EXPECT_FALSE(p.store_after(7, kFile, 4096, 0, kLarge));
  // Read far enough, the extent's next read stores it: its earlier reads still count.
  EXPECT_TRUE(p.store_after(7, kFile, 4096, 0, kLarge));
}

TEST(StorePolicy, ASmallExtentOfAFileReadDenselyIsStoredOnItsFirstRead) {
  constexpr uint64_t file = 1 << 20;  // an eighth: 32 reads of 4 KiB
  StorePolicy p;
  for (uint64_t i = 0; i < 31; ++i) EXPECT_FALSE(p.store_after(7, file, 4096, i * kSmall, kSmall)) << i;
  EXPECT_TRUE(p.store_after(7, file, 4096, 31 * kSmall, kSmall));
  EXPECT_TRUE(p.store_after(7, file, 4096, 40 * kSmall, kSmall));
  // Large extents still wait for their fourth read, however densely their file is read.
  EXPECT_FALSE(p.store_after(7, file, 4096, 0, kLarge));
}

TEST(StorePolicy, FilesAreCountedApart) {
  constexpr uint64_t file = 1 << 20;
  StorePolicy p;
  EXPECT_FALSE(p.store_after(7, file, file / 8 - 4096, 0, kSmall));
  EXPECT_FALSE(p.store_after(8, file, 4096, kSmall, kSmall));  // file 7's bytes do not count for 8
  EXPECT_TRUE(p.store_after(7, file, 4096, kSmall, kSmall));
  // Nor does one file's extent count for another's at the same offset.
  EXPECT_FALSE(p.store_after(9, kFile, 4096, 0, kSmall));
  EXPECT_FALSE(p.store_after(10, kFile, 4096, 0, kSmall));
}
