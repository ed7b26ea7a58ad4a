#include "writer/data/zsegment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace erofs::writer {
namespace {

class CountingEncoder final : public compress::Encoder {
 public:
  CountingEncoder() : inner_(compress::make_encoder(compress::parse_spec("lz4hc"), 4096)) {}
  compress::Algorithm algorithm() const override { return inner_->algorithm(); }
  compress::FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    ++calls;
    return inner_->fill(in, out);
  }
  int calls = 0;

 private:
  std::unique_ptr<compress::Encoder> inner_;
};

ZSegmentOptions last_segment(bool tails) {
  ZSegmentOptions o;
  o.last_segment = true;
  o.tail_candidates = tails;
  return o;
}

TEST(ZSegment, ABlockOrLessIsStoredWithoutTryingTheEncoder) {
  for (size_t size : {1, 3000, 4096}) {
    CountingEncoder enc;
    const std::vector<uint8_t> data(size, 'a');
    ZSegment z = compress_segment(enc, data, 0, last_segment(false));
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
  ZSegment z = compress_segment(enc, data, 0, last_segment(false));
  EXPECT_GE(enc.calls, 1);
  ASSERT_EQ(z.extents.size(), 1u);
  EXPECT_FALSE(z.extents[0].plain);
  EXPECT_EQ(z.extents[0].length, 4097u);
  EXPECT_EQ(z.blocks.front(), 0);  // zero padding before the stream
}

TEST(ZSegment, ASmallTailIsKeptApartAsItIs) {
  CountingEncoder enc;
  const std::vector<uint8_t> data(3000, 'a');
  ZSegment t = compress_segment(enc, data, 0, last_segment(true));
  EXPECT_EQ(enc.calls, 0);
  ASSERT_TRUE(t.has_tail);
  EXPECT_TRUE(t.tail.plain);
  EXPECT_EQ(t.tail.raw, data);
  EXPECT_TRUE(t.blocks.empty());

  // Over a block, a tail that compresses into one block is kept compressed.
  ZSegment c = compress_segment(enc, std::vector<uint8_t>(6000, 'a'), 0, last_segment(true));
  EXPECT_EQ(enc.calls, 1);
  ASSERT_TRUE(c.has_tail);
  EXPECT_FALSE(c.tail.plain);
  EXPECT_EQ(c.tail.length, 6000u);
}

}  // namespace
}  // namespace erofs::writer
