// The pcluster cache: concurrent requests for one pcluster share a single decode.
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "reader/pcluster_cache.h"

using namespace erofs::reader;

TEST(PclusterCache, ConcurrentRequestsShareOneLoad) {
  PclusterCache cache(1 << 20);
  std::atomic<int> loads{0};
  const PclusterKey key{0, 4096, 4096, 8192, 0, false};
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      auto bytes = cache.get_or_load(key, [&] {
        ++loads;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        return std::make_shared<const erofs::compress::UninitBytes>(8192, uint8_t(7));
      });
      if (bytes && bytes->size() == 8192 && (*bytes)[100] == 7) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(ok.load(), 8);
  EXPECT_TRUE(cache.has(key));
}

TEST(PclusterCache, LoadErrorsReachEveryWaiterAndAreNotCached) {
  PclusterCache cache(1 << 20);
  const PclusterKey key{0, 8192, 4096, 4096, 0, false};
  std::atomic<int> errors{0}, loads{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      try {
        cache.get_or_load(key, [&]() -> PclusterCache::Bytes {
          ++loads;
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          throw std::runtime_error("corrupt pcluster");
        });
      } catch (const std::runtime_error&) {
        ++errors;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 4);
  EXPECT_GE(loads.load(), 1);
  EXPECT_FALSE(cache.has(key));
  auto ok = cache.get_or_load(key, [] { return std::make_shared<const erofs::compress::UninitBytes>(4096); });
  EXPECT_EQ(ok->size(), 4096u);
}

TEST(PclusterCache, EvictsWithinTheBudget) {
  PclusterCache cache(3 * 4096);
  for (uint64_t i = 0; i < 5; ++i)
    cache.insert({0, i * 4096, 4096, 4096, 0, false}, std::make_shared<const erofs::compress::UninitBytes>(4096));
  EXPECT_FALSE(cache.has({0, 0, 4096, 4096, 0, false}));
  EXPECT_FALSE(cache.has({0, 4096, 4096, 4096, 0, false}));
  EXPECT_TRUE(cache.has({0, 4 * 4096, 4096, 4096, 0, false}));
}
