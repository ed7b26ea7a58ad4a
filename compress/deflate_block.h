// DEFLATE block coding for the encoder (compress/deflate_fill.cpp): from a block's symbol counts
// to its codes and its exact size in bits, and the bits of a block written out. The size is exact
// so the encoder can cut the stream at the pcluster's end by arithmetic on counts alone.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace erofs::compress::detail {

// One symbol: a literal (len 0, value the byte) or a match (len 3..258, value the distance).
struct DeflateSymbol {
  uint16_t len, value;
};

// Literal/length and distance symbol counts of a run of symbols (end of block not included).
struct DeflateCounts {
  std::array<uint32_t, 286> litlen{};
  std::array<uint32_t, 30> dist{};
  void add(DeflateSymbol s);
};

// A block's codes: the fixed ones or dynamic ones with the header that describes them.
struct DeflateBlockCode {
  bool dynamic = false;
  std::array<uint8_t, 286> litlen_len{};
  std::array<uint8_t, 30> dist_len{};
  std::array<uint8_t, 19> lens_len{};  // the code-length code's lengths
  unsigned hlit = 0, hdist = 0, hclen = 0;
  // The code-length sequence, run-length coded: symbol (0..18) in the low 5 bits, repeat extra above.
  std::array<uint16_t, 286 + 30> runs{};
  unsigned run_count = 0;
};

// The size in bits of a block holding these symbols, coded with the cheaper of dynamic and fixed
// codes, its header and end-of-block symbol included; `code`, when given, receives those codes.
uint64_t deflate_block_bits(const DeflateCounts& counts, DeflateBlockCode* code = nullptr);

// Bits into a byte buffer, low bit first. Writing past the buffer is a bug in the caller's sizes
// and throws std::logic_error.
class DeflateBitWriter {
 public:
  explicit DeflateBitWriter(std::span<uint8_t> out) : out_(out) {}
  void put(uint32_t bits, unsigned count) {
    acc_ |= uint64_t(bits) << filled_;
    filled_ += count;
    if (filled_ >= 32) spill();
  }
  void align_to_byte();
  void put_bytes(std::span<const uint8_t> bytes);  // after align_to_byte()
  size_t finish();                                 // the bytes written

 private:
  void spill();
  void byte(uint8_t b);

  std::span<uint8_t> out_;
  size_t at_ = 0;
  uint64_t acc_ = 0;
  unsigned filled_ = 0;
};

void deflate_write_block(DeflateBitWriter& w, const DeflateBlockCode& code, bool final,
                         std::span<const DeflateSymbol> symbols);
// Input bytes that stored blocks carry in `room` output bytes, at most `n`.
size_t deflate_stored_capacity(size_t room, size_t n);
// `data` as stored blocks, the last one final.
void deflate_write_stored(DeflateBitWriter& w, std::span<const uint8_t> data);

}  // namespace erofs::compress::detail
