#include "compress/stepped_fill.h"

#include <algorithm>
#include <stdexcept>

#ifdef FILL_STATS
#include <cstdio>
#include <cmath>
#include <cstdlib>
static double env(const char* n, double d) { return getenv(n) ? atof(getenv(n)) : d; }
#define TUNE(name, value) static const double name = env(#name, value)
#else
#define TUNE(name, value) constexpr double name = value
#endif

namespace erofs::compress::detail {

#ifdef FILL_STATS
size_t g_steps, g_fail_steps, g_replays, g_replay_bytes, g_fail_bytes, g_fills;
#define STAT(x) x
#else
#define STAT(x)
#endif

namespace {

// Share of the room left that a step aims to fill. The next bytes may compress worse than the
// last ones (steps of a few KiB of text vary by +-40%), and an overshoot costs the step.
TUNE(kAim, 0.6);
// The first step relies on the previous fill's ratio.
TUNE(kFirstAim, 0.5);
// Where an overshoot would have to be replayed (no cheap rewind and much room left), aim lower.
TUNE(kSafeAim, 0.4);
// After an overshoot the failing data's own ratio is known, but only roughly.
TUNE(kRetryAim, 0.9);
// An overshoot with no more than budget/kCutDiv left is cut off rather than replayed.
TUNE(kCutDiv, 20);
// Room below budget/kStopDiv is not worth another block.
TUNE(kStopDiv, 100);
// Steps shorter than Params::max_step add blocks a plain compression would not have; past this
// many the gain is not worth it.
constexpr size_t kMaxShortSteps = 24;
// Overshoots per fill; each retry is sized from the failing data's own ratio and rarely fails again.
constexpr int kMaxRetries = 8;
// A step this small is too noisy to predict the next one; the fill's overall ratio is used instead.
constexpr size_t kMinSample = 512;

}  // namespace

SteppedFiller::Outcome SteppedFiller::run(std::span<const uint8_t> in, uint64_t budget, const Params& p) {
  restart();
  steps_.clear();
  Outcome o;
  const uint64_t stop = std::max<uint64_t>(8 * p.units_per_byte, uint64_t(double(budget) / kStopDiv));
  const uint64_t cut_above = p.cheap_rewind ? stop : uint64_t(double(budget) / kCutDiv);

  double ratio = history_ > 0 ? history_ : 1.0 / p.units_per_byte;  // input bytes per unit
  bool retry = false;
  int retries = 0;
  size_t short_steps = 0;
  while (o.consumed < in.size() && short_steps < kMaxShortSteps) {
    const uint64_t left = budget - o.used;
    if (!steps_.empty() && left < stop) break;
    const bool costly = !p.cheap_rewind && left > cut_above;  // an overshoot here means a replay
    const double aim = retry ? kRetryAim : steps_.empty() ? kFirstAim : costly ? kSafeAim : kAim;
    const size_t most = std::min(in.size() - o.consumed, p.max_step);
    const double want = double(left) * ratio * aim;
    const size_t size = want >= double(most) ? most : std::max<size_t>(1, size_t(want));

    const Step s = step(in.subspan(o.consumed, size));
    STAT(++g_steps);
    STAT(if (getenv("DBG")) fprintf(stderr, "S %zu %llu %zu %llu %d %.3f\n", steps_.size(), (unsigned long long)left, size, (unsigned long long)(s.used - o.used), int(s.complete && s.used <= budget), aim));
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

    // Overshoot: the stream now runs past `o.used`.
    STAT((++g_fail_steps, g_fail_bytes += s.read));
    o.at_boundary = false;
    ratio = std::min(ratio, double(s.read) / double(grew));
    retry = true;
    if (retries++ == kMaxRetries || (!steps_.empty() && left <= cut_above)) break;
    if (steps_.empty()) {
      restart();
    } else {
      STAT((++g_replays, g_replay_bytes += p.cheap_rewind ? 0 : o.consumed));
      rewind(in, o.consumed, o.used);
    }
    o.at_boundary = true;
  }
  STAT(++g_fills);
  STAT(static int hm = int(env("HM", 0)));
  if (o.consumed > 0) history_ = double(o.consumed) / double(o.used);
  STAT(if (hm == 1 && o.consumed > 0) history_ = std::min(history_, ratio));
  STAT(if (hm == 2 && o.consumed > 0) history_ = std::min(history_, std::sqrt(history_ * ratio)));
  STAT(if (hm == 3 && o.consumed > 0) history_ = ratio);
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
  if (offset != consumed) throw std::logic_error("stepped fill: replay ended elsewhere");
}

}  // namespace erofs::compress::detail
