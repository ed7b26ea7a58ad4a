// UninitBytes: large buffers start on a page (the reader reads into them with O_DIRECT), and the
// largest are pages of their own that go back to the system when let go, whatever malloc's
// arenas hold (a fsck once peaked at twice its memory through gaps those arenas kept).
// UninitHeapBytes: made and let go again and again, they reuse malloc's memory.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "compress/uninit_bytes.h"

using erofs::compress::UninitBytes;
using erofs::compress::UninitHeapBytes;

namespace {

// Whether the page at `p` is mapped in this process (mincore fails with ENOMEM where not).
bool mapped(const void* p) {
  const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  unsigned char in = 0;
  return ::mincore(reinterpret_cast<void*>(uintptr_t(p) & ~(page - 1)), 1, &in) == 0 || errno != ENOMEM;
}

TEST(UninitBytes, LargeBuffersStartOnAPage) {
  for (size_t n : {16384u, 65536u, 131072u, 1u << 20}) {
    UninitBytes b(n);
    EXPECT_EQ(uintptr_t(b.data()) % 4096, 0u) << n;
  }
}

// Sanitizers put every buffer under their own allocator (AddressSanitizer watches only the heap).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// A large block freed raises glibc's mmap threshold past 1 MiB, as a build's 4 MiB input windows
// do: from then on, buffers of that size taken from malloc come from its heap.
void raise_malloc_mmap_threshold() {
  std::vector<uint8_t> big(4u << 20, 1);
  volatile uint8_t sink = big[big.size() / 2];
  (void)sink;
}

TEST(UninitBytes, TheLargestGoBackToTheSystemWhenLetGo) {
  if (kSanitized) GTEST_SKIP() << "a sanitizer's allocator holds every buffer";
  // Taken from malloc, they would now stay mapped after they are let go.
  raise_malloc_mmap_threshold();
  const uint8_t* at = nullptr;
  {
    UninitBytes b(1u << 20);
    b[0] = 1;
    b[b.size() - 1] = 2;
    at = b.data();
    ASSERT_TRUE(mapped(at));
    ASSERT_TRUE(mapped(at + b.size() - 1));
  }
  EXPECT_FALSE(mapped(at));
  EXPECT_FALSE(mapped(at + (1u << 20) - 1));
}

uint64_t minor_faults() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return uint64_t(u.ru_minflt);
}

// The writer's per-segment buffers: mapped afresh, each 1 MiB one would fault in 256 new pages,
// 5,120 in 20 rounds. The kernel may fault a reused page in again for reasons of its own (once
// 1,799 faults with the whole suite running beside; under 256 in 20 runs alone), so the count is
// taken three times and the fewest must stay below one buffer's pages.
TEST(UninitHeapBytes, BuffersMadeAgainAndAgainFaultInNoFreshPages) {
  if (kSanitized) GTEST_SKIP() << "a sanitizer's allocator holds every buffer";
  auto cycle = [] {
    UninitHeapBytes b(1u << 20);
    for (size_t i = 0; i < b.size(); i += 4096) b[i] = uint8_t(i);
    volatile uint8_t sink = b[b.size() / 2];
    (void)sink;
  };
  raise_malloc_mmap_threshold();
  cycle();
  uint64_t fewest = UINT64_MAX;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const uint64_t before = minor_faults();
    for (int i = 0; i < 20; ++i) cycle();
    fewest = std::min(fewest, minor_faults() - before);
  }
  EXPECT_LT(fewest, 256u);
}

}  // namespace
