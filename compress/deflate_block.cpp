#include "compress/deflate_block.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "compress/huffman.h"

namespace erofs::compress::detail {
namespace {

static_assert(std::endian::native == std::endian::little);

// RFC 1951 3.2.5: each length and distance slot's first value and extra bits.
constexpr std::array<uint16_t, 29> kLenBase = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                               31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::array<uint8_t, 29> kLenExtra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                               2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::array<uint16_t, 30> kDistBase = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,
                                                33,  49,  65,  97,  129, 193,  257,  385,  513,  769,
                                                1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::array<uint8_t, 30> kDistExtra = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                                6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
// The order code-length code lengths are sent in (3.2.7), and the extra bits of its repeat symbols.
constexpr std::array<uint8_t, 19> kLensOrder = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
constexpr std::array<uint8_t, 3> kRepeatExtra = {2, 3, 7};

unsigned length_slot(unsigned len) {
  if (len == 258) return 28;
  const unsigned l0 = len - 3;
  if (l0 < 8) return l0;
  const unsigned top = 31 - unsigned(std::countl_zero(l0));
  return 4 * (top - 1) + ((l0 >> (top - 2)) & 3);
}

unsigned dist_slot(unsigned dist) {
  const unsigned d0 = dist - 1;
  if (d0 < 4) return d0;
  const unsigned top = 31 - unsigned(std::countl_zero(d0));
  return 2 * top + ((d0 >> (top - 1)) & 1);
}

unsigned fixed_litlen_len(unsigned sym) { return sym < 144 ? 8 : sym < 256 ? 9 : sym < 280 ? 7 : 8; }

// The fixed codes (3.2.6), made once.
struct FixedCodes {
  std::array<uint8_t, 288> litlen_len{};
  std::array<uint16_t, 288> litlen{};
  std::array<uint8_t, 30> dist_len{};
  std::array<uint16_t, 30> dist{};
  FixedCodes() {
    for (unsigned s = 0; s < 288; ++s) litlen_len[s] = uint8_t(fixed_litlen_len(s));
    dist_len.fill(5);
    huffman_codes(litlen_len, litlen);
    huffman_codes(dist_len, dist);
  }
};
const FixedCodes& fixed_codes() {
  static const FixedCodes codes;
  return codes;
}

// Runs of the code-length sequence (3.2.7): 16 repeats the previous length 3-6 times, 17 and 18
// repeat zero 3-10 and 11-138 times.
void code_length_runs(std::span<const uint8_t> seq, DeflateBlockCode& c) {
  c.run_count = 0;
  auto item = [&](unsigned sym, unsigned extra) { c.runs[c.run_count++] = uint16_t(sym | extra << 5); };
  for (size_t i = 0; i < seq.size();) {
    const uint8_t l = seq[i];
    size_t run = 1;
    while (i + run < seq.size() && seq[i + run] == l) ++run;
    i += run;
    if (l == 0) {
      for (; run >= 11; run -= std::min<size_t>(run, 138)) item(18, unsigned(std::min<size_t>(run, 138) - 11));
      if (run >= 3) {
        item(17, unsigned(run - 3));
        run = 0;
      }
    } else {
      item(l, 0);
      --run;
      for (; run >= 3; run -= std::min<size_t>(run, 6)) item(16, unsigned(std::min<size_t>(run, 6) - 3));
    }
    for (; run > 0; --run) item(l, 0);
  }
}

}  // namespace

void DeflateCounts::add(DeflateSymbol s) {
  if (s.len == 0) {
    ++litlen[s.value];
  } else {
    ++litlen[257 + length_slot(s.len)];
    ++dist[dist_slot(s.value)];
  }
}

uint64_t deflate_block_bits(const DeflateCounts& counts, DeflateBlockCode* code) {
  DeflateBlockCode local;
  DeflateBlockCode& c = code ? *code : local;
  uint64_t extra = 0, matches = 0;  // extra bits are the same whatever the codes
  for (unsigned i = 0; i < 29; ++i) extra += uint64_t(counts.litlen[257 + i]) * kLenExtra[i];
  for (unsigned i = 0; i < 30; ++i) {
    extra += uint64_t(counts.dist[i]) * kDistExtra[i];
    matches += counts.dist[i];
  }
  uint64_t fixed = 3 + 7 + extra + 5 * matches;  // header, end of block, 5-bit distance codes
  for (unsigned i = 0; i < 286; ++i) fixed += uint64_t(counts.litlen[i]) * fixed_litlen_len(i);

  std::array<uint32_t, 286> litlen = counts.litlen;
  litlen[256] = 1;
  huffman_lengths(litlen, 15, c.litlen_len);
  huffman_lengths(counts.dist, 15, c.dist_len);
  c.hlit = 286;
  while (c.hlit > 257 && !c.litlen_len[c.hlit - 1]) --c.hlit;
  c.hdist = 30;
  while (c.hdist > 1 && !c.dist_len[c.hdist - 1]) --c.hdist;
  std::array<uint8_t, 286 + 30> seq;
  std::copy_n(c.litlen_len.begin(), c.hlit, seq.begin());
  std::copy_n(c.dist_len.begin(), c.hdist, seq.begin() + c.hlit);
  code_length_runs(std::span(seq).first(c.hlit + c.hdist), c);
  std::array<uint32_t, 19> lens_freq{};
  for (unsigned i = 0; i < c.run_count; ++i) ++lens_freq[c.runs[i] & 31];
  huffman_lengths(lens_freq, 7, c.lens_len);
  c.hclen = 19;
  while (c.hclen > 4 && !c.lens_len[kLensOrder[c.hclen - 1]]) --c.hclen;

  uint64_t dynamic = 3 + 5 + 5 + 4 + 3 * uint64_t(c.hclen) + extra;
  for (unsigned s = 0; s < 19; ++s) dynamic += uint64_t(lens_freq[s]) * (c.lens_len[s] + (s >= 16 ? kRepeatExtra[s - 16] : 0));
  for (unsigned i = 0; i < 286; ++i) dynamic += uint64_t(litlen[i]) * c.litlen_len[i];
  for (unsigned i = 0; i < 30; ++i) dynamic += uint64_t(counts.dist[i]) * c.dist_len[i];
  c.dynamic = dynamic < fixed;
  return std::min(dynamic, fixed);
}

void DeflateBitWriter::byte(uint8_t b) {
  if (at_ >= out_.size()) throw std::logic_error("deflate: block written past the pcluster");
  out_[at_++] = b;
}

void DeflateBitWriter::spill() {
  while (filled_ >= 8) {
    byte(uint8_t(acc_));
    acc_ >>= 8;
    filled_ -= 8;
  }
}

void DeflateBitWriter::align_to_byte() {
  spill();
  if (filled_) byte(uint8_t(acc_));
  acc_ = 0;
  filled_ = 0;
}

void DeflateBitWriter::put_bytes(std::span<const uint8_t> bytes) {
  if (filled_ || bytes.size() > out_.size() - at_) throw std::logic_error("deflate: stored bytes out of place");
  std::memcpy(out_.data() + at_, bytes.data(), bytes.size());
  at_ += bytes.size();
}

size_t DeflateBitWriter::finish() {
  align_to_byte();
  return at_;
}

void deflate_write_block(DeflateBitWriter& w, const DeflateBlockCode& c, bool final,
                         std::span<const DeflateSymbol> symbols) {
  std::array<uint16_t, 286> litlen_code;
  std::array<uint16_t, 30> dist_code;
  const uint8_t* litlen_len = c.litlen_len.data();
  const uint8_t* dist_len = c.dist_len.data();
  const uint16_t* litlen = litlen_code.data();
  const uint16_t* dist = dist_code.data();
  if (c.dynamic) {
    w.put(final | 2u << 1, 3);
    w.put(c.hlit - 257, 5);
    w.put(c.hdist - 1, 5);
    w.put(c.hclen - 4, 4);
    for (unsigned i = 0; i < c.hclen; ++i) w.put(c.lens_len[kLensOrder[i]], 3);
    std::array<uint16_t, 19> lens_code;
    huffman_codes(c.lens_len, lens_code);
    for (unsigned i = 0; i < c.run_count; ++i) {
      const unsigned sym = c.runs[i] & 31;
      w.put(lens_code[sym], c.lens_len[sym]);
      if (sym >= 16) w.put(c.runs[i] >> 5, kRepeatExtra[sym - 16]);
    }
    huffman_codes(c.litlen_len, litlen_code);
    huffman_codes(c.dist_len, dist_code);
  } else {
    w.put(final | 1u << 1, 3);
    const FixedCodes& f = fixed_codes();
    litlen_len = f.litlen_len.data();
    dist_len = f.dist_len.data();
    litlen = f.litlen.data();
    dist = f.dist.data();
  }
  for (const DeflateSymbol s : symbols) {
    if (s.len == 0) {
      w.put(litlen[s.value], litlen_len[s.value]);
      continue;
    }
    const unsigned ls = length_slot(s.len), ds = dist_slot(s.value);
    w.put(litlen[257 + ls], litlen_len[257 + ls]);
    w.put(s.len - kLenBase[ls], kLenExtra[ls]);
    w.put(dist[ds], dist_len[ds]);
    w.put(s.value - kDistBase[ds], kDistExtra[ds]);
  }
  w.put(litlen[256], litlen_len[256]);
}

size_t deflate_stored_capacity(size_t room, size_t n) {
  size_t cap = 0;
  while (room > 5 && cap < n) {
    const size_t take = std::min({room - 5, size_t(65535), n - cap});
    cap += take;
    room -= take + 5;
  }
  return cap;
}

void deflate_write_stored(DeflateBitWriter& w, std::span<const uint8_t> data) {
  do {
    const size_t take = std::min<size_t>(data.size(), 65535);
    w.put(take == data.size() ? 1 : 0, 3);
    w.align_to_byte();
    w.put(uint32_t(take) | uint32_t(~take & 0xffff) << 16, 32);
    w.align_to_byte();
    w.put_bytes(data.first(take));
    data = data.subspan(take);
  } while (!data.empty());
}

}  // namespace erofs::compress::detail
