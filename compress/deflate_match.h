// The DEFLATE encoder's match finder (compress/deflate_fill.cpp): for each position of one
// pcluster's input, the longest earlier copy within DEFLATE's 32 KiB window. Hash chains over
// four-byte prefixes find matches of four bytes and more, walked to a depth the level sets; a
// table of the last position of each three-byte prefix finds three-byte matches, kept only
// within 4 KiB, where one still costs less than three literals.
//
// The tables are not cleared between fills: every position is stored offset by a base that
// moves past the previous input, so older entries (and empty ones, 0) fall below it.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace erofs::compress::detail {

struct DeflateMatch {
  uint32_t len = 0;  // 0: none
  uint32_t dist = 0;
};

class DeflateMatchFinder {
 public:
  static constexpr uint32_t kWindow = 32768;
  static constexpr uint32_t kMinMatch = 3;
  static constexpr uint32_t kMaxMatch = 258;

  // A new input: positions are offsets into `in`; `depth` hash chain candidates are tried per
  // position, and a match `nice` bytes long is taken without looking further.
  void reset(std::span<const uint8_t> in, unsigned depth, uint32_t nice) {
    depth_ = depth;
    nice_ = nice;
    // Past every position the previous input stored, and past the window, so none is a candidate.
    uint64_t next = uint64_t(base_) + size_ + kWindow + 1;
    if (next + in.size() + 1 >= (uint64_t(1) << 32)) {
      head4_.fill(0);
      head3_.fill(0);
      next = kWindow + 1;
    }
    base_ = uint32_t(next);
    in_ = in.data();
    size_ = uint32_t(in.size());
  }

  // The longest match at `pos` (len 0 when there is none worth sending); records `pos`.
  DeflateMatch find(uint32_t pos, unsigned depth) {
    DeflateMatch best;
    const uint32_t left = size_ - pos;
    if (left < kMinMatch) return best;
    const uint8_t* cur = in_ + pos;
    const uint32_t limit = left < kMaxMatch ? left : kMaxMatch;
    const uint32_t me = base_ + pos;
    const uint32_t h3 = hash3(cur);
    const uint32_t c3 = head3_[h3];
    head3_[h3] = me;
    if (c3 >= base_ && me - c3 <= kShortReach && std::memcmp(in_ + (c3 - base_), cur, 3) == 0) {
      best.len = 3;
      best.dist = me - c3;
    }
    if (left < 4) return best;
    const uint32_t h4 = hash4(cur);
    uint32_t cand = head4_[h4];
    head4_[h4] = me;
    prev_[me & (kWindow - 1)] = cand;
    const uint32_t first4 = load32(cur);
    for (unsigned d = depth; d && cand >= base_ && me - cand <= kWindow; --d) {
      const uint8_t* c = in_ + (cand - base_);
      if (c[best.len] == cur[best.len] && load32(c) == first4) {
        const uint32_t len = match_length(c, cur, limit);
        if (len > best.len) {
          best.len = len;
          best.dist = me - cand;
          if (len >= nice_ || len == limit) break;
        }
      }
      const uint32_t older = prev_[cand & (kWindow - 1)];
      if (older >= cand) break;  // the slot was reused by a newer position
      cand = older;
    }
    return best;
  }
  DeflateMatch find(uint32_t pos) { return find(pos, depth_); }

  // Records `pos` without searching (positions inside a match sent).
  void skip(uint32_t pos) {
    const uint32_t left = size_ - pos;
    if (left < kMinMatch) return;
    const uint32_t me = base_ + pos;
    head3_[hash3(in_ + pos)] = me;
    if (left < 4) return;
    const uint32_t h4 = hash4(in_ + pos);
    prev_[me & (kWindow - 1)] = head4_[h4];
    head4_[h4] = me;
  }

  uint32_t nice() const { return nice_; }
  unsigned depth() const { return depth_; }

 private:
  static constexpr unsigned kHash4Bits = 15, kHash3Bits = 14;
  static constexpr uint32_t kShortReach = 4096;

  static uint32_t load32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static uint32_t hash4(const uint8_t* p) { return (load32(p) * 0x9E3779B1u) >> (32 - kHash4Bits); }
  static uint32_t hash3(const uint8_t* p) {
    const uint32_t v = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16;
    return (v * 0x9E3779B1u) >> (32 - kHash3Bits);
  }
  // Equal bytes at `a` and `b`, at most `limit`; `b` is the later position, `a` + limit <= `b` + limit.
  static uint32_t match_length(const uint8_t* a, const uint8_t* b, uint32_t limit) {
    uint32_t n = 0;
    while (n + 8 <= limit) {
      uint64_t x, y;
      std::memcpy(&x, a + n, 8);
      std::memcpy(&y, b + n, 8);
      if (x != y) return n + uint32_t(std::countr_zero(x ^ y) >> 3);
      n += 8;
    }
    while (n < limit && a[n] == b[n]) ++n;
    return n;
  }

  unsigned depth_ = 0;
  uint32_t nice_ = 0;
  const uint8_t* in_ = nullptr;
  uint32_t size_ = 0;
  uint32_t base_ = 0;
  std::array<uint32_t, size_t(1) << kHash4Bits> head4_{};
  std::array<uint32_t, size_t(1) << kHash3Bits> head3_{};
  std::array<uint32_t, kWindow> prev_{};
};

}  // namespace erofs::compress::detail
