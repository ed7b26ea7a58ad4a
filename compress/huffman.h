// Length-limited Huffman codes for the DEFLATE encoder (compress/deflate_fill.cpp): the code
// lengths that make a block smallest for given symbol counts, and the canonical codes RFC 1951
// derives from lengths, bit-reversed because DEFLATE sends a Huffman code's first bit first into
// a stream that is filled from each byte's low bit.
#pragma once

#include <cstdint>
#include <span>

namespace erofs::compress::detail {

// The largest alphabet DEFLATE has (literal/length: 286 symbols).
inline constexpr unsigned kHuffmanMaxSymbols = 288;

// Writes to lens[i] the code length of symbol i (0: unused) for counts freqs[i], none longer than
// max_len. Optimal when no length exceeds max_len; otherwise the deepest codes are folded up until
// the code is complete again, the rarest symbols keeping the longest codes. Fewer than two used
// symbols still get two codes of length 1 (symbol 0 or 1 added): inflaters accept no other
// incomplete or single-symbol code.
void huffman_lengths(std::span<const uint32_t> freqs, unsigned max_len, std::span<uint8_t> lens);

// The canonical codes for `lens` (RFC 1951 3.2.2), bit-reversed for a low-bit-first stream.
void huffman_codes(std::span<const uint8_t> lens, std::span<uint16_t> codes);

}  // namespace erofs::compress::detail
