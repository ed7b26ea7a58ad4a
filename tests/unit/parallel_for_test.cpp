#include "util/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace erofs::util {
namespace {

TEST(ParallelFor, CallsEveryIndexOnceInEveryRun) {
  ParallelFor pool(3);
  for (size_t n : {0, 1, 3, 4, 5, 17, 1000, 2, 64}) {
    std::vector<std::atomic<int>> calls(n);
    pool.run(n, [&](size_t i) { calls[i].fetch_add(1); });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(calls[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelFor, SharesALongLoopBetweenThreads) {
  ParallelFor pool(2);
  std::mutex m;
  std::set<std::thread::id> threads;
  // Each call waits until two threads have taken part, so the loop cannot finish on one.
  std::atomic<int> entered{0};
  pool.run(64, [&](size_t) {
    {
      std::lock_guard l(m);
      threads.insert(std::this_thread::get_id());
    }
    if (entered.fetch_add(1) == 0)
      while (true) {
        std::lock_guard l(m);
        if (threads.size() >= 2) break;
      }
  });
  EXPECT_GE(threads.size(), 2u);
}

TEST(ParallelFor, WithoutHelpersRunsOnTheCallingThread) {
  ParallelFor pool(0);
  std::vector<std::thread::id> who(10);
  pool.run(who.size(), [&](size_t i) { who[i] = std::this_thread::get_id(); });
  for (auto& id : who) EXPECT_EQ(id, std::this_thread::get_id());
}

}  // namespace
}  // namespace erofs::util
