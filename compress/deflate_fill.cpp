#include "compress/deflate_fill.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace erofs::compress::detail {
namespace {

struct LevelParams {
  unsigned depth;  // hash chain candidates tried per position
  uint32_t nice;   // a match this long is taken without looking further
  bool lazy;       // a match waits for the next position's, and gives way to a longer one
};
// Tuned on linux-6.1's fs/ (42 MB) at 4 and 64 KiB pclusters: level 9 comes to 16,838,656 and
// 15,601,664 bytes in 1.4 and 1.9 s on one core, against 16,830,464 and 15,581,184 in 5.2 and
// 3.0 s for libdeflate level 9 fitted by a prefix search.
constexpr std::array<LevelParams, 10> kLevels = {{{0, 0, false},
                                                  {4, 16, false},
                                                  {8, 32, false},
                                                  {16, 32, false},
                                                  {16, 32, true},
                                                  {24, 48, true},
                                                  {32, 64, true},
                                                  {48, 64, true},
                                                  {64, 96, true},
                                                  {128, 96, true}}};
// Pclusters this large search twice as deep, to the longest match DEFLATE has: on drivers/gpu and
// arch/arm (500 MB) at 128 KiB with tail packing, fragments and dedupe, 0.52% fewer bytes for a
// third more time; at 4 KiB, where a pcluster's input is too short for long chains, deeper
// searches gave 0.05% on fs/ for a third more time.
constexpr size_t kDeepSearchRoom = 16384;
const LevelParams& level_params(int level) {
  if (level < 1 || level > 9) throw std::logic_error("deflate: level out of range");
  return kLevels[size_t(level)];
}

// The lookahead of lazy evaluation searches less when the match in hand is already this long.
constexpr uint32_t kGoodMatch = 32;
// Symbols between two looks at whether the open block should end (compare the cost of the block
// with that of the block before the last chunk plus the chunk as a block of its own). On fs/ at
// 64 KiB: 2048 gave 0.26% less than one block a pcluster, 4096 0.21%, 8192 0.10%; on drivers/gpu
// and arch/arm, 1024 gave 0.16-0.25% less than 2048 at 4 to 128 KiB, for a tenth more time at 4.
constexpr uint32_t kChunk = 1024;
// The fewest symbols between two costings of the open block, near the pcluster's end.
constexpr uint32_t kMinStep = 32;

}  // namespace

DeflateFill::DeflateFill(int level)
    : depth_(level_params(level).depth), nice_(level_params(level).nice), lazy_(level_params(level).lazy) {}

namespace {
// How good a match is: four points a byte, less a point per bit of distance (a farther match
// costs more extra bits). Lazy evaluation gives a match up for a later one only when that one
// scores more than this many points higher; a match two positions on must also pay for the
// second literal. (On fs/ at 4 KiB: 2 gave 0.05% less than 0 or 3.)
int score(const DeflateMatch& m) { return int(m.len) * 4 - int(std::bit_width(m.dist)); }
constexpr int kLazyMargin = 2, kLiteralPoints = 4;
}  // namespace

// Lazy evaluation: a match found at pos_ is sent only if neither of the next two positions has
// a better one; otherwise pos_ goes as a literal (two, for the second position) and the better
// match is taken up by the calls that follow.
DeflateSymbol DeflateFill::next_symbol() {
  if (lit2_) {
    lit2_ = false;
    return {0, in_[pos_++]};
  }
  DeflateMatch cur = pending_valid_ ? pending_ : finder_.find(pos_);
  pending_valid_ = false;
  const uint32_t n = uint32_t(in_.size());
  if (cur.len == 0) return {0, in_[pos_++]};
  uint32_t recorded = pos_ + 1;  // positions the finder has seen
  if (lazy_ && cur.len < finder_.nice() && pos_ + 1 < n) {
    const unsigned depth = cur.len >= kGoodMatch ? std::max(1u, finder_.depth() / 4) : finder_.depth();
    const DeflateMatch next = finder_.find(pos_ + 1, depth);
    recorded = pos_ + 2;
    if (next.len && score(next) > score(cur) + kLazyMargin) {
      pending_ = next;
      pending_valid_ = true;
      return {0, in_[pos_++]};
    }
    if (cur.len > 3 && pos_ + 2 < n) {
      const DeflateMatch next2 = finder_.find(pos_ + 2, depth);
      recorded = pos_ + 3;
      if (next2.len && score(next2) > score(cur) + kLazyMargin + kLiteralPoints) {
        // Two literals, then next2: the next call sends the second.
        pending_ = next2;
        pending_valid_ = true;
        lit2_ = true;
        return {0, in_[pos_++]};
      }
    }
  }
  for (uint32_t p = recorded; p < pos_ + cur.len; ++p) finder_.skip(p);
  pos_ += cur.len;
  return {uint16_t(cur.len), uint16_t(cur.dist)};
}

// Parses the input into symbols until their stream would pass `budget` bits, then cuts the last
// block at the longest run of symbols that fits. Leaves blocks_ describing the stream; returns
// the input bytes it holds.
//
// The open block is costed exactly at intervals that shrink as the budget fills (three quarters
// of the room left, at the symbols' average cost so far), so a pcluster costs about ten code
// constructions; when one overshoots, a bisection between the last costing that fitted and it
// finds the cut.
uint64_t DeflateFill::fill_symbols(uint64_t budget) {
  const uint32_t n = uint32_t(in_.size());
  uint64_t closed_bits = 0;
  uint32_t open_first = 0;
  DeflateCounts open;
  // The longest run known to fit: fit_syms symbols ending at input fit_pos, fit_bits in all.
  uint32_t fit_syms = 0, fit_pos = 0;
  uint64_t fit_bits = 0;
  DeflateCounts fit_counts;
  // The open block as it was at the last chunk boundary, and the symbols since.
  uint32_t part_end = 0;
  uint64_t part_bits = 0;
  DeflateCounts part_counts, chunk;
  uint32_t next_check = uint32_t(std::max<uint64_t>(kMinStep, budget / 16)), next_chunk = kChunk;
  bool over = false;
  while (pos_ < n) {
    const DeflateSymbol s = next_symbol();
    symbols_.push_back(s);
    open.add(s);
    chunk.add(s);
    const uint32_t count = uint32_t(symbols_.size());
    if (count < next_check && count < next_chunk && pos_ < n) continue;
    uint64_t open_bits = deflate_block_bits(open);
    if (closed_bits + open_bits > budget) {
      over = true;
      break;
    }
    if (count >= next_chunk) {
      if (part_end > open_first) {
        const uint64_t chunk_bits = deflate_block_bits(chunk);
        if (part_bits + chunk_bits < open_bits) {
          blocks_.push_back({open_first, part_end, part_counts});
          closed_bits += part_bits;
          open_first = part_end;
          open = chunk;
          open_bits = chunk_bits;
        }
      }
      part_end = count;
      part_bits = open_bits;
      part_counts = open;
      chunk = DeflateCounts{};
      next_chunk = count + kChunk;
    }
    fit_syms = count;
    fit_pos = pos_;
    fit_bits = closed_bits + open_bits;
    fit_counts = open;
    const double per_symbol = double(fit_bits) / count;
    next_check = count + std::max(kMinStep, uint32_t(double(budget - fit_bits) / per_symbol * 0.75));
  }
  if (over) {
    // A block's size is not strictly monotone in its symbols (one more symbol can reshape the
    // codes and shorten the header), so this finds a run that fits, near the longest, not
    // always the longest.
    uint32_t lo = fit_syms, hi = uint32_t(symbols_.size());
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      DeflateCounts c = fit_counts;
      for (uint32_t i = lo; i < mid; ++i) c.add(symbols_[i]);
      if (closed_bits + deflate_block_bits(c) <= budget) {
        for (uint32_t i = lo; i < mid; ++i) fit_pos += symbols_[i].len ? symbols_[i].len : 1;
        lo = mid;
        fit_counts = c;
      } else {
        hi = mid;
      }
    }
    fit_syms = lo;
  }
  if (fit_syms > open_first) blocks_.push_back({open_first, fit_syms, fit_counts});
  return fit_syms ? fit_pos : 0;
}

FillResult DeflateFill::fill(std::span<const uint8_t> in, std::span<uint8_t> out) {
  in_ = in.first(std::min(in.size(), kMaxDecodedBytes));
  if (in_.empty() || out.empty()) return {};
  pos_ = 0;
  pending_valid_ = false;
  lit2_ = false;
  symbols_.clear();
  blocks_.clear();
  const bool deep = out.size() >= kDeepSearchRoom;
  finder_.reset(in_, deep ? depth_ * 2 : depth_, deep ? DeflateMatchFinder::kMaxMatch : nice_);
  const size_t coded = fill_symbols(uint64_t(out.size()) * 8);
  const size_t stored = deflate_stored_capacity(out.size(), in_.size());
  DeflateBitWriter w(out);
  if (stored > coded) {
    deflate_write_stored(w, in_.first(stored));
    const size_t produced = w.finish();
    // A leading non-final stored block starts with a zero byte, which 0PADDING would strip.
    // Bits 3-7 of that byte are padding up to the stored length, so bit 3 is free to set.
    if (out[0] == 0) out[0] = 0x08;
    return {stored, produced};
  }
  if (coded == 0) return {};
  for (size_t i = 0; i < blocks_.size(); ++i) {
    DeflateBlockCode code;
    deflate_block_bits(blocks_[i].counts, &code);
    deflate_write_block(w, code, i + 1 == blocks_.size(),
                        std::span(symbols_).subspan(blocks_[i].first, blocks_[i].end - blocks_[i].first));
  }
  return {coded, w.finish()};
}

}  // namespace erofs::compress::detail
