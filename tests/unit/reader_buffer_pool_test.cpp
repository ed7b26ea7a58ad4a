// BufferPool: decode buffers handed out again once let go, within a byte bound, the oldest
// dropped first; small ones left to malloc unless brief; a buffer may outlive its pool.
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "reader/buffer_pool.h"

using erofs::reader::BufferPool;

TEST(BufferPool, ABufferLetGoIsHandedOutAgainForASizeItFits) {
  BufferPool pool(8 << 20);
  const uint8_t* first;
  {
    auto b = pool.take(300 << 10);
    EXPECT_EQ(b->size(), 300u << 10);
    first = b->data();
  }
  EXPECT_GE(pool.kept_bytes(), 300u << 10);
  auto again = pool.take(290 << 10);
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(again->size(), 290u << 10);
  EXPECT_EQ(pool.kept_bytes(), 0u);
}

TEST(BufferPool, NotForALargerSizeNorOneUnderHalfItsCapacity) {
  BufferPool pool(8 << 20);
  pool.take(300 << 10);  // let go at once
  const uint64_t kept = pool.kept_bytes();
  ASSERT_GT(kept, 0u);
  auto larger = pool.take(600 << 10);
  auto smaller = pool.take(100 << 10);
  EXPECT_EQ(pool.kept_bytes(), kept);
}

// Heads of extents and whole-extent reads are let go once replied: any kept buffer will do, and
// small sizes are pooled as well, so a random reader's heads of every size reuse one buffer.
TEST(BufferPool, ABriefTakeGetsTheSmallestKeptBufferThatFitsHoweverLarger) {
  BufferPool pool(8 << 20);
  const uint8_t* small_one;
  const uint8_t* large_one;
  {
    auto a = pool.take(900 << 10);
    auto b = pool.take(300 << 10);
    large_one = a->data();
    small_one = b->data();
  }
  {
    auto head = pool.take_brief(4096);
    EXPECT_EQ(head->data(), small_one);
    EXPECT_EQ(head->size(), 4096u);
    auto next = pool.take_brief(100 << 10);
    EXPECT_EQ(next->data(), large_one);
  }
  auto brief = pool.take_brief(1000);  // both are back: the smaller serves
  EXPECT_EQ(brief->data(), small_one);
}

TEST(BufferPool, SmallBriefBuffersArePooled) {
  BufferPool pool(8 << 20);
  pool.take_brief(4096);
  EXPECT_GT(pool.kept_bytes(), 0u);
}

// A pool that could not keep a 2 MiB buffer makes brief ones as take() does (malloc for small
// sizes), instead of a buffer it would drop as soon as it is let go.
TEST(BufferPool, ASmallPoolMakesBriefBuffersAsOthers) {
  BufferPool pool(1 << 20);
  pool.take_brief(4096);
  EXPECT_EQ(pool.kept_bytes(), 0u);
  pool.take_brief(300 << 10);
  EXPECT_GT(pool.kept_bytes(), 0u);
  EXPECT_LE(pool.kept_bytes(), 1u << 20);
}

// A zeroed buffer is zero whatever its earlier holders wrote: it is zeroed as it is let go, and
// one let go from other use is not handed out as zeroed.
TEST(BufferPool, AZeroedTakeIsZeroWhateverWasWrittenBefore) {
  BufferPool pool(8 << 20);
  auto all_zero = [](const erofs::compress::UninitBytes& b) {
    return std::all_of(b.begin(), b.end(), [](uint8_t v) { return v == 0; });
  };
  const uint8_t* first;
  {
    auto b = pool.take_zeroed(4096);
    EXPECT_TRUE(all_zero(*b));
    std::fill(b->begin(), b->end(), uint8_t(0xAA));
    first = b->data();
  }
  {
    auto b = pool.take_zeroed(100 << 10);  // the same buffer, larger than its last use
    EXPECT_EQ(b->data(), first);
    EXPECT_TRUE(all_zero(*b));
    std::fill(b->begin(), b->end(), uint8_t(0xBB));
  }
  {
    auto b = pool.take_brief(300 << 10);  // brief use leaves it dirty
    EXPECT_EQ(b->data(), first);
    std::fill(b->begin(), b->end(), uint8_t(0xCC));
  }
  auto b = pool.take_zeroed(500 << 10);
  EXPECT_TRUE(all_zero(*b));
}

// Kept zeroed buffers (the pcluster cache's, for unchecked LZ4) are sized as take's, zero when
// handed out again whatever was written, and never a dirty buffer from another use.
TEST(BufferPool, AZeroedKeptTakeIsZeroAndSizedForWhatItHolds) {
  BufferPool pool(8 << 20);
  auto all_zero = [](const erofs::compress::UninitBytes& b) {
    return std::all_of(b.begin(), b.end(), [](uint8_t v) { return v == 0; });
  };
  const uint8_t* first;
  {
    auto b = pool.take_zeroed_kept(300 << 10);
    EXPECT_TRUE(all_zero(*b));
    EXPECT_LE(b->capacity(), size_t(600) << 10);
    std::fill(b->begin(), b->end(), uint8_t(0xAA));
    first = b->data();
  }
  {
    auto b = pool.take_zeroed_kept(280 << 10);  // the same buffer, zeroed as it was let go
    EXPECT_EQ(b->data(), first);
    EXPECT_TRUE(all_zero(*b));
  }
  {
    auto b = pool.take(290 << 10);  // a plain take may have it, and leaves it dirty
    EXPECT_EQ(b->data(), first);
    std::fill(b->begin(), b->end(), uint8_t(0xBB));
  }
  auto b = pool.take_zeroed_kept(300 << 10);
  EXPECT_TRUE(all_zero(*b));
  // Small sizes are malloc's, zeroed as they are handed out.
  auto small = pool.take_zeroed_kept(1000);
  EXPECT_EQ(small->size(), 1000u);
  EXPECT_TRUE(all_zero(*small));
}

// Without room to keep brief buffers, a zeroed one is zeroed as it is handed out.
TEST(BufferPool, ASmallPoolZeroesAsItHandsOut) {
  BufferPool pool(1 << 20);
  {
    auto b = pool.take(300 << 10);
    std::fill(b->begin(), b->end(), uint8_t(0xAA));
  }
  auto b = pool.take_zeroed(300 << 10);
  EXPECT_TRUE(std::all_of(b->begin(), b->end(), [](uint8_t v) { return v == 0; }));
}

TEST(BufferPool, KeepsWithinItsBoundDroppingTheOldestFirst) {
  BufferPool pool(1 << 20);
  std::vector<std::shared_ptr<erofs::compress::UninitBytes>> held;
  for (int i = 0; i < 6; ++i) held.push_back(pool.take(256 << 10));
  const uint8_t* newest = held.back()->data();
  held.clear();  // oldest first
  EXPECT_LE(pool.kept_bytes(), 1u << 20);
  EXPECT_EQ(pool.kept_bytes(), 1u << 20);
  // Every kept buffer is one of the last four let go; the last is among them.
  bool found = false;
  std::vector<std::shared_ptr<erofs::compress::UninitBytes>> again;
  for (int i = 0; i < 4; ++i) {
    again.push_back(pool.take(256 << 10));
    found |= again.back()->data() == newest;
  }
  EXPECT_TRUE(found);
}

TEST(BufferPool, SmallBuffersAreLeftToMalloc) {
  BufferPool pool(8 << 20);
  pool.take(4096);
  EXPECT_EQ(pool.kept_bytes(), 0u);
}

TEST(BufferPool, ABufferMayOutliveItsPool) {
  std::shared_ptr<erofs::compress::UninitBytes> b;
  {
    BufferPool pool(8 << 20);
    b = pool.take(128 << 10);
  }
  (*b)[0] = 1;
  b.reset();  // goes back to the pool's shelf, which it keeps alive
  SUCCEED();
}

// Taken and let go on several threads at once (run under ThreadSanitizer as tsan.*): each
// thread's bytes stay its own while it holds them.
TEST(BufferPool, ThreadsTakeAndLetGoAtOnce) {
  BufferPool pool(2 << 20);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto b = pool.take(size_t(64 + (i + t) % 5 * 64) << 10);
        std::fill(b->begin(), b->end(), uint8_t(t));
        if (std::any_of(b->begin(), b->end(), [&](uint8_t v) { return v != uint8_t(t); })) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(pool.kept_bytes(), 2u << 20);
}
