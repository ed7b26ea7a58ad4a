// Fixed-output compression for stream compressors that have no "fill this buffer" mode (zlib, zstd).
//
// Binary-searching the input length costs several compression passes. Instead the input is fed in
// steps, each ending a block, sized from the compression ratio seen so far to fill part of the room
// left. Every input byte is compressed about once, and a step that does not fit is cut off at the
// previous block boundary; when that would waste much room, the compressor is rewound to the
// boundary and the step retried smaller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace erofs::compress::detail {

class SteppedFiller {
 public:
  virtual ~SteppedFiller() = default;

  struct Outcome {
    size_t consumed = 0;      // input represented by the stream up to `used`
    uint64_t used = 0;        // stream size (units) at the last block boundary that fits the budget
    bool at_boundary = true;  // false: the compressor went past `used` and the stream must be cut back
  };

  // Tuned per compressor on text (C headers and licences, 4 KiB to 1 MiB pclusters): each extra
  // block costs header bytes and time, each overshoot costs the step and a rewind.
  struct Params {
    unsigned units_per_byte = 1;  // 8 when units are bits
    size_t max_step = SIZE_MAX;   // input bytes per step at most (zstd: its block size)
    bool cheap_rewind = false;    // rewind() costs far less than compressing the input again
    double first_aim = 0.5;       // share of the budget the first step aims at (previous fill's ratio)
    double aim = 0.6;             // share of the room left that later steps aim at
    double safe_aim = 0.5;        // the same where an overshoot would need an expensive rewind
    double retry_aim = 0.9;       // after an overshoot, sized from the failing data's own ratio
    double cut_share = 0.05;      // an overshoot leaving at most this share of the budget is cut off
    double stop_share = 0.02;     // room below this share of the budget is not worth another block
  };

 protected:
  struct Step {
    uint64_t used = 0;      // stream size (units) after the step; a lower bound when !complete
    size_t read = 0;        // input bytes the compressor took
    bool complete = false;  // the block was ended within the compressor's output space
  };

  // Starts a new stream.
  virtual void restart() = 0;
  // Compresses `in` and ends the current block.
  virtual Step step(std::span<const uint8_t> in) = 0;
  // Puts the compressor back at the boundary after `consumed` input bytes and `used` units.
  // The default restarts and replays the steps taken, which needs a deterministic step().
  virtual void rewind(std::span<const uint8_t> in, size_t consumed, uint64_t used);

  // Runs the steps for one fill. budget: the most units the stream may use before it is ended.
  Outcome run(std::span<const uint8_t> in, uint64_t budget, const Params& params);
  // A new input begins: its first fill guesses no ratio from the previous one.
  void forget_history() { history_ = 0; }

 private:
  struct Done {
    size_t size;    // input bytes of the step
    uint64_t used;  // stream size after it
  };

  std::vector<Done> steps_;
  double history_ = 0;  // input bytes per output unit of the previous fill of this input
};

}  // namespace erofs::compress::detail
