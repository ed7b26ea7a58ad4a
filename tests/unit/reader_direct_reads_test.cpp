// OpenOptions::direct_reads: a reader that reads every file once (fsck, extract) reads the
// pclusters of an image the page cache does not hold around it (O_DIRECT), and what the cache
// holds from it. Judged by the reads counted and by what the page cache holds afterwards
// (mincore), not by time.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compress/codec.h"
#include "reader/image.h"
#include "tests/unit/text_image.h"

namespace fs = std::filesystem;
using namespace erofs;

namespace {

// Pages of `path` the page cache holds.
size_t resident_pages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  const size_t size = size_t(::lseek(fd, 0, SEEK_END));
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  EXPECT_NE(map, MAP_FAILED);
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((size + page - 1) / page);
  EXPECT_EQ(::mincore(map, size, in.data()), 0);
  ::munmap(map, size);
  size_t n = 0;
  for (unsigned char r : in) n += r & 1;
  return n;
}

// Drops the file's pages from the page cache (written back first: only clean pages go).
void evict(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fdatasync(fd), 0);
  ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
}

class DirectReads : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory a test: ctest runs the tests of this fixture at once, in separate processes.
    dir_ = fs::current_path() / (std::string("reader_direct_reads_") +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    // 4 MiB: some 16 pclusters of 64 KiB.
    auto t = test::build_text_image(dir_, 4u << 20, 11);
    image_ = t.image;
    content_ = t.content;
    evict(image_);
    if (resident_pages(image_) != 0) GTEST_SKIP() << "SKIPPED: the filesystem of " << dir_ << " keeps the image cached";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Reads the file whole, in 1 MiB reads, as extract does; returns the reads around the cache.
  uint64_t read_all(bool direct) {
    const auto img = reader::Image::open(image_, {.whole_extents = true, .direct_reads = direct});
    const reader::Inode f = img->resolve("/big");
    std::string got(size_t(f.size), '\0');
    for (uint64_t at = 0; at < f.size;) {
      const size_t n = img->read(f, at, std::span(reinterpret_cast<uint8_t*>(got.data()) + at,
                                                   size_t(std::min<uint64_t>(1 << 20, f.size - at))));
      EXPECT_GT(n, 0u);
      if (n == 0) break;
      at += n;
    }
    EXPECT_TRUE(got == content_) << "the file read back differs from its source";
    return img->image_direct_reads();
  }

  fs::path dir_;
  std::string image_, content_;
};

TEST_F(DirectReads, AnUncachedImageIsReadAroundThePageCache) {
  const size_t image_pages = size_t(fs::file_size(image_) / size_t(::sysconf(_SC_PAGESIZE)));
  EXPECT_GT(read_all(true), 0u);
  // The metadata (superblock, inode, index) is read through the cache; the pclusters are not.
  EXPECT_LT(resident_pages(image_), image_pages / 4);
}

TEST_F(DirectReads, WithoutTheOptionTheImageIsReadThroughThePageCache) {
  EXPECT_EQ(read_all(false), 0u);
  EXPECT_GT(resident_pages(image_), size_t(fs::file_size(image_) / size_t(::sysconf(_SC_PAGESIZE))) / 2);
}

TEST_F(DirectReads, WhatThePageCacheHoldsIsReadFromIt) {
  read_all(false);  // now cached
  EXPECT_EQ(read_all(true), 0u);
}

}  // namespace
