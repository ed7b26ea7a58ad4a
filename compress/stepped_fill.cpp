#include "compress/stepped_fill.h"

#include <algorithm>
#include <stdexcept>

namespace erofs::compress::detail {

namespace {

// Steps shorter than Params::max_step add blocks a plain compression would not have; past this
// many the gain is not worth it.
constexpr size_t kMaxShortSteps = 24;
// Overshoots per fill. A retry is sized from the failing data's own ratio and rarely fails again.
constexpr int kMaxRetries = 8;
// A step this small predicts the next one poorly; the fill's overall ratio is used instead.
constexpr size_t kMinSample = 512;

}  // namespace

SteppedFiller::Outcome SteppedFiller::run(std::span<const uint8_t> in, uint64_t budget, const Params& p) {
  restart();
  steps_.clear();
  Outcome o;
  const uint64_t stop = std::max<uint64_t>(8 * p.units_per_byte, uint64_t(double(budget) * p.stop_share));
  const uint64_t cut_below = uint64_t(double(budget) * p.cut_share);

  // Compression ratio in input bytes per output unit. Consecutive fills usually read
  // consecutive parts of one file, so the previous fill's ratio is the best first guess.
  double ratio = history_ > 0 ? history_ : 1.0 / p.units_per_byte;
  bool retry = false;
  int retries = 0;
  size_t short_steps = 0;
  while (o.consumed < in.size() && short_steps < kMaxShortSteps) {
    const uint64_t left = budget - o.used;
    if (!steps_.empty() && left < stop) break;
    const bool costly = !p.cheap_rewind && left > cut_below;
    const double aim = retry ? p.retry_aim : steps_.empty() ? p.first_aim : costly ? p.safe_aim : p.aim;
    const size_t most = std::min(in.size() - o.consumed, p.max_step);
    const double want = double(left) * ratio * aim;
    const size_t size = want >= double(most) ? most : std::max<size_t>(1, size_t(want));

    const Step s = step(in.subspan(o.consumed, size));
    const uint64_t grew = s.used > o.used ? s.used - o.used : 1;
    if (s.complete && s.used <= budget) {
      steps_.push_back({size, s.used});
      if (size < p.max_step) ++short_steps;
      o.consumed += size;
      o.used = s.used;
      ratio = size >= kMinSample ? double(size) / double(grew) : double(o.consumed) / double(o.used);
      retry = false;
      continue;
    }

    // Overshoot: the compressor now runs past `o.used`.
    o.at_boundary = false;
    ratio = std::min(ratio, double(std::max<size_t>(s.read, 1)) / double(grew));
    retry = true;
    if (++retries > kMaxRetries || (!steps_.empty() && left <= cut_below)) break;
    if (steps_.empty()) {
      restart();
    } else {
      rewind(in, o.consumed, o.used);
    }
    o.at_boundary = true;
  }
  if (o.consumed > 0) history_ = double(o.consumed) / double(o.used);
  return o;
}

void SteppedFiller::rewind(std::span<const uint8_t> in, size_t consumed, uint64_t used) {
  restart();
  size_t offset = 0;
  for (const Done& d : steps_) {
    const Step s = step(in.subspan(offset, d.size));
    // The stream up to here is already the cut-back point; a compressor that does not reproduce
    // it would corrupt the result.
    if (!s.complete || s.used != d.used) throw std::logic_error("stepped fill: replay diverged");
    offset += d.size;
  }
  if (offset != consumed || steps_.empty() || steps_.back().used != used)
    throw std::logic_error("stepped fill: replay ended elsewhere");
}

}  // namespace erofs::compress::detail
