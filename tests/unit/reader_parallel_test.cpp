// Parallel extraction and fsck, and the caches every thread shares: with eight workers the
// results equal those of one. Also built into threaded_tests, so ThreadSanitizer watches them.
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "reader/extract.h"
#include "reader/fsck.h"
#include "reader/image.h"
#include "tests/unit/reader_test_support.h"

namespace erofs::test {
namespace {

namespace fs = std::filesystem;

// Everything an extraction restores, per path: type and mode, owner, size, mtime in ns, content
// digest or symlink target, xattrs, and which earlier path shares the inode (hard links).
std::map<std::string, std::string> describe(const fs::path& root) {
  std::map<std::string, std::string> out;
  std::map<std::pair<dev_t, ino_t>, std::string> first_name;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = fs::relative(it->path(), root).string();
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0) throw std::runtime_error("lstat " + rel);
    std::string d = std::to_string(st.st_mode) + " " + std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) +
                    " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                    std::to_string(st.st_mtim.tv_nsec);
    if (S_ISREG(st.st_mode)) {
      Sha256 h;
      const std::string bytes = read_whole_file(it->path());
      h.update(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      d += " " + h.hex();
      auto [at, fresh] = first_name.try_emplace({st.st_dev, st.st_ino}, rel);
      if (!fresh) d += " =" + at->second;
    } else if (S_ISLNK(st.st_mode)) {
      d += " -> " + fs::read_symlink(it->path()).string();
    }
    char names[4096];
    const ssize_t n = ::llistxattr(it->path().c_str(), names, sizeof names);
    for (ssize_t p = 0; p < n; p += ssize_t(std::strlen(names + p)) + 1) {
      char value[4096];
      const ssize_t v = ::lgetxattr(it->path().c_str(), names + p, value, sizeof value);
      d += std::string(" ") + (names + p) + "=" + std::string(value, size_t(std::max<ssize_t>(v, 0)));
    }
    out[rel] = d;
  }
  return out;
}

struct Scratch {
  fs::path dir = fs::path(::testing::TempDir()) / ("parallel-" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

class ReaderParallel : public ::testing::TestWithParam<std::string> {};

TEST_P(ReaderParallel, ExtractWithEightWorkersEqualsOne) {
  auto image = reader::Image::open(compat_path("images/" + GetParam()));
  Scratch s;
  std::map<unsigned, std::map<std::string, std::string>> trees;
  for (unsigned workers : {1u, 8u}) {
    reader::ExtractOptions o;
    o.workers = workers;
    const fs::path dest = s.dir / std::to_string(workers);
    const reader::ExtractStats stats = reader::extract_image(*image, dest, o);
    EXPECT_EQ(stats.errors, 0u);
    EXPECT_EQ(stats.workers, workers);
    EXPECT_GT(stats.files, 10u);
    trees[workers] = describe(dest);
  }
  EXPECT_EQ(trees[1], trees[8]);
}

TEST_P(ReaderParallel, FsckWithEightWorkersEqualsOne) {
  const std::string path = compat_path("images/" + GetParam());
  reader::FsckOptions one, eight;
  one.workers = 1;
  eight.workers = 8;
  const reader::FsckReport a = reader::fsck_image(path, one), b = reader::fsck_image(path, eight);
  EXPECT_TRUE(a.clean()) << a.problems.front();
  EXPECT_EQ(a.problems, b.problems);
  EXPECT_EQ(a.files, b.files);
  EXPECT_EQ(a.data_bytes, b.data_bytes);
  EXPECT_GT(a.data_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Compat, ReaderParallel,
                         ::testing::Values("plain.img", "chunked.img", "lz4hc-64k.img", "lz4hc-fragments-dedupe.img",
                                           "lz4hc-all-fragments.img", "metabox.img"),
                         image_test_name);

// Eight threads walk one image at once, sharing its metadata and pcluster caches, each reading
// every inode, directory, xattr and byte: each sees what a walk on its own sees.
TEST(ReaderParallelCaches, ThreadsWalkingTogetherSeeWhatOneSees) {
  auto image = reader::Image::open(compat_path("images/lz4hc-fragments-dedupe.img"),
                                   {.pcluster_cache_bytes = 1 << 20, .metadata_cache_bytes = 64 << 10});
  const auto alone = walk_image(*image);
  std::vector<std::map<std::string, WalkedEntry>> walks(8);
  std::vector<std::thread> threads;
  for (auto& w : walks) threads.emplace_back([&] { w = walk_image(*image); });
  for (auto& t : threads) t.join();
  for (const auto& w : walks) {
    ASSERT_EQ(w.size(), alone.size());
    for (const auto& [path, e] : alone) {
      EXPECT_EQ(w.at(path).sha256, e.sha256) << path;
      EXPECT_EQ(w.at(path).xattrs, e.xattrs) << path;
      EXPECT_EQ(w.at(path).inode.nid, e.inode.nid) << path;
    }
  }
}

}  // namespace
}  // namespace erofs::test
