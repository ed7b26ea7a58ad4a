// DEFLATE's fixed-output encoder: fills a pcluster with one raw RFC 1951 stream in one pass over
// the input. Matches are found once (compress/deflate_match.h, lazy evaluation); the symbols they
// give are counted into Huffman blocks whose exact size in bits follows from the counts, so the
// longest run of symbols whose stream fits is found by costing prefixes of the symbols, not by
// compressing prefixes of the input again and again, as a fill built on a whole-buffer compressor
// (libdeflate) must, at four to six compressions a pcluster.
//
// Blocks: a block ends where its symbols' statistics change enough that two blocks, each with its
// own codes, cost less than one; the last block is the one the pcluster's end cuts. Each block is
// sent with dynamic or fixed codes, whichever is smaller; the whole pcluster is stored blocks
// instead when those hold more input (incompressible data).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compress/codec.h"
#include "compress/deflate_block.h"
#include "compress/deflate_match.h"

namespace erofs::compress::detail {

class DeflateFill {
 public:
  explicit DeflateFill(int level);
  FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out);

 private:
  struct Block {
    uint32_t first, end;  // symbols [first, end)
    DeflateCounts counts;
  };

  DeflateSymbol next_symbol();
  uint64_t fill_symbols(uint64_t budget);

  unsigned depth_;
  uint32_t nice_;
  bool lazy_;
  DeflateMatchFinder finder_;
  std::span<const uint8_t> in_;
  uint32_t pos_ = 0;      // input position the next symbol starts at
  DeflateMatch pending_;  // the match found at pos_, when pending_valid_
  bool pending_valid_ = false;
  bool lit2_ = false;  // pos_ goes as a literal before pending_, found two positions on
  std::vector<DeflateSymbol> symbols_;
  std::vector<Block> blocks_;  // closed, then the last one
};

}  // namespace erofs::compress::detail
