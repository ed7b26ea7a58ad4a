#include "compress/zstd_sequences.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace erofs::compress::detail {

ZstdSequences::ZstdSequences(ZSTD_CCtx* search, ZSTD_CCtx* coder, int level)
    : search_(search), coder_(coder), level_(level) {
  // A refusal leaves the library's default: slower, or a frame that does not decode to its
  // input, which the caller's check catches.
  ZSTD_CCtx_setParameter(search_, ZSTD_c_useBlockSplitter, ZSTD_ps_disable);
  ZSTD_CCtx_setParameter(coder_, ZSTD_c_hashLog, ZSTD_HASHLOG_MIN);
  ZSTD_CCtx_setParameter(coder_, ZSTD_c_chainLog, ZSTD_CHAINLOG_MIN);
}

bool ZstdSequences::search(std::span<const uint8_t> in, size_t n, size_t expect) {
  window_ = 0;
  found_count_ = 0;
  in_ = in.data();
  // The library writes as many sequences as the input may hold without checking its room.
  const size_t bound = ZSTD_sequenceBound(n);
  if (bound > capacity_) {
    found_.reset(new ZSTD_Sequence[bound]);  // not zeroed: pages are touched only as written
    capacity_ = bound;
  }
  const ZSTD_compressionParameters p = ZSTD_getCParams(level_, expect, 0);
  const std::pair<ZSTD_cParameter, unsigned> searching[] = {
      {ZSTD_c_strategy, unsigned(p.strategy)}, {ZSTD_c_hashLog, p.hashLog},   {ZSTD_c_chainLog, p.chainLog},
      {ZSTD_c_searchLog, p.searchLog},          {ZSTD_c_minMatch, p.minMatch}, {ZSTD_c_targetLength, p.targetLength}};
  for (const auto& [param, value] : searching) ZSTD_CCtx_setParameter(search_, param, int(value));
  // The coder's strategy steers its entropy coding (literals compressed or not).
  ZSTD_CCtx_setParameter(coder_, ZSTD_c_strategy, int(p.strategy));
  ZSTD_CCtx_setParameter(coder_, ZSTD_c_targetLength, int(p.targetLength));
  const size_t count = ZSTD_generateSequences(search_, found_.get(), capacity_, in.data(), n);
  if (ZSTD_isError(count) || count > capacity_) return false;
  found_count_ = ZSTD_mergeBlockDelimiters(found_.get(), count);
  window_ = n;
  return true;
}

// The search's sequences up to byte n: those wholly before it and the one it falls in, its
// match cut short (kept while the format allows it). The bytes after them are literals.
void ZstdSequences::cut(size_t n) {
  prefix_.clear();
  size_t pos = 0;
  for (size_t i = 0; i < found_count_; ++i) {
    const ZSTD_Sequence& s = found_[i];
    if (pos + s.litLength >= n) break;
    const size_t match = std::min<size_t>(s.matchLength, n - pos - s.litLength);
    if (match < ZSTD_MINMATCH_MIN) break;
    ZSTD_Sequence kept = s;
    kept.matchLength = unsigned(match);
    prefix_.push_back(kept);
    pos += s.litLength + match;
  }
}

// libzstd 1.5.4 writes past the end of a destination that fills up within a block header of its
// end (its room left wraps around), so the frame goes to a buffer its input's bound cannot pass.
size_t ZstdSequences::compress(size_t n, std::span<uint8_t> dst) {
  cut(n);
  const size_t bound = ZSTD_compressBound(n);
  if (frame_.size() < bound) {
    frame_.clear();  // nothing in it is kept: growing would copy it, touching the old bytes again
    frame_.resize(bound);
  }
  const size_t got = ZSTD_compressSequences(coder_, frame_.data(), bound, prefix_.data(), prefix_.size(), in_, n);
  if (ZSTD_isError(got)) return SIZE_MAX;
  if (got > dst.size()) return 0;
  std::memcpy(dst.data(), frame_.data(), got);
  return got;
}

}  // namespace erofs::compress::detail
