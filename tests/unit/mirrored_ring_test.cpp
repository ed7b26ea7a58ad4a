// util::MirroredRing: the bytes written at the ring's end are read again at its start, and a span
// that crosses the end is contiguous.
#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <numeric>
#include <vector>

#include "util/mirrored_ring.h"

namespace erofs::util {
namespace {

TEST(MirroredRing, RoundsUpToPages) {
  MirroredRing ring(5000);
  EXPECT_GE(ring.size(), 5000u);
  EXPECT_EQ(ring.size() % 4096, 0u);
  EXPECT_THROW(MirroredRing(0), std::bad_alloc);
}

TEST(MirroredRing, SpanAcrossTheEndIsContiguous) {
  MirroredRing ring(8192);
  const size_t n = ring.size();
  std::vector<uint8_t> bytes(300);
  std::iota(bytes.begin(), bytes.end(), uint8_t(1));
  // Written through the first copy in two pieces, as the windowed input writes.
  const uint64_t pos = 5 * n - 100;
  std::memcpy(ring.at(pos), bytes.data(), 100);
  std::memcpy(ring.at(pos + 100), bytes.data() + 100, 200);
  EXPECT_EQ(ring.at(pos + 100), ring.at(0));
  EXPECT_EQ(std::memcmp(ring.at(pos), bytes.data(), bytes.size()), 0);
  // Written across the end in one piece, read from the start.
  std::memset(ring.at(2 * n - 50), 0xAB, 100);
  EXPECT_EQ(ring.at(0)[49], 0xAB);
  EXPECT_EQ(ring.at(0)[50], bytes[150]);
}

}  // namespace
}  // namespace erofs::util
