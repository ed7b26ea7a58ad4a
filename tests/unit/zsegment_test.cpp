#include "writer/data/zsegment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace erofs::writer {
namespace {

class CountingEncoder final : public compress::Encoder {
 public:
  explicit CountingEncoder(uint32_t pcluster = 4096) : inner_(compress::make_encoder(compress::parse_spec("lz4hc"), pcluster)) {}
  compress::Algorithm algorithm() const override { return inner_->algorithm(); }
  compress::FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    ++calls;
    return inner_->fill(in, out);
  }
  int calls = 0;

 private:
  std::unique_ptr<compress::Encoder> inner_;
};

ZSegmentOptions last_segment(TailMode tail, uint32_t pcluster = 4096) {
  ZSegmentOptions o;
  o.last_segment = true;
  o.tail = tail;
  o.pcluster_bytes = pcluster;
  return o;
}

// Text that lz4hc compresses about 3:1.
std::vector<uint8_t> text(size_t n) {
  static const char* words[] = {"erofs ", "image ", "block ", "cluster ", "kernel ", "mount ", "read ", "\n"};
  std::vector<uint8_t> out;
  uint32_t x = 12345;
  while (out.size() < n) {
    x = x * 1103515245 + 12345;
    for (const char* c = words[(x >> 16) % 8]; *c && out.size() < n; ++c) out.push_back(uint8_t(*c));
    if ((x >> 8) % 5 == 0 && out.size() < n) out.push_back(uint8_t('0' + (x >> 20) % 10));
  }
  return out;
}

std::vector<uint8_t> noise(size_t n) {
  std::vector<uint8_t> out(n);
  uint32_t x = 777;
  for (auto& b : out) b = uint8_t((x = x * 1664525 + 1013904223) >> 24);
  return out;
}

uint64_t covered(const ZSegment& z) {
  uint64_t n = 0;
  for (auto& e : z.extents) n += e.length;
  return n;
}

TEST(ZSegment, ABlockOrLessIsStoredWithoutTryingTheEncoder) {
  for (size_t size : {1, 3000, 4096}) {
    CountingEncoder enc;
    const std::vector<uint8_t> data(size, 'a');
    ZSegment z = compress_segment(enc, data, 0, last_segment(TailMode::None));
    EXPECT_EQ(enc.calls, 0) << size;
    ASSERT_EQ(z.extents.size(), 1u);
    EXPECT_TRUE(z.extents[0].plain);
    ASSERT_EQ(z.blocks.size(), 4096u);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), z.blocks.begin()));
    EXPECT_TRUE(std::all_of(z.blocks.begin() + long(size), z.blocks.end(), [](uint8_t b) { return b == 0; }));
  }
}

TEST(ZSegment, LongerInputIsCompressed) {
  CountingEncoder enc;
  const std::vector<uint8_t> data(4097, 'a');
  ZSegment z = compress_segment(enc, data, 0, last_segment(TailMode::None));
  EXPECT_GE(enc.calls, 1);
  ASSERT_EQ(z.extents.size(), 1u);
  EXPECT_FALSE(z.extents[0].plain);
  EXPECT_EQ(z.extents[0].length, 4097u);
  EXPECT_EQ(z.blocks.front(), 0);  // zero padding before the stream
}

// ztailpacking: inline bytes are metadata the image pays for, so a last piece is compressed
// whenever that makes it smaller, even a piece of a block or less; one that does not compress stays
// as it is.
TEST(ZSegment, InlineTailsAreCompressedWhenThatMakesThemSmaller) {
  CountingEncoder enc;
  const auto small = text(3000);
  ZSegment t = compress_segment(enc, small, 0, last_segment(TailMode::Inline));
  EXPECT_EQ(enc.calls, 1);
  ASSERT_TRUE(t.has_tail);
  EXPECT_FALSE(t.tail.plain());
  EXPECT_LT(t.tail.compressed.size(), small.size());
  EXPECT_EQ(t.tail.raw, small);
  EXPECT_TRUE(t.blocks.empty());

  const auto random = noise(3000);
  ZSegment r = compress_segment(enc, random, 0, last_segment(TailMode::Inline));
  ASSERT_TRUE(r.has_tail);
  EXPECT_TRUE(r.tail.plain());
  EXPECT_EQ(r.tail.raw, random);
  EXPECT_TRUE(r.tail.compressed.empty());

  // Over a block, a tail that compresses below one block is kept compressed.
  ZSegment c = compress_segment(enc, std::vector<uint8_t>(6000, 'a'), 0, last_segment(TailMode::Inline));
  ASSERT_TRUE(c.has_tail);
  EXPECT_FALSE(c.tail.plain());
  EXPECT_EQ(c.tail.length, 6000u);
}

// ztailpacking: a last pcluster of several blocks that is not full is compressed again into one
// block fewer when the rest then compresses below a block; the file saves a block.
TEST(ZSegment, TheLastPclusterGivesUpABlockToAnInlineTail) {
  const uint32_t pcluster = 16384;
  int split = 0;
  for (size_t n : {9000, 15000, 20000, 26000, 30000}) {
    CountingEncoder enc(pcluster);
    const auto data = text(n);
    ZSegment plain = compress_segment(enc, data, 0, last_segment(TailMode::None, pcluster));
    ASSERT_EQ(plain.extents.size(), 1u) << n;
    const uint32_t blocks = plain.extents[0].nblocks;
    ZSegment z = compress_segment(enc, data, 0, last_segment(TailMode::Inline, pcluster));
    EXPECT_EQ(covered(z), n);
    if (blocks == 1) continue;  // a tail of its own already
    ASSERT_TRUE(z.has_tail) << n;
    ASSERT_EQ(z.extents.size(), 2u) << n;
    EXPECT_EQ(z.extents[0].nblocks, blocks - 1) << n;
    EXPECT_LT(z.tail.stored().size(), 4096u) << n;
    EXPECT_EQ(z.tail.lstart, z.extents[0].length) << n;
    ++split;
  }
  EXPECT_GE(split, 2);
}

// Compresses 4:1 exactly (the bytes are filler): a test chooses how far a stream spills into
// its last block.
class QuarterEncoder final : public compress::Encoder {
 public:
  compress::Algorithm algorithm() const override { return compress::Algorithm::Lz4; }
  compress::FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    ++calls;
    const size_t consumed = std::min(in.size(), out.size() * 4);
    const size_t produced = (consumed + 3) / 4;
    std::fill_n(out.begin(), produced, uint8_t(0x5a));
    return {consumed, produced};
  }
  int calls = 0;
};

// The second pass is tried while the stream spills at most 13/16 of a block into its last block.
TEST(ZSegment, ALastPclusterSpillingFarIntoItsLastBlockIsNotCompressedAgain) {
  const uint32_t pcluster = 16384, bs = 4096;
  for (uint32_t spill : {1u, bs / 2, bs / 16 * 13, bs / 16 * 13 + 1, bs - 1}) {
    QuarterEncoder enc;
    const std::vector<uint8_t> data(size_t(bs + spill) * 4, 'a');
    ZSegment z = compress_segment(enc, data, 0, last_segment(TailMode::Inline, pcluster));
    EXPECT_EQ(covered(z), data.size()) << spill;
    if (spill <= bs / 16 * 13) {
      EXPECT_EQ(enc.calls, 3) << spill;
      ASSERT_TRUE(z.has_tail) << spill;
      ASSERT_EQ(z.extents.size(), 2u) << spill;
      EXPECT_EQ(z.extents[0].nblocks, 1u) << spill;
      EXPECT_EQ(z.tail.compressed.size(), spill) << spill;
    } else {
      EXPECT_EQ(enc.calls, 1) << spill;
      EXPECT_FALSE(z.has_tail) << spill;
      ASSERT_EQ(z.extents.size(), 1u) << spill;
      EXPECT_EQ(z.extents[0].nblocks, 2u) << spill;
    }
  }
}

// fragments: everything after the file's last full pcluster goes to the packed inode as it is
// (the whole file when it fills none): below a pcluster without trying the encoder, above it
// when the encoder takes all of it into less than a pcluster.
TEST(ZSegment, FragmentsTakeWhatFollowsTheLastFullPcluster) {
  const uint32_t pcluster = 16384;
  for (size_t n : {100, 4096, 16384}) {
    CountingEncoder enc(pcluster);
    const auto data = text(n);
    ZSegment z = compress_segment(enc, data, 0, last_segment(TailMode::Fragment, pcluster));
    EXPECT_EQ(enc.calls, 0) << n;
    ASSERT_TRUE(z.has_tail) << n;
    EXPECT_EQ(z.tail.lstart, 0u);
    EXPECT_EQ(z.tail.raw, data) << n;
    EXPECT_TRUE(z.blocks.empty()) << n;
  }
  // Text three times a pcluster compresses into one pcluster: still all of it a fragment.
  CountingEncoder enc(pcluster);
  const auto three = text(3 * pcluster);
  ZSegment t = compress_segment(enc, three, 0, last_segment(TailMode::Fragment, pcluster));
  ASSERT_TRUE(t.has_tail);
  EXPECT_EQ(t.tail.raw, three);
  // Far more text fills pclusters; what follows the last full one is the fragment.
  const auto long_text = text(40 * pcluster);
  ZSegment f = compress_segment(enc, long_text, 0, last_segment(TailMode::Fragment, pcluster));
  ASSERT_TRUE(f.has_tail);
  ASSERT_GE(f.extents.size(), 2u);
  EXPECT_EQ(f.tail.lstart + f.tail.length, long_text.size());
  EXPECT_EQ(f.tail.lstart, covered(f) - f.tail.length);
  for (size_t i = 0; i + 1 < f.extents.size(); ++i) EXPECT_FALSE(f.extents[i].plain) << i;
  // Data that does not compress is stored in plain blocks until a pcluster's worth is left.
  const auto random = noise(3 * pcluster + 100);
  ZSegment r = compress_segment(enc, random, 0, last_segment(TailMode::Fragment, pcluster));
  ASSERT_TRUE(r.has_tail);
  EXPECT_LE(r.tail.length, pcluster);
  EXPECT_GT(r.tail.length, pcluster - 4096u);
  EXPECT_EQ(covered(r), random.size());
}

// A segment that does not end the file keeps no tail, whatever the mode.
TEST(ZSegment, OnlyTheLastSegmentHasATail) {
  for (TailMode mode : {TailMode::Inline, TailMode::Fragment}) {
    CountingEncoder enc;
    ZSegmentOptions o = last_segment(mode);
    o.last_segment = false;
    ZSegment z = compress_segment(enc, text(3000), 0, o);
    EXPECT_FALSE(z.has_tail);
    EXPECT_EQ(covered(z), 3000u);
  }
}

}  // namespace
}  // namespace erofs::writer
