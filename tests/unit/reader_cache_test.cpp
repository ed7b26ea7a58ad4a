// The pcluster cache: concurrent requests for one pcluster share a single decode (counted, not
// timed), its errors reach every waiter, it keeps within its budget, and it forgets on request.
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "reader/pcluster_cache.h"

using namespace erofs::reader;

namespace {

// Called by the thread that loads: returns once `n` other threads wait for its load (or after 30
// s, when the test then fails on its counts).
void wait_for_sharers(PclusterCache& cache, uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (cache.shared_loads() < n && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
}

}  // namespace

// The cache keeps nothing (its budget is below the pcluster's size), so a thread that came after
// the load would decode again: one decode for all eight threads means they shared it. The load
// ends only once the seven others wait for it, so the sharing does not depend on timing.
TEST(PclusterCache, ConcurrentRequestsShareOneLoad) {
  PclusterCache cache(4096);
  std::atomic<int> loads{0};
  const PclusterKey key{0, 4096, 4096, 8192, 0, false};
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      auto bytes = cache.get_or_load(key, [&] {
        ++loads;
        wait_for_sharers(cache, 7);
        return std::make_shared<const erofs::compress::UninitBytes>(8192, uint8_t(7));
      });
      if (bytes && bytes->size() == 8192 && (*bytes)[100] == 7) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(cache.shared_loads(), 7u);
  EXPECT_EQ(ok.load(), 8);
  EXPECT_FALSE(cache.has(key));
}

// A failed load is not handed to the threads that waited for it (an exception object thrown in
// two threads shares a message buffer that ThreadSanitizer sees freed unordered): each loads for
// itself and meets the error.
TEST(PclusterCache, LoadErrorsReachEveryWaiterOnItsOwnThreadAndAreNotCached) {
  PclusterCache cache(1 << 20);
  const PclusterKey key{0, 8192, 4096, 4096, 0, false};
  std::atomic<int> errors{0}, loads{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      try {
        cache.get_or_load(key, [&]() -> PclusterCache::Bytes {
          ++loads;
          wait_for_sharers(cache, 3);
          throw std::runtime_error("corrupt pcluster");
        });
      } catch (const std::runtime_error&) {
        ++errors;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 4);
  EXPECT_EQ(loads.load(), 4);
  EXPECT_EQ(cache.shared_loads(), 3u);
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

// Buffers from the pool may hold more memory than their bytes: the budget counts the memory.
TEST(PclusterCache, CountsTheMemoryItsBuffersHold) {
  PclusterCache cache(3 * 4096);
  for (uint64_t i = 0; i < 2; ++i) {
    auto b = std::make_shared<erofs::compress::UninitBytes>();
    b->reserve(2 * 4096);
    b->resize(4096);
    cache.insert({0, i * 4096, 4096, 4096, 0, false}, std::move(b));
  }
  EXPECT_FALSE(cache.has({0, 0, 4096, 4096, 0, false}));
  EXPECT_TRUE(cache.has({0, 4096, 4096, 4096, 0, false}));
}

TEST(PclusterCache, AForgottenKeyIsDroppedAndFinishedUntilCachedAgain) {
  PclusterCache cache(1 << 20);
  const PclusterKey key{0, 0, 4096, 4096, 0, false}, other{0, 4096, 4096, 4096, 0, false};
  cache.insert(key, std::make_shared<const erofs::compress::UninitBytes>(4096));
  cache.insert(other, std::make_shared<const erofs::compress::UninitBytes>(4096));
  EXPECT_FALSE(cache.finished(key));
  cache.forget(key);
  EXPECT_FALSE(cache.has(key));
  EXPECT_TRUE(cache.has(other));
  EXPECT_TRUE(cache.finished(key));
  EXPECT_FALSE(cache.finished(other));
  cache.insert(key, std::make_shared<const erofs::compress::UninitBytes>(4096));
  EXPECT_FALSE(cache.finished(key));
  // Budget: forgetting gave its bytes back, so both fit again beside a third.
  cache.insert({0, 8192, 4096, 4096, 0, false}, std::make_shared<const erofs::compress::UninitBytes>(4096));
  EXPECT_TRUE(cache.has(other));
}
