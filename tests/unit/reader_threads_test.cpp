// Many threads reading one Image at once (const methods are thread-safe), with a pcluster cache
// small enough to evict all the time.
#include <thread>

#include <gtest/gtest.h>

#include "reader/image.h"
#include "tests/unit/reader_test_support.h"

namespace erofs::test {
namespace {

class Threads : public ::testing::TestWithParam<std::string> {};

TEST_P(Threads, ConcurrentWalksSeeTheSameTree) {
  const auto expected = load_expected_tree();
  for (uint64_t cache : {uint64_t(0), uint64_t(256 << 10), uint64_t(64 << 20)}) {
    SCOPED_TRACE("cache " + std::to_string(cache));
    const auto image = reader::Image::open(compat_path("images/" + GetParam()), {.pcluster_cache_bytes = cache});
    std::vector<std::map<std::string, WalkedEntry>> results(8);
    std::vector<std::thread> threads;
    for (auto& result : results) threads.emplace_back([&] { result = walk_image(*image); });
    for (auto& t : threads) t.join();
    for (const auto& result : results) {
      for (const auto& [path, want] : expected) {
        if (want.type == 'f') {
          EXPECT_EQ(result.at(path).sha256, want.sha256) << path;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Compressed, Threads,
                         ::testing::Values("lz4hc-all-fragments.img", "zstd-48bit.img", "metabox.img", "lzma-1m.img"),
                         image_test_name);

}  // namespace
}  // namespace erofs::test
