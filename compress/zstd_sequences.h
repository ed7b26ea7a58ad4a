// Prefixes of one zstd input compressed from one match search. A fill tries several prefixes of
// its input (compress/prefix_search.h); compressing each whole repeats the match search, the
// costly part, every time. Here the search runs once over a window of the input
// (ZSTD_generateSequences), and each prefix is the window's sequences cut where the prefix ends,
// entropy-coded alone (ZSTD_compressSequences). On 600 KB of C source the frames came out
// 0.05% smaller than ZSTD_compress2's at levels 3 and 9 (the library then cuts blocks where it
// likes; keeping the search's block boundaries cost 0.5% at level 3), and a prefix cost 0.2 of
// a whole compression at level 3, 0.04 at level 9.
//
// libzstd before 1.5.6 leaves the last bytes of a window out of the sequences when its last
// block is tiny, and its block splitter gave sequences that do not match the input: the splitter
// is off here, bytes after the last sequence are literals, and the caller decodes the frame it
// keeps and checks it against the input.
#pragma once

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "compress/uninit_bytes.h"

namespace erofs::compress::detail {

class ZstdSequences {
 public:
  // Both contexts hold the level and the window, and serve only here: the library leaves
  // `search` collecting sequences and compressing nothing, and `coder`'s match tables are
  // shrunk (the coder never searches, and each frame would clear tables sized for the level).
  ZstdSequences(ZSTD_CCtx* search, ZSTD_CCtx* coder, int level);

  // Searches the first `n` bytes of `in` for matches, forgetting the window searched before,
  // with the parameters the library picks for an input of `expect` bytes: those a whole
  // compression of the prefix kept would use (the library's tables for inputs up to 16 KiB
  // search harder than those for 128 KiB; searching a 4 KiB pcluster's window with the larger
  // input's made the 10^9-byte file's image 1.1% larger). False when the library refuses (the
  // caller compresses prefixes whole).
  bool search(std::span<const uint8_t> in, size_t n, size_t expect);
  // Bytes of input the last search covered (0 before any, or after a refusal).
  size_t window() const { return window_; }
  // The first `n` bytes (n <= window()) as one frame into `dst`: its size, 0 when it does not fit,
  // SIZE_MAX when the library refuses.
  size_t compress(size_t n, std::span<uint8_t> dst);

 private:
  void cut(size_t n);

  ZSTD_CCtx* search_;
  ZSTD_CCtx* coder_;
  int level_;
  const uint8_t* in_ = nullptr;
  size_t window_ = 0;
  std::unique_ptr<ZSTD_Sequence[]> found_;  // the search's, block delimiters merged away
  size_t found_count_ = 0, capacity_ = 0;
  std::vector<ZSTD_Sequence> prefix_;  // those of one prefix
  UninitBytes frame_;
};

}  // namespace erofs::compress::detail
