// The compress layer: spec parsing, fixed-output fill() for every algorithm, bounded decoding.
#include <gtest/gtest.h>
#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/internal.h"
#include "compress/prefix_search.h"
#include "compress/zstd_sequences.h"

namespace erofs::compress {
namespace {

using Bytes = std::vector<uint8_t>;

// Word soup with a skewed vocabulary: compresses about 3x with zlib and 2x with lz4, like source
// text, without reading files whose content differs between machines.
Bytes make_text(size_t n, uint32_t seed) {
  constexpr size_t kWords = 300;
  std::mt19937 rng(seed);
  std::vector<std::string> words(kWords);
  for (auto& w : words) {
    const size_t len = 2 + rng() % 9;
    for (size_t i = 0; i < len; ++i) w.push_back(char('a' + rng() % 26));
  }
  Bytes out;
  out.reserve(n + 16);
  while (out.size() < n) {
    size_t i = rng() % kWords;
    for (int k = 0; k < 2; ++k) i = i * (rng() % kWords) / kWords;  // favours small indexes
    out.insert(out.end(), words[i].begin(), words[i].end());
    const uint32_t r = rng() % 20;
    out.push_back(r == 0 ? '\n' : r == 1 ? ',' : ' ');
  }
  out.resize(n);
  return out;
}

Bytes make_random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = uint8_t(rng());
  return out;
}

// Runs of text, noise, zeros and short repeats, so the ratio changes every few KiB.
Bytes make_mixed(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out;
  while (out.size() < n) {
    const size_t len = 512 + rng() % 8192;
    Bytes part;
    switch (rng() % 4) {
      case 0: part = make_text(len, rng()); break;
      case 1: part = make_random(len, rng()); break;
      case 2: part.assign(len, 0); break;
      default:
        for (size_t i = 0; i < len; ++i) part.push_back(uint8_t("erofs!"[i % 6] + (i / 600)));
    }
    out.insert(out.end(), part.begin(), part.end());
  }
  out.resize(n);
  return out;
}

struct Case {
  const char* spec;
  uint32_t pcluster;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string s = info.param.spec;
  std::replace(s.begin(), s.end(), ',', '_');
  return s + "_" + std::to_string(info.param.pcluster);
}

class FillTest : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    spec_ = parse_spec(GetParam().spec);
    pcluster_ = GetParam().pcluster;
    enc_ = make_encoder(spec_, pcluster_);
    decoder_ = std::make_unique<Decoder>(config());
  }

  DecoderConfig config() const {
    DecoderConfig c;
    if (enc_->lzma_dict_size()) c.lzma_dict_size = enc_->lzma_dict_size();
    c.deflate_window_bits = enc_->deflate_window_bits();
    c.zstd_window_log = enc_->zstd_window_log();
    return c;
  }

  // One fill of `in`, checked: the stream fits, does not start with zero, and decodes exactly
  // (and its prefixes partially) back to the consumed input.
  FillResult fill_and_check(std::span<const uint8_t> in, Bytes& out) {
    out.assign(pcluster_, 0xEE);
    const FillResult r = enc_->fill(in, out);
    EXPECT_GT(r.consumed, 0u);
    EXPECT_LE(r.consumed, std::min(in.size(), kMaxDecodedBytes));
    EXPECT_GT(r.produced, 0u);
    EXPECT_LE(r.produced, out.size());
    if (r.consumed == 0 || r.produced == 0) return r;
    EXPECT_NE(out[0], 0) << "the stream would be taken for zero padding";
    const std::span<const uint8_t> stream(out.data(), r.produced);

    Bytes back(r.consumed);
    decoder_->decode(spec_.algorithm, stream, back, false);
    EXPECT_TRUE(std::equal(back.begin(), back.end(), in.begin())) << "round trip differs";

    // Images without 0PADDING keep the stream at the start of the pcluster, zeros after it, and
    // decode partially from the whole pcluster.
    Bytes padded(out.begin(), out.end());
    std::fill(padded.begin() + r.produced, padded.end(), 0);
    for (size_t n : {size_t(1), size_t(100), r.consumed / 2, r.consumed - 1, r.consumed}) {
      if (n == 0 || n > r.consumed) continue;
      Bytes prefix(n);
      decoder_->decode(spec_.algorithm, stream, prefix, true);
      EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), in.begin())) << "partial decode of " << n << " bytes";
      std::fill(prefix.begin(), prefix.end(), 0xEE);
      decoder_->decode(spec_.algorithm, padded, prefix, true);
      EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), in.begin())) << "padded partial decode of " << n;
    }
    return r;
  }

  // Every codec fills to within a few bytes of the end: lz4, lzma and deflate natively, up to the
  // last symbol that fits; zstd by compressing candidate prefixes whole (compress/prefix_search.h).
  double min_fill() const { return 0.97; }

  Spec spec_;
  uint32_t pcluster_ = 0;
  std::unique_ptr<Encoder> enc_;
  std::unique_ptr<Decoder> decoder_;
};

TEST_P(FillTest, TextFillsThePcluster) {
  const Bytes text = make_text(size_t(pcluster_) * 10, 1);
  Bytes out;
  const FillResult r = fill_and_check(text, out);
  EXPECT_LT(r.consumed, text.size());
  EXPECT_GE(double(r.produced), min_fill() * pcluster_) << r.produced << " of " << pcluster_;
  EXPECT_GT(double(r.consumed), 1.5 * double(r.produced)) << "text should compress";
}

TEST_P(FillTest, ConsecutiveFillsOverText) {
  // The writer's pattern: fill after fill along a file. Later fills use the earlier ratios.
  const size_t fills = pcluster_ >= (1u << 20) ? 2 : 6;
  const Bytes text = make_text(size_t(pcluster_) * 5 * fills, 2);
  Bytes out;
  size_t pos = 0, produced = 0, n = 0;
  for (; n < fills && pos < text.size(); ++n) {
    const FillResult r = fill_and_check(std::span(text).subspan(pos), out);
    if (r.consumed == 0) break;
    pos += r.consumed;
    produced += r.produced;
    EXPECT_GE(double(r.produced), min_fill() * pcluster_);
  }
  EXPECT_GE(double(produced) / double(n * pcluster_), 0.95) << "average fill";
}

TEST_P(FillTest, RandomDataIsStoredNearlyAsIs) {
  const Bytes noise = make_random(size_t(pcluster_) * 3, 3);
  Bytes out;
  const FillResult r = fill_and_check(noise, out);
  // Incompressible input still fills the pcluster, with a little framing overhead.
  EXPECT_GE(double(r.consumed), 0.9 * pcluster_);
  EXPECT_LE(r.consumed, size_t(pcluster_));
  EXPECT_GE(double(r.produced), 0.9 * pcluster_);
}

TEST_P(FillTest, ZerosStopAtTheExtentLimit) {
  const Bytes zeros(kMaxDecodedBytes + 4096, 0);
  Bytes out;
  const FillResult r = fill_and_check(zeros, out);
  EXPECT_LE(r.consumed, kMaxDecodedBytes);
  EXPECT_GE(r.consumed, std::min(size_t(pcluster_) * 16, kMaxDecodedBytes));
}

TEST_P(FillTest, MixedData) {
  const Bytes mixed = make_mixed(size_t(pcluster_) * 12, 4);
  Bytes out;
  size_t pos = 0;
  const int fills = pcluster_ >= (1u << 20) ? 2 : 4;
  for (int i = 0; i < fills && pos < mixed.size(); ++i) {
    const FillResult r = fill_and_check(std::span(mixed).subspan(pos), out);
    if (r.consumed == 0) break;
    pos += r.consumed;
  }
}

TEST_P(FillTest, ShortInputIsTakenWhole) {
  for (size_t n : {1, 2, 7, 100, 1000}) {
    const Bytes text = make_text(n, 5);
    Bytes out;
    const FillResult r = fill_and_check(text, out);
    EXPECT_EQ(r.consumed, n);
  }
  Bytes out(pcluster_);
  const FillResult r = enc_->fill({}, out);
  EXPECT_EQ(r.consumed, 0u);
  EXPECT_EQ(r.produced, 0u);
}

TEST_P(FillTest, TinyOutputIsValidOrEmpty) {
  const Bytes text = make_text(4096, 6);
  const Bytes noise = make_random(4096, 7);
  for (const Bytes* in : {&text, &noise}) {
    for (size_t room : {0, 1, 2, 5, 6, 9, 16, 17, 40, 100}) {
      Bytes out(room);
      const FillResult r = enc_->fill(*in, out);
      ASSERT_LE(r.produced, room);
      if (r.consumed == 0) {
        EXPECT_EQ(r.produced, 0u);
        continue;
      }
      ASSERT_GT(r.produced, 0u);
      EXPECT_NE(out[0], 0);
      Bytes back(r.consumed);
      decoder_->decode(spec_.algorithm, {out.data(), r.produced}, back, false);
      EXPECT_TRUE(std::equal(back.begin(), back.end(), in->begin())) << "room " << room;
    }
  }
}

TEST_P(FillTest, WrongSizesAndDamageAreRejected) {
  const Bytes text = make_text(size_t(pcluster_) * 4, 8);
  Bytes out;
  const FillResult r = fill_and_check(text, out);
  ASSERT_GT(r.consumed, 2u);
  const std::span<const uint8_t> stream(out.data(), r.produced);
  const Algorithm alg = spec_.algorithm;

  Bytes more(r.consumed + 1), fewer(r.consumed - 1);
  EXPECT_THROW(decoder_->decode(alg, stream, more, false), DecodeError);
  EXPECT_THROW(decoder_->decode(alg, stream, more, true), DecodeError) << "the stream holds less";
  EXPECT_THROW(decoder_->decode(alg, stream, fewer, false), DecodeError);

  // A cut-off stream cannot produce the whole extent.
  Bytes back(r.consumed);
  for (size_t keep : {r.produced - 1, r.produced / 2, size_t(1)}) {
    if (keep == 0 || keep >= r.produced) continue;
    EXPECT_THROW(decoder_->decode(alg, stream.first(keep), back, false), DecodeError) << "kept " << keep;
  }

  // Flipped bytes: either caught or decoded to some bytes of the right length, never a crash.
  std::mt19937 rng(9);
  const int rounds = pcluster_ >= (1u << 20) ? 10 : pcluster_ >= 65536 ? 50 : 200;
  for (int i = 0; i < rounds; ++i) {
    Bytes bad(stream.begin(), stream.end());
    for (int k = 0; k < 1 + i % 4; ++k) bad[rng() % bad.size()] ^= uint8_t(1u << (rng() % 8));
    for (bool partial : {false, true}) {
      try {
        decoder_->decode(alg, bad, back, partial);
      } catch (const DecodeError&) {
      }
    }
  }
}

const Case kCases[] = {
    {"lz4", 4096},       {"lz4", 16384},       {"lz4", 65536},       {"lz4", 1u << 20},
    {"lz4hc", 4096},     {"lz4hc,12", 16384},  {"lz4hc", 65536},     {"lz4hc,3", 1u << 20},
    {"lzma", 4096},      {"lzma,9", 16384},    {"lzma,0", 65536},    {"lzma,1", 1u << 20},
    {"deflate", 4096},   {"deflate,1", 16384}, {"deflate,9", 65536}, {"deflate", 1u << 20},
    {"zstd", 4096},      {"zstd,19", 16384},   {"zstd,1", 65536},    {"zstd", 1u << 20},
};
INSTANTIATE_TEST_SUITE_P(All, FillTest, testing::ValuesIn(kCases), case_name);

// --- decoding hostile input -------------------------------------------------------------------

// The prefix search over a stream whose size is far from linear in its input: a tenth of a
// byte per input byte up to 40,000 bytes, then four. The slope measured below the bend points
// past a candidate too long even for the wider trial room, whose size is then unknown; stepping
// down from it a byte a try ran out of tries with the pcluster 30% full.
TEST(PrefixSearch, BentSizeCurveStillFillsThePcluster) {
  const size_t room = 4096, bend = 40000;
  auto size_of = [&](size_t n) { return n < bend ? n / 10 : bend / 10 + (n - bend) * 4; };
  // The longest prefix that fits is bend + 24 (4096 bytes). zstd's precision fills it to the byte
  // or stops within a 4096th of the input (9 bytes).
  {
    detail::PrefixSearch search({1, SIZE_MAX, 4096});
    const size_t least = bend + 15;
    Bytes out(room);
    int calls = 0;
    const FillResult r = search.fill(1 << 20, out, [&](size_t n, std::span<uint8_t> dst) -> size_t {
      ++calls;
      const size_t c = size_of(n);
      return c <= dst.size() ? c : 0;
    });
    EXPECT_GE(r.consumed, least) << "produced " << r.produced << " in " << calls << " compressions";
    EXPECT_LE(r.produced, room);
    EXPECT_EQ(r.produced, size_of(r.consumed));
    EXPECT_LE(calls, 24);
  }
}

TEST(Decode, GarbageNeverCrashes) {
  Decoder d;
  std::mt19937 rng(10);
  Bytes out(65536);
  for (Algorithm alg : {Algorithm::Lz4, Algorithm::Lzma, Algorithm::Deflate, Algorithm::Zstd}) {
    for (int i = 0; i < 300; ++i) {
      Bytes in = make_random(1 + rng() % 3000, rng());
      if (in[0] == 0) in[0] = 1;
      if (alg == Algorithm::Zstd && i % 2) std::memcpy(in.data(), "\x28\xB5\x2F\xFD", std::min<size_t>(4, in.size()));
      const size_t n = 1 + rng() % out.size();
      for (bool partial : {false, true}) {
        try {
          d.decode(alg, in, std::span(out).first(n), partial);
        } catch (const DecodeError&) {
        }
      }
    }
  }
}

TEST(Decode, SizeLimitsAreCheckedFirst) {
  Decoder d;
  Bytes in(16, 0xA2), big_out(kMaxDecodedBytes + 1), out(16);
  Bytes big_in(kMaxPclusterBytes + 1, 0x5A);
  for (Algorithm alg : {Algorithm::Lz4, Algorithm::Lzma, Algorithm::Deflate, Algorithm::Zstd}) {
    EXPECT_THROW(d.decode(alg, in, big_out, false), DecodeError);
    EXPECT_THROW(d.decode(alg, in, big_out, true), DecodeError);
    EXPECT_THROW(d.decode(alg, big_in, out, false), DecodeError);
    EXPECT_THROW(d.decode(alg, {}, out, false), DecodeError);
  }
  EXPECT_THROW(d.decode(Algorithm(7), in, out, false), DecodeError);
}

TEST(Decode, HugeDeclaredSizesAreRejected) {
  Decoder d;
  Bytes out(4096);
  // A zstd frame header claiming 2^40 bytes of content in a 1 MiB single-segment window.
  Bytes zstd = {0x28, 0xB5, 0x2F, 0xFD, 0xE0, 0, 0, 0, 0, 0, 1, 0, 0, 0x01, 0, 0};
  EXPECT_THROW(d.decode(Algorithm::Zstd, zstd, out, false), DecodeError);
  EXPECT_THROW(d.decode(Algorithm::Zstd, zstd, out, true), DecodeError);
  // A non-single-segment frame asking for a 2 GiB window.
  Bytes wide = {0x28, 0xB5, 0x2F, 0xFD, 0x00, 0xA8, 0x01, 0, 0};
  EXPECT_THROW(d.decode(Algorithm::Zstd, wide, out, false), DecodeError);
  EXPECT_THROW(d.decode(Algorithm::Zstd, wide, out, true), DecodeError);
  // LZ4: a literal run longer than the whole block.
  Bytes lz4 = {0xF0, 0xFF, 0xFF, 0xFF, 0x10, 'a', 'b'};
  EXPECT_THROW(d.decode(Algorithm::Lz4, lz4, out, false), DecodeError);
  EXPECT_THROW(d.decode(Algorithm::Lz4, lz4, out, true), DecodeError);
  // LZ4: a match at offset 0 copies bytes never written; liblz4 lets it through.
  const std::string tail = "bcdefghijklmn";
  Bytes zero_offset = {0x10, 'a', 0x00, 0x00, 0xD0};
  zero_offset.insert(zero_offset.end(), tail.begin(), tail.end());
  Bytes small(8, 0xAA);
  EXPECT_THROW(d.decode(Algorithm::Lz4, zero_offset, small, true), DecodeError);
  EXPECT_THROW(d.decode(Algorithm::Lz4, zero_offset, small, false), DecodeError);
  // The same stream with offset 1 is fine: "a" repeated, then the literals.
  Bytes offset_one = zero_offset;
  offset_one[2] = 0x01;
  Bytes got(18);
  d.decode(Algorithm::Lz4, offset_one, got, false);
  EXPECT_EQ(std::string(got.begin(), got.end()), "aaaaa" + tail);
}

TEST(Decode, UncheckedLz4OffsetZeroReadsZeros) {
  // The stream of SizeLimits...: "a", a 4-byte match at offset 0, 13 literals.
  const std::string tail = "bcdefghijklmn";
  Bytes zero_offset = {0x10, 'a', 0x00, 0x00, 0xD0};
  zero_offset.insert(zero_offset.end(), tail.begin(), tail.end());
  Decoder d({.check_lz4_offsets = false});
  Bytes first(18, 0), second(18, 0x55);
  d.decode(Algorithm::Lz4, zero_offset, first, false, Decoder::Unchecked::Zero);
  d.decode(Algorithm::Lz4, zero_offset, second, false, Decoder::Unchecked::Zero);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first[0], 'a');
  EXPECT_EQ(std::string(first.begin() + 5, first.end()), tail);
  // Walked instead of zeroed first, the same bytes: the decoder finds the match and zeroes.
  Bytes dirty(18, 0xAA);
  d.decode(Algorithm::Lz4, zero_offset, dirty, false, Decoder::Unchecked::Walk);
  EXPECT_EQ(dirty, first);
  // Zeroed: the caller's memory is zero already (reader::BufferPool::take_zeroed), the same bytes.
  Bytes zeroed(18, 0);
  d.decode(Algorithm::Lz4, zero_offset, zeroed, false, Decoder::Unchecked::Zeroed);
  EXPECT_EQ(zeroed, first);
  // With the check (the default) the same stream is refused.
  Bytes out(18, 0);
  EXPECT_THROW(Decoder().decode(Algorithm::Lz4, zero_offset, out, false), DecodeError);
}

// Unchecked LZ4 with offset-0 matches gives the same bytes whatever the buffer held, decoded whole
// (where liblz4 writes zeros for such matches itself, nothing is zeroed: lz4_zeroes_offset_zero_matches)
// or partly (always zeroed: liblz4's partial decode copies such a match onto itself near its end).
TEST(Decode, UncheckedLz4OffsetZeroIsTheSameWhateverTheBufferHeld) {
  // 8 literals, a 40-byte match at offset 0 (liblz4's fast loop: 64 bytes or more left), 100 literals.
  Bytes whole = {0x8F, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 0x00, 0x00, 21, 0xF0, 85};
  for (int i = 0; i < 100; ++i) whole.push_back(uint8_t('A' + i % 26));
  // 2 literals, a 20-byte match at offset 0, 8 literals: decoded partly, the output ends in the match.
  const Bytes part = {0x2F, 'a', 'b', 0x00, 0x00, 1, 0x80, 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'};
  Decoder d({.check_lz4_offsets = false});
  for (const auto unchecked : {Decoder::Unchecked::Zero, Decoder::Unchecked::Walk}) {
    Bytes a(148, 0xAA), b(148, 0x55);
    d.decode(Algorithm::Lz4, whole, a, false, unchecked);
    d.decode(Algorithm::Lz4, whole, b, false, unchecked);
    EXPECT_EQ(a, b);
    EXPECT_TRUE(std::all_of(a.begin() + 8, a.begin() + 48, [](uint8_t x) { return x == 0; }));
    Bytes c(12, 0xAA), e(12, 0x55);
    d.decode(Algorithm::Lz4, part, c, true, unchecked);
    d.decode(Algorithm::Lz4, part, e, true, unchecked);
    EXPECT_EQ(c, e);
    EXPECT_EQ(c, Bytes({'a', 'b', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  }
  // Where the probe holds, the library itself writes those zeros: nothing is zeroed beforehand.
  if (lz4_zeroes_offset_zero_matches()) {
    Bytes dirty(148, 0xAA);
    d.decode(Algorithm::Lz4, whole, dirty, false, Decoder::Unchecked::Zeroed);
    EXPECT_TRUE(std::all_of(dirty.begin() + 8, dirty.begin() + 48, [](uint8_t x) { return x == 0; }));
  }
}

// The walk behind Decoder::verify at the edges random damage seldom reaches: a match's length
// bytes that leave too little for the last literals, and a literal length that runs off the end.
TEST(Decode, Lz4WalkAtTheStreamsEnd) {
  struct Case {
    Bytes stream;
    size_t out_size;
    bool sound;
  };
  const std::vector<Case> cases = {
      // 4 literals, a match of 15 + 255 + 0 + 4 bytes at offset 4, then 5 literals.
      {{0x4F, 'a', 'b', 'c', 'd', 4, 0, 255, 0, 0x50, 'v', 'w', 'x', 'y', 'z'}, 283, true},
      // The same with 4 or 3 literals at the end: the stream ends inside the last 5 bytes.
      {{0x4F, 'a', 'b', 'c', 'd', 4, 0, 255, 0, 0x40, 'w', 'x', 'y', 'z'}, 282, false},
      {{0x4F, 'a', 'b', 'c', 'd', 4, 0, 255, 0, 0x30, 'x', 'y', 'z'}, 281, false},
      // Literal length bytes that never end.
      {{0xF0, 255, 255}, 600, false},
      {{0xF0, 255}, 300, false},
  };
  for (const Case& c : cases) {
    Bytes out(c.out_size);
    EXPECT_EQ(detail::lz4_decode_strict(c.stream, out) == long(c.out_size), c.sound);
    EXPECT_EQ(detail::lz4_walk_strict(c.stream, c.out_size), c.sound);
    const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(c.stream.data()), reinterpret_cast<char*>(out.data()),
                                      int(c.stream.size()), int(c.out_size));
    if (c.sound) {
      EXPECT_EQ(r, int(c.out_size));
    }
  }
}

// Checked LZ4 decoding starts with our own decoder (compress/lz4_strict.cpp): the decoder as a
// whole must still accept exactly what liblz4 accepts less the streams with a match at offset 0,
// give the same bytes, and name each problem as before. Streams of every kind of content, then
// damaged at random, each at several output sizes.
TEST(Decode, CheckedLz4MatchesLiblz4) {
  std::mt19937 rng(7);
  std::vector<Bytes> inputs = {make_text(70000, 1), Bytes(20000, 0), Bytes(100, 'x')};
  Bytes noise(5000);
  for (auto& b : noise) b = uint8_t(rng());
  inputs.push_back(noise);
  Bytes periodic(30000);
  for (size_t i = 0; i < periodic.size(); ++i) periodic[i] = uint8_t("abcdefghijk"[i % (1 + i / 3000 % 11)]);
  inputs.push_back(periodic);
  Bytes mixed = make_text(20000, 2);
  mixed.insert(mixed.end(), noise.begin(), noise.end());
  mixed.insert(mixed.end(), 3000, 0);
  inputs.push_back(mixed);
  for (size_t n = 1; n < 40; ++n) {
    Bytes short_text = make_text(n, uint32_t(n));
    short_text.resize(n);
    inputs.push_back(short_text);
  }

  std::vector<Bytes> streams;
  for (const Bytes& in : inputs) {
    Bytes c(size_t(LZ4_compressBound(int(in.size()))));
    const int n = LZ4_compress_default(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(c.data()),
                                       int(in.size()), int(c.size()));
    ASSERT_GT(n, 0);
    streams.emplace_back(c.begin(), c.begin() + n);
    Bytes h(c.size());
    const int m = LZ4_compress_HC(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(h.data()),
                                  int(in.size()), int(h.size()), 12);
    ASSERT_GT(m, 0);
    streams.emplace_back(h.begin(), h.begin() + m);
  }
  Decoder d;
  size_t accepted = 0, zero_offsets = 0;
  auto compare = [&](const Bytes& stream, size_t out_size) {
    if (stream.empty() || out_size == 0) return;
    Bytes want(out_size + 64, 0), got(out_size, 0x5A);
    const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(stream.data()), reinterpret_cast<char*>(want.data()),
                                      int(stream.size()), int(out_size));
    const bool zero = detail::lz4_zero_offset_match(stream, out_size);
    // The walk behind verify() agrees with the one-pass decoder it mirrors, and verify() with
    // decode() (below): the same verdict, the same words.
    Bytes strict(out_size), scratch(out_size);
    ASSERT_EQ(detail::lz4_walk_strict(stream, out_size), detail::lz4_decode_strict(stream, strict) == long(out_size));
    std::string verified;
    try {
      d.verify(Algorithm::Lz4, stream, scratch, false);
    } catch (const DecodeError& e) {
      verified = e.what();
    }
    try {
      d.decode(Algorithm::Lz4, stream, got, false);
      ASSERT_EQ(verified, "");
      ASSERT_FALSE(zero);
      ASSERT_EQ(r, int(out_size));
      ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin()));
      ++accepted;
    } catch (const DecodeError& e) {
      // Named as the walk and liblz4 named it before.
      const std::string what = e.what();
      ASSERT_EQ(verified, what);
      if (zero) {
        ASSERT_EQ(what, "lz4: corrupt stream (match offset 0)");
      } else if (r >= 0) {
        ASSERT_EQ(what, fmt::format("lz4: decoded {} bytes, expected {}", r, out_size));
      } else {
        ASSERT_EQ(what, fmt::format("lz4: corrupt stream or more than {} bytes of output", out_size));
      }
      zero_offsets += zero;
    }
  };
  for (size_t s = 0; s < streams.size(); ++s) {
    const Bytes& stream = streams[s];
    const size_t size = inputs[s / 2].size();
    // Whatever an encoder writes takes the one-pass way.
    Bytes whole(size);
    EXPECT_EQ(detail::lz4_decode_strict(stream, whole), long(size));
    for (size_t out_size : {size, size - 1, size + 1, size + 17, size / 2}) compare(stream, out_size);
    for (int round = 0; round < 300; ++round) {
      Bytes bad = stream;
      switch (rng() % 4) {
        case 0: bad[rng() % bad.size()] = uint8_t(rng()); break;
        case 1: bad[rng() % bad.size()] ^= uint8_t(1 << (rng() % 8)); break;
        case 2: bad.resize(rng() % bad.size()); break;
        case 3: bad.insert(bad.begin() + ptrdiff_t(rng() % bad.size()), uint8_t(rng())); break;
      }
      // Offsets of 0 and near-overlaps on purpose: a 16-bit field cleared or made small.
      if (rng() % 4 == 0 && bad.size() > 2) {
        const size_t at = rng() % (bad.size() - 1);
        bad[at] = uint8_t(rng() % 9);
        bad[at + 1] = 0;
      }
      compare(bad, size);
      compare(bad, size_t(rng() % (size + 40)));
    }
  }
  EXPECT_GT(accepted, streams.size());
  EXPECT_GT(zero_offsets, 10u);
}

TEST(Decode, BadImageConfigurationIsADecodeError) {
  Bytes in(16, 0xA2), out(16);
  EXPECT_THROW(Decoder({.lzma_dict_size = 64u << 20}).decode(Algorithm::Lzma, in, out, false), DecodeError);
  EXPECT_THROW(Decoder({.deflate_window_bits = 16}).decode(Algorithm::Deflate, in, out, false), DecodeError);
  EXPECT_THROW(Decoder({.zstd_window_log = 11}).decode(Algorithm::Zstd, in, out, false), DecodeError);
}

TEST(Decode, ZstdFrameWiderThanTheImageWindowIsRejected) {
  // Repetitive enough that a 64 KiB pcluster takes far more input than the encoder's window.
  Bytes text(2u << 20);
  for (size_t i = 0; i < text.size(); ++i) text[i] = uint8_t("a window-wide pattern "[i % 22]);
  auto enc = make_encoder(parse_spec("zstd"), 65536);
  Bytes out(65536);
  const FillResult r = enc->fill(text, out);
  ASSERT_GT(r.consumed, size_t(1) << (enc->zstd_window_log() + 10));
  Bytes back(r.consumed);
  Decoder narrow({.zstd_window_log = uint8_t(enc->zstd_window_log() - 1)});
  EXPECT_THROW(narrow.decode(Algorithm::Zstd, {out.data(), r.produced}, back, false), DecodeError);
  EXPECT_THROW(narrow.decode(Algorithm::Zstd, {out.data(), r.produced}, back, true), DecodeError);
  Decoder wide({.zstd_window_log = enc->zstd_window_log()});
  wide.decode(Algorithm::Zstd, {out.data(), r.produced}, back, false);
}

// Prefix decodes (partial) of zstd go block by block into the output, the blocks that no longer
// fit whole through a spill buffer: every prefix of a multi-block frame is right, whatever the
// block boundaries. And what a prefix decode makes of a frame does not depend on the frames the
// decoder saw before: libzstd's streaming decoder enforced a frame's declared content size only
// when its buffer, grown by earlier frames, was no larger (the input of
// fuzz/regressions/fuzz_decompress/zstd-partial-content-size-lie).
TEST(Decode, ZstdPrefixesAcrossBlocksAndWithoutHistory) {
  const Bytes text = make_text(600000, 5);
  Bytes frame(ZSTD_compressBound(text.size()));
  frame.resize(ZSTD_compress(frame.data(), frame.size(), text.data(), text.size(), 3));
  ASSERT_FALSE(ZSTD_isError(frame.size()));
  Decoder d;
  for (size_t n : {size_t(1), size_t(4096), size_t(100000), size_t(131071), size_t(131072), size_t(131073),
                   size_t(200000), size_t(262144), size_t(500000), size_t(600000)}) {
    Bytes out(n, 0xEE);
    d.decode(Algorithm::Zstd, frame, out, true);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), text.begin())) << n << " bytes";
  }
  Bytes beyond(text.size() + 1);
  EXPECT_THROW(d.decode(Algorithm::Zstd, frame, beyond, true), DecodeError);

  const Bytes earlier = {0x28, 0xb5, 0x2f, 0xfd, 0x40, 0x28, 0xb8, 0x10, 0x0a, 0x4c, 0x00, 0x00,
                         0x00, 0x00, 0x01, 0x00, 0x2b, 0x2a, 0xc0, 0x02, 0x43, 0x54, 0x00, 0x30};
  Bytes lying = {0x28, 0xb5, 0x2f, 0xfd, 0x40, 0x28, 0xb8, 0x00, 0x0a, 0x4c, 0x00, 0x00, 0x00, 0x00, 0x00,
                 0x00, 0x00, 0x00};
  lying.insert(lying.end(), 11, 0xc8);
  for (uint8_t b : {0x02, 0x00, 0x00, 0x00, 0x00, 0x00}) lying.push_back(b);
  auto outcome = [&](Decoder& dec) -> std::string {
    Bytes out(184);
    try {
      dec.decode(Algorithm::Zstd, lying, out, true);
      return std::string(out.begin(), out.end());
    } catch (const DecodeError& e) {
      return std::string("error: ") + e.what();
    }
  };
  Decoder fresh, reused;
  Bytes scratch(35768);
  try {
    reused.decode(Algorithm::Zstd, earlier, scratch, true);
  } catch (const DecodeError&) {
  }
  EXPECT_EQ(outcome(reused), outcome(fresh));
}

// --- per-algorithm stream details --------------------------------------------------------------

TEST(Deflate, LeadingStoredBlockGetsBit3AndStillDecodes) {
  // Noise is stored, in blocks of at most 65535 bytes: the first of several is not final, so its
  // header byte would be 0x00.
  auto enc = make_encoder(parse_spec("deflate"), 131072);
  const Bytes noise = make_random(200000, 12);
  Bytes out(131072);
  const FillResult r = enc->fill(noise, out);
  ASSERT_GT(r.consumed, 0u);
  EXPECT_EQ(out[0], 0x08);
  Decoder d;
  Bytes back(r.consumed);
  d.decode(Algorithm::Deflate, {out.data(), r.produced}, back, false);  // libdeflate
  EXPECT_TRUE(std::equal(back.begin(), back.end(), noise.begin()));
  Bytes prefix(r.consumed / 2);
  d.decode(Algorithm::Deflate, {out.data(), r.produced}, prefix, true);  // zlib
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), noise.begin()));
}

TEST(Deflate, HandMadeStreamWithPaddingBitSet) {
  // Non-final stored block "abc" whose header byte has bit 3 set, then a final stored block "de".
  const Bytes stream = {0x08, 3, 0, 0xFC, 0xFF, 'a', 'b', 'c', 0x01, 2, 0, 0xFD, 0xFF, 'd', 'e'};
  Decoder d;
  Bytes out(5);
  d.decode(Algorithm::Deflate, stream, out, false);
  EXPECT_EQ(std::string(out.begin(), out.end()), "abcde");
  Bytes prefix(4);
  d.decode(Algorithm::Deflate, stream, prefix, true);
  EXPECT_EQ(std::string(prefix.begin(), prefix.end()), "abcd");
}

TEST(Zstd, OneFrameWithContentSizeAndNoChecksum) {
  auto enc = make_encoder(parse_spec("zstd"), 16384);
  EXPECT_EQ(enc->zstd_window_log(), 8);  // sixteen times the pcluster (stored minus 10)
  for (size_t n : {size_t(100), size_t(300), size_t(70000), size_t(200000)}) {
    const Bytes text = make_text(n, 13);
    Bytes out(16384);
    const FillResult r = enc->fill(text, out);
    ASSERT_GT(r.consumed, 0u);
    EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), r.produced), r.consumed);
    EXPECT_EQ(ZSTD_findFrameCompressedSize(out.data(), r.produced), r.produced);
    EXPECT_EQ(out[4] & 0x04, 0) << "no checksum";
    // A single-segment frame's window is its content size: it must stay within the image's.
    const uint64_t declared = (out[4] & 0x20) ? r.consumed : uint64_t(1) << (10 + (out[5] >> 3));
    EXPECT_LE(declared, uint64_t(1) << (10 + enc->zstd_window_log())) << n;
  }
}

// zstd prefixes from one match search (compress/zstd_sequences.h): every cut, in literals, inside
// a match, at and past block boundaries and after the search's end, decodes to exactly its
// prefix, and costs about what compressing the prefix whole does (at most 1% more). The window of 2 blocks and 3
// bytes ends in a block too small for libzstd 1.5.4 to give it sequences.
TEST(Zstd, PrefixesOfOneSearchDecodeToThePrefixAtAboutTheSizeOfAWholeCompression) {
  constexpr int kLevel = 3;
  Bytes periodic(300000);
  for (size_t i = 0; i < periodic.size(); ++i) periodic[i] = uint8_t("a period of 23 letters."[i % 23]);
  const std::pair<const char*, Bytes> inputs[] = {
      {"text", make_text(2 * 131072 + 3, 21)}, {"mixed", make_mixed(400000, 22)}, {"periodic", periodic}};
  for (const auto& [name, in] : inputs) {
    auto make = [] {
      ZSTD_CCtx* c = ZSTD_createCCtx();
      ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, kLevel);
      ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 20);
      return std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)>(c, ZSTD_freeCCtx);
    };
    auto search = make(), coder = make(), whole = make();
    detail::ZstdSequences seqs(search.get(), coder.get(), kLevel);
    Bytes frame(ZSTD_compressBound(in.size())), back;
    for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(4), size_t(50), size_t(1000), size_t(4097),
                     size_t(50001), size_t(131071), size_t(131072), size_t(131075), size_t(262144),
                     size_t(262146), in.size() - 1, in.size()}) {
      if (n > in.size()) continue;
      // The whole window searched with the parameters for the prefix, as a fill does.
      ASSERT_TRUE(seqs.search(in, in.size(), n)) << name;
      ASSERT_EQ(seqs.window(), in.size());
      const size_t got = seqs.compress(n, frame);
      ASSERT_GT(got, 0u) << name << " " << n;
      ASSERT_NE(got, SIZE_MAX) << name << " " << n;
      back.assign(n + 1, 0xEE);
      ASSERT_EQ(ZSTD_decompress(back.data(), back.size(), frame.data(), got), n) << name << " " << n;
      EXPECT_TRUE(std::equal(in.begin(), in.begin() + ptrdiff_t(n), back.begin())) << name << " " << n;
      Bytes ref(ZSTD_compressBound(n));
      const size_t ref_size = ZSTD_compress2(whole.get(), ref.data(), ref.size(), in.data(), n);
      EXPECT_LE(got, ref_size + ref_size / 100 + 16) << name << " " << n;
    }
    EXPECT_EQ(seqs.compress(in.size(), std::span(frame).first(8)), 0u) << "does not fit: " << name;
  }
}

TEST(Lzma, FirstByteIsTheInvertedPropertiesByte) {
  auto enc = make_encoder(parse_spec("lzma"), 4096);
  const Bytes text = make_text(20000, 14);
  Bytes out(4096);
  ASSERT_GT(enc->fill(text, out).consumed, 0u);
  EXPECT_EQ(out[0], 0xA2);  // ~0x5D: lc=3, lp=0, pb=2
}

TEST(Encoder, ConfigurationRecords) {
  // lzma: four times the largest pcluster up to 64 KiB pclusters, eight above (the input a
  // pcluster of text holds), within 32 KiB..4 MiB unless asked for (the format allows 8 MiB).
  EXPECT_EQ(make_encoder(parse_spec("lzma"), 4096)->lzma_dict_size(), 32u << 10);
  EXPECT_EQ(make_encoder(parse_spec("lzma"), 16384)->lzma_dict_size(), 64u << 10);
  EXPECT_EQ(make_encoder(parse_spec("lzma"), 65536)->lzma_dict_size(), 256u << 10);
  EXPECT_EQ(make_encoder(parse_spec("lzma"), 131072)->lzma_dict_size(), 1u << 20);
  EXPECT_EQ(make_encoder(parse_spec("lzma"), 512u << 10)->lzma_dict_size(), 4u << 20);
  EXPECT_EQ(make_encoder(parse_spec("lzma"), 1u << 20)->lzma_dict_size(), 4u << 20);
  EXPECT_EQ(make_encoder(parse_spec("lzma,dictsize=8m"), 1u << 20)->lzma_dict_size(), 8u << 20);
  EXPECT_EQ(make_encoder(parse_spec("lzma"), 70000)->lzma_dict_size(), 1u << 20);
  EXPECT_EQ(make_encoder(parse_spec("lzma,dictsize=1048576"), 4096)->lzma_dict_size(), 1u << 20);
  EXPECT_EQ(make_encoder(parse_spec("deflate"), 4096)->deflate_window_bits(), 15);
  // zstd: sixteen times the largest pcluster, within 32 KiB..1 MiB.
  EXPECT_EQ(make_encoder(parse_spec("zstd"), 4096)->zstd_window_log(), 6);  // 64 KiB
  EXPECT_EQ(make_encoder(parse_spec("zstd"), 65536)->zstd_window_log(), 10);
  EXPECT_EQ(make_encoder(parse_spec("zstd"), 1u << 20)->zstd_window_log(), 10);  // the kernel's 1 MiB
  EXPECT_EQ(make_encoder(parse_spec("zstd"), 512)->zstd_window_log(), 5);       // at least 32 KiB
  EXPECT_EQ(make_encoder(parse_spec("lz4hc"), 4096)->algorithm(), Algorithm::Lz4);
  EXPECT_THROW(make_encoder(parse_spec("lz4"), 0), std::invalid_argument);
  EXPECT_THROW(make_encoder(parse_spec("lz4"), (1u << 20) + 1), std::invalid_argument);
  Spec bad;
  bad.algorithm = Algorithm::Zstd;
  bad.level = 30;
  EXPECT_THROW(make_encoder(bad, 4096), SpecError);
  Spec plain;  // hand-built, no name: the algorithm's plain form at its default level
  plain.algorithm = Algorithm::Deflate;
  EXPECT_EQ(make_encoder(plain, 4096)->algorithm(), Algorithm::Deflate);
}

// --- spec parsing -------------------------------------------------------------------------------

TEST(ParseSpec, Accepts) {
  struct Want {
    const char* text;
    Algorithm alg;
    const char* name;
    int level;
    uint32_t dict;
  };
  const Want wants[] = {
      {"lz4", Algorithm::Lz4, "lz4", -1, 0},
      {"lz4hc", Algorithm::Lz4, "lz4hc", -1, 0},
      {"lz4hc,12", Algorithm::Lz4, "lz4hc", 12, 0},
      {"lz4hc,level=12", Algorithm::Lz4, "lz4hc", 12, 0},
      {"lz4hc,1", Algorithm::Lz4, "lz4hc", 1, 0},
      {"lzma", Algorithm::Lzma, "lzma", -1, 0},
      {"lzma,9", Algorithm::Lzma, "lzma", 9, 0},
      {"lzma,0", Algorithm::Lzma, "lzma", 0, 0},
      {"lzma,level=9,dictsize=1048576", Algorithm::Lzma, "lzma", 9, 1u << 20},
      {"lzma,dictsize=1048576", Algorithm::Lzma, "lzma", -1, 1u << 20},
      {"lzma,dictsize=256k", Algorithm::Lzma, "lzma", -1, 256u << 10},
      {"lzma,dictsize=8m", Algorithm::Lzma, "lzma", -1, 8u << 20},
      {"deflate", Algorithm::Deflate, "deflate", -1, 0},
      {"deflate,9", Algorithm::Deflate, "deflate", 9, 0},
      {"deflate,level=1", Algorithm::Deflate, "deflate", 1, 0},
      {"zstd", Algorithm::Zstd, "zstd", -1, 0},
      {"zstd,19", Algorithm::Zstd, "zstd", 19, 0},
      {"zstd,level=19", Algorithm::Zstd, "zstd", 19, 0},
      {"zstd,22", Algorithm::Zstd, "zstd", 22, 0},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.text);
    const Spec s = parse_spec(w.text);
    EXPECT_EQ(s.algorithm, w.alg);
    EXPECT_EQ(s.name, w.name);
    EXPECT_EQ(s.level, w.level);
    EXPECT_EQ(s.dict_size, w.dict);
  }
}

TEST(ParseSpec, RejectsWithAMessageNamingTheProblem) {
  const std::pair<const char*, const char*> bad[] = {
      {"lz5", "unknown compression algorithm 'lz5' (known: lz4, lz4hc, lzma, deflate, zstd)"},
      {"", "unknown compression algorithm ''"},
      {"LZ4", "unknown compression algorithm 'LZ4'"},
      {"lz4,3", "lz4 takes no level"},
      {"lz4hc,13", "level 13 out of range 1..12"},
      {"lz4hc,0", "level 0 out of range 1..12"},
      {"lzma,10", "level 10 out of range 0..9"},
      {"deflate,0", "level 0 out of range 1..9"},
      {"deflate,10", "level 10 out of range 1..9"},
      {"zstd,0", "level 0 out of range 1..22"},
      {"zstd,23", "level 23 out of range 1..22"},
      {"zstd,-1", "bad level '-1'"},
      {"zstd,fast", "bad level 'fast'"},
      {"zstd,level=", "bad level ''"},
      {"zstd,3,4", "level given twice"},
      {"lz4hc,", "empty option"},
      {"zstd,window=20", "unknown option 'window'"},
      {"zstd,dictsize=65536", "dictsize applies to lzma only"},
      {"lzma,dictsize=1000", "dictsize 1000 out of range"},
      {"lzma,dictsize=9m", "out of range"},
      {"lzma,dictsize=lots", "bad dictsize 'lots'"},
  };
  for (const auto& [text, message] : bad) {
    SCOPED_TRACE(text);
    try {
      parse_spec(text);
      ADD_FAILURE() << "accepted";
    } catch (const SpecError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(AlgorithmName, Names) {
  EXPECT_EQ(algorithm_name(Algorithm::Lz4), "lz4");
  EXPECT_EQ(algorithm_name(Algorithm::Lzma), "lzma");
  EXPECT_EQ(algorithm_name(Algorithm::Deflate), "deflate");
  EXPECT_EQ(algorithm_name(Algorithm::Zstd), "zstd");
}

}  // namespace
}  // namespace erofs::compress
