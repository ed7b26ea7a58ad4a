// Overflow-checked arithmetic for numbers that come from the image. Every offset and length the
// reader derives from on-disk fields goes through these, so a hostile value raises CorruptError
// instead of wrapping around into a valid-looking position.
#pragma once

#include <cstdint>

#include "reader/image.h"

namespace erofs::reader::checked {

inline uint64_t add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw CorruptError("offset arithmetic overflows");
  return r;
}

inline uint64_t mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw CorruptError("offset arithmetic overflows");
  return r;
}

// a << bits, for block numbers turned into byte offsets.
inline uint64_t shl(uint64_t a, unsigned bits) {
  if (bits >= 64 || (bits > 0 && (a >> (64 - bits)) != 0)) throw CorruptError("offset arithmetic overflows");
  return a << bits;
}

// Rounds up to a power-of-two alignment.
inline uint64_t round_up(uint64_t a, uint64_t align) { return add(a, align - 1) & ~(align - 1); }

inline uint64_t div_round_up(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

}  // namespace erofs::reader::checked
