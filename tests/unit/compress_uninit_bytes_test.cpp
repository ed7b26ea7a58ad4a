// UninitBytes: large buffers start on a page (the reader reads into them with O_DIRECT), and the
// largest are pages of their own that go back to the system when let go, whatever malloc's
// arenas hold (a fsck once peaked at twice its memory through gaps those arenas kept).
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "compress/uninit_bytes.h"

using erofs::compress::UninitBytes;

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

TEST(UninitBytes, TheLargestGoBackToTheSystemWhenLetGo) {
  // A large block freed raises glibc's mmap threshold past 1 MiB: from then on, buffers of that
  // size taken from malloc would come from its heap and stay mapped after they are let go.
  {
    std::vector<uint8_t> big(4u << 20, 1);
    volatile uint8_t sink = big[big.size() / 2];
    (void)sink;
  }
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

}  // namespace
