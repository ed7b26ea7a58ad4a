// An LZ4 block decoder that refuses a match at offset 0 as it meets it. liblz4 accepts such a
// match (it copies output bytes not yet written), so checking a stream used to take a walk over its
// sequences before liblz4 decoded it: 0.75 of a decode more, since both are bound by the same chain
// of dependent loads (token, length, next token). Here the check is one compare per sequence off
// that chain. It holds every stream to the limits LZ4 streams are written to (the last 5 bytes are
// literals, no match starts within 12 bytes of the end, the input ends with the last literals),
// which liblz4 enforces only loosely where it is far from the buffers' ends; so it accepts a subset
// of what liblz4 accepts, every stream an encoder writes among them, and gives the same bytes. The
// caller hands whatever it refuses to liblz4, whose verdict and words stand.
#include <algorithm>
#include <cstring>

#include "compress/internal.h"

namespace erofs::compress::detail {

namespace {

constexpr size_t kMinMatch = 4;
constexpr size_t kLastLiterals = 5;  // the stream's last bytes are always literals
constexpr size_t kMatchLimit = 12;   // no match starts within this many bytes of the end
constexpr size_t kWild = 16;         // the fast copies move this many bytes at a time
// Room enough for a short sequence's fixed-size moves: 16 bytes of literals read (up to 14 used),
// the offset and the next token; 14 literals and 24 bytes of match written.
constexpr ptrdiff_t kFarInput = 32;
constexpr ptrdiff_t kFarOutput = 64;

constexpr size_t kWildLiterals = 32;  // long literals move in 32-byte steps when this far from both ends
constexpr ptrdiff_t kShortMatchRoom = 24;  // a short match's three 8-byte moves

inline void copy16(uint8_t* to, const uint8_t* from) { std::memcpy(to, from, 16); }
inline void copy8(uint8_t* to, const uint8_t* from) { std::memcpy(to, from, 8); }

// `length` bytes in 32-byte moves, up to 31 bytes past the end (the caller has room for them):
// a call to memcpy cost more than the bytes of a literal run.
inline void copy_wild(uint8_t* to, const uint8_t* from, size_t length) {
  for (size_t i = 0; i < length; i += 32) {
    copy16(to + i, from + i);
    copy16(to + i + 16, from + i + 16);
  }
}

// A match closer than 8 bytes (a run of one byte, or of a short pattern), with room for 7 bytes
// past its end. Its first 8 bytes go one at a time; after them, the bytes a whole number of
// periods (at least 8) back are the same and already written, so the rest moves 8 at a time.
inline void copy_close(uint8_t* op, size_t offset, size_t length) {
  const uint8_t* match = op - offset;
  for (size_t i = 0; i < 8; ++i) op[i] = match[i];
  // The fewest whole periods that make 8 or more (at most 14): the first move reads from at most
  // 6 bytes before op, inside the match's source.
  const size_t back = (8 + offset - 1) / offset * offset;
  for (size_t i = 8; i < length; i += 8) copy8(op + i, op + i - back);
}

// A match whose bytes overlap its source (offset < 8), exactly: the bytes from `from` on repeat
// with period `offset`, so each copy may take twice as much as the one before.
inline void copy_periodic(uint8_t* to, const uint8_t* from, size_t length) {
  const uint8_t* const end = to + length;
  while (to < end) {
    const size_t n = std::min(size_t(to - from), size_t(end - to));
    std::memcpy(to, from, n);
    to += n;
  }
}

}  // namespace

long lz4_decode_strict(std::span<const uint8_t> in, std::span<uint8_t> out) {
  const uint8_t* ip = in.data();
  const uint8_t* const iend = ip + in.size();
  uint8_t* const dst = out.data();
  uint8_t* op = dst;
  uint8_t* const oend = op + out.size();
  // Empty either side is liblz4's to judge (it has its own rule for an empty output).
  if (ip == iend || op == oend) return -1;
  for (;;) {
    // Far from both ends, a short sequence needs none of the limits: its literals and its match
    // are copied in fixed-size moves that stay inside both buffers.
    const bool far = iend - ip >= kFarInput && oend - op >= kFarOutput;
    const unsigned token = *ip++;  // in bounds: checked above, and a match leaves 5 bytes or more
    size_t lit = token >> 4;
    const bool short_lit = far && lit < 15;
    if (short_lit) {
      copy16(op, ip);
    } else {
      if (lit == 15) {
        unsigned s;
        do {
          if (ip == iend) return -1;  // the length's bytes run past the input
          s = *ip++;
          lit += s;
        } while (s == 255);
      }
      const size_t in_left = size_t(iend - ip), out_left = size_t(oend - op);
      if (lit + kMatchLimit > out_left || lit + 2 + 1 + kLastLiterals > in_left) {
        // Too close to either end for a match to follow: the last sequence.
        if (lit != in_left || lit > out_left) return -1;
        std::memmove(op, ip, lit);
        return long(op + lit - dst);
      }
      if (lit + kWildLiterals <= out_left && lit + kWildLiterals <= in_left)
        copy_wild(op, ip, lit);
      else
        std::memcpy(op, ip, lit);
    }
    ip += lit;
    op += lit;

    const size_t offset = size_t(ip[0]) | size_t(ip[1]) << 8;
    ip += 2;
    // One compare for both: offset 0 wraps around to the largest value.
    if (offset - 1 >= size_t(op - dst)) return -1;
    const uint8_t* match = op - offset;
    size_t length = token & 15;
    if (length < 15 && offset >= 8 && (short_lit || oend - op >= kShortMatchRoom)) {
      // At most 18 bytes, in 8-byte moves each from bytes already written; what runs past the
      // match's end the next sequences overwrite.
      copy8(op, match);
      copy8(op + 8, match + 8);
      copy8(op + 16, match + 16);
      op += length + kMinMatch;
      continue;
    }
    if (length == 15) {
      unsigned s;
      do {
        s = *ip++;
        length += s;
        if (size_t(iend - ip) < kLastLiterals) return -1;
      } while (s == 255);
    }
    length += kMinMatch;
    const size_t room = size_t(oend - op);
    if (length + kLastLiterals > room) return -1;
    if (length + kWild <= room && offset >= 8) {
      // Whole chunks as above; 16 bytes at a time where the source is that far back.
      size_t i = 0;
      if (offset >= kWild) {
        do {
          copy16(op + i, match + i);
          i += kWild;
        } while (i < length);
      } else {
        do {
          copy8(op + i, match + i);
          i += 8;
        } while (i < length);
      }
    } else if (length + kWild <= room) {
      copy_close(op, offset, length);
    } else if (offset >= length) {
      std::memcpy(op, match, length);
    } else {
      copy_periodic(op, match, length);
    }
    op += length;
  }
}

// The same limits as lz4_decode_strict, sequence by sequence, without a byte written: its
// fixed-size moves take no decision, so a stream is accepted here exactly when that decoder
// produces `out_size` bytes from it.
bool lz4_walk_strict(std::span<const uint8_t> in, size_t out_size) {
  const uint8_t* ip = in.data();
  const uint8_t* const iend = ip + in.size();
  size_t op = 0;
  if (ip == iend || out_size == 0) return false;
  auto more = [&](size_t& length, size_t min_left) {
    unsigned s;
    do {
      if (size_t(iend - ip) <= min_left) return false;
      s = *ip++;
      length += s;
    } while (s == 255);
    return true;
  };
  for (;;) {
    const unsigned token = *ip++;
    size_t lit = token >> 4;
    if (lit == 15 && !more(lit, 0)) return false;
    const size_t in_left = size_t(iend - ip), out_left = out_size - op;
    if (lit + kMatchLimit > out_left || lit + 2 + 1 + kLastLiterals > in_left)
      return lit == in_left && op + lit == out_size;
    ip += lit;
    op += lit;
    const size_t offset = size_t(ip[0]) | size_t(ip[1]) << 8;
    ip += 2;
    if (offset - 1 >= op) return false;
    size_t length = token & 15;
    // The decoder checks the room left after each length byte it takes; before the next
    // byte is the same check one byte earlier.
    if (length == 15 && !more(length, kLastLiterals)) return false;
    length += kMinMatch;
    if (length + kLastLiterals > out_size - op) return false;
    op += length;
  }
}

}  // namespace erofs::compress::detail
