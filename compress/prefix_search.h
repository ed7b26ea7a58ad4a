// Fixed-output compression for codecs that compress whole buffers only (zstd's one-shot
// frames): the longest prefix of the input whose compressed form fits the pcluster, found by
// compressing candidate prefixes whole. Each candidate is one frame or stream with the codec's
// own block decisions, so the pcluster holds what a plain compression of that prefix would give
// (ending blocks early to probe, as a streaming fill must, costs several percent at small
// pclusters).
//
// The first candidate comes from how much input the previous fill of the same input took, later
// ones by interpolation from what fitted and what did not; the search ends when the stream fills
// the pcluster as closely as the codec asks or the candidates close in, so a fill costs a few
// compressions, not a bisection's twenty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "compress/codec.h"

namespace erofs::compress::detail {

class PrefixSearch {
 public:
  // When a fill is full enough: the stream leaves at most max(min_slack, room / slack_share)
  // bytes of the pcluster unused, or the longest prefix that fits and the shortest that does not
  // are within max(4, lo / close_share) input bytes.
  struct Precision {
    size_t min_slack, slack_share, close_share;
  };
  explicit PrefixSearch(Precision p) : precision_(p) {}
  // Compresses the first `n` bytes of the input into `dst` (room for more than the pcluster);
  // returns the stream's size, 0 when it does not fit even there.
  using Compress = std::function<size_t(size_t n, std::span<uint8_t> dst)>;

  FillResult fill(size_t input_size, std::span<uint8_t> out, const Compress& compress);
  // A new input begins: its first fill guesses no ratio from the previous one.
  void forget_history() { last_ = 0; }
  // Input the last fill took (0 after forget_history).
  size_t last() const { return last_; }

 private:
  Precision precision_;
  size_t last_ = 0;  // input the previous fill of this input took
  std::vector<uint8_t> trial_;
};

}  // namespace erofs::compress::detail
