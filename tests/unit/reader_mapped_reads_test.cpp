// OpenOptions::mapped_reads: a random reader's heads are decoded from a mapping of the image, and
// an image truncated under the mapping stays an error, not SIGBUS (reader/mapping_faults.h).
// Judged by the bytes read back and by image_mapped_reads(), which counts the decodes the
// mapping served.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reader/image.h"
#include "reader/mapping_faults.h"
#include "tests/unit/text_image.h"

namespace fs = std::filesystem;
using namespace erofs;

namespace {

class MappedReads : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory a test: ctest runs the tests of this fixture at once, in separate processes.
    dir_ = fs::current_path() / (std::string("reader_mapped_reads_") +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    // 4 MiB: some 16 pclusters of 64 KiB, so that a read inside one decodes a head.
    auto t = test::build_text_image(dir_, 4u << 20, 7);
    image_ = t.image;
    content_ = t.content;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static reader::OpenOptions options(bool mapped) {
    // As the FUSE mount opens an image: unchecked LZ4 into zeroed buffers.
    return {.check_lz4_offsets = false, .mapped_reads = mapped};
  }

  // `count` 4 KiB reads at random places, each compared with the source.
  void read_random(const reader::Image& img, int count, unsigned seed) {
    const reader::Inode f = img.resolve("/big");
    std::mt19937_64 rng(seed);
    for (int i = 0; i < count; ++i) {
      const uint64_t at = rng() % (f.size - 4096);
      std::string got;
      for (const auto& p : img.read_shared(f, at, 4096)) got.append(reinterpret_cast<const char*>(p.bytes.data()), p.bytes.size());
      ASSERT_EQ(got, content_.substr(size_t(at), 4096)) << "read of 4096 bytes at " << at;
    }
  }

  fs::path dir_;
  std::string image_, content_;
};

TEST_F(MappedReads, HeadsComeFromTheMappingWithTheSameBytes) {
  const auto mapped = reader::Image::open(image_, options(true));
  read_random(*mapped, 200, 1);
  EXPECT_GT(mapped->image_mapped_reads(), 100u) << "random reads end inside extents: most decode a head";
  const auto plain = reader::Image::open(image_, options(false));
  read_random(*plain, 200, 1);
  EXPECT_EQ(plain->image_mapped_reads(), 0u);
}

TEST_F(MappedReads, AnImageTruncatedUnderTheMappingIsAnErrorAndTheRestStillReads) {
  const auto img = reader::Image::open(image_, options(true));
  const reader::Inode f = img->resolve("/big");
  read_random(*img, 20, 2);
  const uint64_t served = img->image_mapped_reads();
  ASSERT_GT(served, 0u);
  // The second half of the image goes; its pages leave the page cache and the mapping with it.
  const uint64_t half = fs::file_size(image_) / 2 / 4096 * 4096;
  fs::resize_file(image_, half);
  // Reads of the last MiB of the file need pclusters past the new end: each is an error, and
  // the process lives on.
  int errors = 0;
  for (uint64_t at = f.size - (1u << 20); at < f.size - 4096; at += 100000) {
    try {
      (void)img->read_shared(f, at, 4096);
    } catch (const std::exception& e) {
      ++errors;
      EXPECT_NE(std::string(e.what()).find("x.img"), std::string::npos) << "names the image: " << e.what();
    }
  }
  EXPECT_GT(errors, 0);
  // After the fault the mapping serves nobody: the first pclusters are read with pread.
  const uint64_t served_after = img->image_mapped_reads();
  std::string got;
  for (const auto& p : img->read_shared(f, 100000, 4096)) got.append(reinterpret_cast<const char*>(p.bytes.data()), p.bytes.size());
  EXPECT_EQ(got, content_.substr(100000, 4096));
  EXPECT_EQ(img->image_mapped_reads(), served_after);
}

// The handler takes only faults in the mappings it watches; any other SIGBUS ends the process as
// it did without it.
TEST(MappingFaults, AFaultOutsideTheWatchedMappingsStillEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = (fs::current_path() / "mapping_faults_outside").string();
  std::ofstream(path, std::ios::binary) << std::string(8192, 'x');
  EXPECT_DEATH(
      {
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        void* watched = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
        reader::mapping_faults::watch(watched, 4096);
        auto* other = static_cast<volatile const char*>(::mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd, 0));
        if (::ftruncate(fd, 0) != 0) _exit(0);
        (void)other[4096];  // past the end of the file: SIGBUS, not ours
        _exit(0);
      },
      "");
  fs::remove(path);
}

}  // namespace
