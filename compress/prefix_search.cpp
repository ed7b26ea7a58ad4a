#include "compress/prefix_search.h"

#include <algorithm>
#include <cstring>

namespace erofs::compress::detail {
namespace {

// Input per output byte to start from when the input has no fill behind it: text's usual ratio.
constexpr double kFirstRatio = 3.0;
// Candidates this close in input bytes are not worth another compression, whatever the precision.
constexpr size_t kClose = 4;
constexpr int kMaxTries = 24;

}  // namespace

// Candidates are compressed into room for a quarter more than the pcluster, so one that does not
// fit still tells its size: the next candidate is interpolated between the longest prefix that
// fits and the shortest that does not (regula falsi), not halved: a zstd fill of the 10^9-byte
// file's text to the byte costs eight to nine compressions at 4 and 64 KiB pclusters, six when it
// may stop 4 or 64 bytes short (a bisection to the byte, as mkfs.erofs 1.9.3 does for zstd,
// eleven to fifteen).
// Where the stream's size is far from linear in the input (text that repeats, then does not),
// interpolation can creep towards one end of the bracket a few bytes a try, or point outside it;
// then the bracket is halved. Without that, zstd at 4 KiB pclusters ran out of tries on 1 fill in
// 25 of the 10^9-byte file, keeping a prefix far short of the pcluster (or none, and a plain
// block), and its image came out 1.2% larger than mkfs.erofs 1.9.3's.
FillResult PrefixSearch::fill(size_t n, std::span<uint8_t> out, const Compress& compress) {
  const size_t room = out.size();
  if (n == 0 || room == 0) return {};
  const size_t wide = room + room / 4 + 64;
  if (trial_.size() < wide) trial_.resize(wide);
  const size_t slack = std::max(precision_.min_slack, room / precision_.slack_share);
  size_t lo = 0, lo_size = 0;      // the longest prefix known to fit; its stream is in `out`
  size_t prev = 0, prev_size = 0;  // the one that fitted before it
  size_t hi = n + 1, hi_size = 0;  // the shortest known not to (hi_size 0: size unknown)
  int fitted = -1;                 // whether the last candidate fitted (-1: none tried yet)
  bool one_sided = false;          // the last two candidates landed on the same side
  // Consecutive pclusters of one input hold about as much input: start a little short of that.
  size_t m = last_ ? last_ - last_ / 16 : size_t(double(room) * kFirstRatio);
  for (int i = 0; i < kMaxTries && hi - lo > 1; ++i) {
    m = std::clamp(m, lo + 1, hi - 1);
    const size_t c = compress(m, std::span(trial_).first(wide));
    const bool fits = c > 0 && c <= room;
    one_sided = fitted == int(fits);
    fitted = fits;
    if (fits) {
      prev = lo;
      prev_size = lo_size;
      lo = m;
      lo_size = c;
      std::memcpy(out.data(), trial_.data(), c);
      if (m == n || room - c <= slack) break;
    } else {
      hi = m;
      hi_size = c;  // 0 when it did not fit even the wider room
    }
    if (lo > 0 && hi <= n && hi - lo <= std::max(kClose, lo / precision_.close_share)) break;
    // The next candidate: where the stream should reach the pcluster's end, a little short of it.
    // Near the end each input byte costs more than the average, so the slope comes from the two
    // nearest candidates, not from the origin.
    // (Worked out in doubles and brought into [0, n + 1] before converting: a flat slope sends
    // the estimate anywhere.)
    const double target = double(room) - std::max<double>(2, double(slack) / 2);
    double next;
    if (lo > 0 && hi_size > lo_size)
      next = double(lo) + (target - double(lo_size)) * double(hi - lo) / double(hi_size - lo_size);
    else if (lo > 0 && prev > 0 && lo_size > prev_size)
      next = double(lo) + (target - double(lo_size)) * double(lo - prev) / double(lo_size - prev_size) + 1;
    else if (lo > 0)
      next = double(lo) * target / double(lo_size) + 1;
    else
      next = hi_size ? double(hi) * target / double(hi_size) : double(hi * 7 / 10);
    if (hi <= n && (one_sided || !(next > double(lo) && next < double(hi)))) next = double(lo + (hi - lo) / 2);
    m = next <= 0 ? 0 : next >= double(n + 1) ? n + 1 : size_t(next);
  }
  last_ = lo;
  return {lo, lo_size};
}

}  // namespace erofs::compress::detail
