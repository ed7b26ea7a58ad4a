// The one-pass DEFLATE encoder: Huffman code construction, exact block sizes, the cut at the
// pcluster's end, block splitting, and how much input a pcluster holds against libdeflate's
// compressions of the same input fitted by bisection.
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/deflate_block.h"
#include "compress/deflate_fill.h"
#include "compress/huffman.h"

namespace erofs::compress::detail {
namespace {

using Bytes = std::vector<uint8_t>;

uint64_t kraft_sum(std::span<const uint8_t> lens, unsigned max_len) {
  uint64_t sum = 0;
  for (uint8_t l : lens)
    if (l) sum += uint64_t(1) << (max_len - l);
  return sum;
}

TEST(Huffman, OptimalLengthsWhenNothingIsTooLong) {
  const std::vector<uint32_t> freqs = {1, 1, 2, 3, 5, 0};
  std::vector<uint8_t> lens(freqs.size());
  huffman_lengths(freqs, 15, lens);
  EXPECT_EQ(lens, (std::vector<uint8_t>{4, 4, 3, 2, 1, 0}));
}

TEST(Huffman, LengthLimitKeepsTheCodeComplete) {
  // Fibonacci counts make the deepest tree: 29 levels unlimited.
  std::vector<uint32_t> freqs(30);
  freqs[0] = freqs[1] = 1;
  for (size_t i = 2; i < freqs.size(); ++i) freqs[i] = freqs[i - 1] + freqs[i - 2];
  for (unsigned limit : {7u, 9u, 15u}) {
    std::vector<uint8_t> lens(freqs.size());
    huffman_lengths(freqs, limit, lens);
    EXPECT_EQ(*std::max_element(lens.begin(), lens.end()), limit);
    EXPECT_EQ(kraft_sum(lens, limit), uint64_t(1) << limit) << "limit " << limit;
    for (size_t i = 1; i < lens.size(); ++i) EXPECT_LE(lens[i], lens[i - 1]) << "a commoner symbol got a longer code";
  }
}

TEST(Huffman, FewerThanTwoSymbolsStillMakeTwoCodes) {
  std::vector<uint8_t> lens(30);
  huffman_lengths(std::vector<uint32_t>(30, 0), 15, lens);
  EXPECT_EQ(lens[0], 1);
  EXPECT_EQ(lens[1], 1);
  std::vector<uint32_t> one(30, 0);
  one[7] = 9;
  huffman_lengths(one, 15, lens);
  EXPECT_EQ(lens[7], 1);
  EXPECT_EQ(lens[0], 1);
  EXPECT_EQ(kraft_sum(lens, 15), 1u << 15);
}

TEST(Huffman, CanonicalCodesOfTheRfcExample) {
  // RFC 1951 3.2.2: lengths (3, 3, 3, 3, 3, 2, 4, 4) give 010 011 100 101 110 00 1110 1111,
  // sent first bit first, so stored reversed.
  const std::vector<uint8_t> lens = {3, 3, 3, 3, 3, 2, 4, 4};
  std::vector<uint16_t> codes(lens.size());
  huffman_codes(lens, codes);
  EXPECT_EQ(codes, (std::vector<uint16_t>{0b010, 0b110, 0b001, 0b101, 0b011, 0b00, 0b0111, 0b1111}));
}

// Word soup, as in compress_test.cpp: about 3x with zlib.
Bytes make_text(size_t n, uint32_t seed, char first = 'a', int letters = 26) {
  std::mt19937 rng(seed);
  std::vector<std::string> words(300);
  for (auto& w : words)
    for (size_t i = 0, len = 2 + rng() % 9; i < len; ++i) w.push_back(char(first + rng() % letters));
  Bytes out;
  while (out.size() < n) {
    size_t i = rng() % words.size();
    for (int k = 0; k < 2; ++k) i = i * (rng() % words.size()) / words.size();
    out.insert(out.end(), words[i].begin(), words[i].end());
    out.push_back(rng() % 20 == 0 ? '\n' : ' ');
  }
  out.resize(n);
  return out;
}

// Raw inflate with zlib, counting the blocks: inflate(Z_BLOCK) returns at the end of each one
// but the last.
Bytes inflate_raw(std::span<const uint8_t> stream, size_t size, int* blocks = nullptr) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, -15), Z_OK);
  Bytes out(size + 1);
  zs.next_in = const_cast<Bytef*>(stream.data());
  zs.avail_in = uInt(stream.size());
  zs.next_out = out.data();
  zs.avail_out = uInt(out.size());
  int rc = Z_OK, seen = 0;
  while (rc == Z_OK) {
    rc = inflate(&zs, Z_BLOCK);
    if (rc == Z_OK && (zs.data_type & 128)) ++seen;
  }
  EXPECT_EQ(rc, Z_STREAM_END) << (zs.msg ? zs.msg : "");
  EXPECT_EQ(zs.avail_in, 0u) << "bytes after the final block";
  out.resize(zs.total_out);
  inflateEnd(&zs);
  if (blocks) *blocks = seen + 1;
  return out;
}

// The bytes a run of symbols stands for.
Bytes expand(std::span<const DeflateSymbol> symbols) {
  Bytes out;
  for (DeflateSymbol s : symbols) {
    if (s.len == 0) {
      out.push_back(uint8_t(s.value));
      continue;
    }
    for (unsigned i = 0; i < s.len; ++i) out.push_back(out[out.size() - s.value]);
  }
  return out;
}

TEST(DeflateBlock, SizeIsExactToTheBitForDynamicFixedAndEmptyBlocks) {
  const Bytes text = make_text(5000, 1);
  std::vector<DeflateSymbol> few = {{0, 'a'}, {0, 'b'}, {3, 2}, {0, 'c'}};
  std::vector<DeflateSymbol> many;
  for (size_t i = 0; i < text.size(); ++i)
    many.push_back(i >= 300 && i % 7 == 0 ? DeflateSymbol{uint16_t(3 + i % 256), uint16_t(1 + i % 300)}
                                          : DeflateSymbol{0, text[i]});
  std::vector<DeflateSymbol> none;
  for (const std::vector<DeflateSymbol>* syms : std::array{&few, &many, &none}) {
    DeflateCounts counts;
    for (DeflateSymbol s : *syms) counts.add(s);
    DeflateBlockCode code;
    const uint64_t bits = deflate_block_bits(counts, &code);
    EXPECT_EQ(code.dynamic, syms == &many);
    // After 0 to 7 bits of something else the block ends in the byte its size says: a size off
    // by a bit would cross a byte boundary for one of the eight.
    for (unsigned before = 0; before < 8; ++before) {
      Bytes out((before + bits + 7) / 8);
      DeflateBitWriter w(out);
      w.put(0, before);
      deflate_write_block(w, code, true, *syms);
      EXPECT_EQ(w.finish(), out.size()) << bits << " bits after " << before;
      if (before == 0) {
        EXPECT_EQ(inflate_raw(out, 100000), expand(*syms));
      }
    }
  }
}

// libdeflate at the same level, the longest prefix that fits found by bisection.
size_t libdeflate_fit(std::span<const uint8_t> in, size_t room, int level) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  Bytes out(room);
  size_t lo = 0, hi = in.size() + 1;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (libdeflate_deflate_compress(c, in.data(), mid, out.data(), room) ? lo : hi) = mid;
  }
  libdeflate_free_compressor(c);
  return lo;
}

TEST(DeflateFill, HoldsAsMuchAsLibdeflateFittedByBisection) {
  const Bytes text = make_text(1 << 20, 2);
  for (const auto& [room, level] : {std::pair{4096u, 9}, std::pair{65536u, 9}, std::pair{4096u, 6}}) {
    DeflateFill fill(level);
    Bytes out(room);
    const FillResult r = fill.fill(text, out);
    EXPECT_EQ(inflate_raw({out.data(), r.produced}, r.consumed), Bytes(text.begin(), text.begin() + r.consumed));
    EXPECT_LE(room - r.produced, 8u) << "the cut leaves about a symbol's bits unused";
    const size_t theirs = libdeflate_fit(text, room, level);
    // Here the fill holds 0.998-1.004x of libdeflate's input; 0.985-0.995x before lazy evaluation
    // looked two positions ahead and weighed distances and blocks were split at 1024 symbols.
    EXPECT_GE(double(r.consumed), 0.995 * double(theirs)) << "room " << room << " level " << level;
  }
}

TEST(DeflateFill, BlocksEndWhereTheDataChanges) {
  // Lowercase words, then uppercase and digits: one set of codes for both wastes bits.
  Bytes in = make_text(60000, 3);
  const Bytes other = make_text(60000, 4, '0', 43);
  in.insert(in.end(), other.begin(), other.end());
  DeflateFill fill(9);
  Bytes out(65536);
  const FillResult r = fill.fill(in, out);
  ASSERT_EQ(r.consumed, in.size());
  int blocks = 0;
  EXPECT_EQ(inflate_raw({out.data(), r.produced}, r.consumed, &blocks), in);
  EXPECT_GE(blocks, 2);
}

TEST(DeflateFill, SameStreamAcrossTheMatchFinderRestartingItsPositions) {
  // Positions are offset by a base that moves past each input (12 MiB and the 32 KiB window a
  // fill here); the tables are cleared and the base starts again where the first fill's was
  // when the next input would pass 2^32: at the 341st fill, so the text is filled first and
  // again around then. Entries left from the first fill would then read as positions of the
  // current input, among them the position being looked up (a match at distance 0).
  Bytes text = make_text(20000, 7);
  std::mt19937 rng(8);
  text.resize(12u << 20);
  for (size_t i = 20000; i < text.size(); ++i) text[i] = uint8_t(rng());
  Bytes noise(12u << 20);
  for (auto& b : noise) b = uint8_t(rng());
  for (int between = 337; between <= 341; ++between) {
    DeflateFill fill(9);
    Bytes first(4096), again(4096), scratch(4096);
    const FillResult r = fill.fill(text, first);
    for (int i = 0; i < between; ++i) fill.fill(noise, scratch);
    const FillResult s = fill.fill(text, again);
    ASSERT_EQ(s.produced, r.produced) << between;
    EXPECT_TRUE(std::equal(first.begin(), first.begin() + r.produced, again.begin())) << between;
    EXPECT_EQ(inflate_raw({again.data(), s.produced}, s.consumed), Bytes(text.begin(), text.begin() + s.consumed));
  }
}

TEST(DeflateFill, SameInputSameStreamWhateverCameBefore) {
  const Bytes a = make_text(300000, 5), b = make_text(300000, 6);
  DeflateFill used(9), fresh(9);
  Bytes out1(8192), out2(8192);
  used.fill(a, out1);
  const FillResult r1 = used.fill(b, out1);
  const FillResult r2 = fresh.fill(b, out2);
  ASSERT_EQ(r1.consumed, r2.consumed);
  ASSERT_EQ(r1.produced, r2.produced);
  EXPECT_TRUE(std::equal(out1.begin(), out1.begin() + r1.produced, out2.begin()));
}

}  // namespace
}  // namespace erofs::compress::detail
