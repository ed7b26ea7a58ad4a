// Zstandard (algorithm 3): one frame per pcluster, content size in the header, no checksum,
// window at most 1 MiB. Each fill compresses candidate prefixes into one-shot frames
// (compress/prefix_search.h) and keeps the longest that fits.

// For the buffer-less decoder (ZSTD_decompressBegin/Continue), which libzstd.so exports.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "compress/internal.h"
#include "compress/prefix_search.h"
#include "compress/uninit_bytes.h"
#include "compress/zstd_sequences.h"

namespace erofs::compress::detail {

namespace {

constexpr uint8_t kMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};
constexpr unsigned kMinWindowLog = 10;
constexpr unsigned kMaxWindowLog = 20;

void check(size_t rc, const char* what) {
  if (ZSTD_isError(rc)) throw std::runtime_error(fmt::format("zstd: {}: {}", what, ZSTD_getErrorName(rc)));
}

constexpr unsigned kMinZstdWindowLog = 15;
// The first fill of an input expects this many times the pcluster's size of input to fit (text's
// usual ratio), later ones what the fill before took; each searches a quarter and a pcluster more.
constexpr size_t kFirstRatio = 4;
// Decoded bytes compared at a time when a frame is checked.
constexpr size_t kCheckPieceBytes = 128 << 10;

ZSTD_CCtx* make_cctx(int level, unsigned window_log) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (!cctx) throw std::bad_alloc();
  try {
    check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level), "level");
    check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, int(window_log)), "window");
    check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0), "checksum");
    check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1), "content size");
  } catch (...) {
    ZSTD_freeCCtx(cctx);
    throw;
  }
  return cctx;
}

class ZstdEncoder final : public Encoder {
 public:
  // The window spans input, not output: sixteen times the largest pcluster, within the 1 MiB the
  // kernel accepts. A pcluster of text holds several times its size of input, repetitive text
  // far more: at 64 KiB, 49 of the 255 pclusters of the 10^9-byte file's first 100 MB took more
  // than 512 KiB, and the 1 MiB window instead of eight times the pcluster made that image 0.1%
  // smaller (4 KiB pclusters: 0.15%; at 128 KiB a one-pcluster window cost 3%). At least
  // 32 KiB: a window of one small pcluster costs 16-20% in size.
  ZstdEncoder(int level, uint32_t max_pcluster_bytes)
      : window_log_(std::clamp<unsigned>(std::bit_width(std::max<uint32_t>(max_pcluster_bytes, 1) - 1) + 4,
                                         kMinZstdWindowLog, kMaxWindowLog)),
        cctx_(make_cctx(level, window_log_)),
        search_cctx_(make_cctx(level, window_log_)),
        coder_cctx_(make_cctx(level, window_log_)),
        dctx_(ZSTD_createDCtx()),
        sequences_(search_cctx_.get(), coder_cctx_.get(), level) {
    if (!dctx_) throw std::bad_alloc();
  }

  Algorithm algorithm() const override { return Algorithm::Zstd; }
  uint8_t zstd_window_log() const override { return uint8_t(window_log_ - kMinWindowLog); }
  void start_input() override { search_.forget_history(); }

  // Candidate prefixes come from one match search over a window of the input (see
  // compress/zstd_sequences.h), widened when a candidate runs past it. The frame kept is decoded
  // and compared with its input; should it differ (a library fault), the fill is done again
  // with each candidate compressed whole.
  FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    in = in.first(std::min(in.size(), kMaxDecodedBytes));
    if (in.empty() || out.empty()) return {};
    const size_t room = out.size();
    // What the prefix kept will likely hold: about what the fill before took.
    const size_t last = search_.last();
    const size_t expect = std::min(in.size(), last ? last : room * kFirstRatio);
    sequences_.search(in, std::min(in.size(), expect + expect / 4 + room), expect);
    FillResult r = search_.fill(in.size(), out, [&](size_t n, std::span<uint8_t> dst) -> size_t {
      const size_t window = sequences_.window();
      if (window && n > window && window < in.size())
        sequences_.search(in, std::min(in.size(), std::max(n + n / 4, 2 * window)), n);
      if (n <= sequences_.window())
        if (const size_t got = sequences_.compress(n, dst); got != SIZE_MAX) return got;
      return compress_whole(in, n, dst);
    });
    if (r.consumed && !decodes_to(out.first(r.produced), in.first(r.consumed)))
      r = search_.fill(in.size(), out,
                       [&](size_t n, std::span<uint8_t> dst) { return compress_whole(in, n, dst); });
    return r;
  }

 private:
  struct FreeCCtx {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  struct FreeDCtx {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };

  size_t compress_whole(std::span<const uint8_t> in, size_t n, std::span<uint8_t> dst) {
    const size_t got = ZSTD_compress2(cctx_.get(), dst.data(), dst.size(), in.data(), n);
    if (ZSTD_isError(got)) {
      if (ZSTD_getErrorCode(got) == ZSTD_error_dstSize_tooSmall) return 0;
      check(got, "compress");
    }
    return got;
  }

  // Decoded a piece at a time and compared as it comes: a pcluster of repetitive input holds
  // megabytes, which a whole decode would hold in memory on every worker.
  bool decodes_to(std::span<const uint8_t> frame, std::span<const uint8_t> input) {
    ZSTD_DCtx_reset(dctx_.get(), ZSTD_reset_session_only);
    check_.resize(kCheckPieceBytes);
    ZSTD_inBuffer src{frame.data(), frame.size(), 0};
    size_t done = 0;
    for (;;) {
      ZSTD_outBuffer dst{check_.data(), check_.size(), 0};
      const size_t read_before = src.pos;
      const size_t rc = ZSTD_decompressStream(dctx_.get(), &dst, &src);
      if (ZSTD_isError(rc) || dst.pos > input.size() - done ||
          std::memcmp(check_.data(), input.data() + done, dst.pos) != 0)
        return false;
      done += dst.pos;
      if (rc == 0) return done == input.size() && src.pos == src.size;
      if (dst.pos == 0 && src.pos == read_before) return false;  // truncated: no progress
    }
  }

  unsigned window_log_;
  std::unique_ptr<ZSTD_CCtx, FreeCCtx> cctx_, search_cctx_, coder_cctx_;
  std::unique_ptr<ZSTD_DCtx, FreeDCtx> dctx_;
  ZstdSequences sequences_;
  UninitBytes check_;
  // To the byte, or to a 4096th of the input: a slack of a 1024th of the pcluster left its
  // pclusters 0.05% emptier than mkfs.erofs 1.9.3's, which bisects to the byte, and the images of
  // the 10^9-byte file 0.01-0.1% larger; where text repeats, a few stream bytes hold kilobytes.
  PrefixSearch search_{{.min_slack = 1, .slack_share = SIZE_MAX, .close_share = 4096}};
};

// The window a frame asks for (RFC 8878, 3.1.1.1). The library's parser for this is not in its
// stable API, and the header layout is simple.
uint64_t frame_window(std::span<const uint8_t> in) {
  if (in.size() < 6 || std::memcmp(in.data(), kMagic, 4) != 0) throw_decode("zstd: not a zstd frame");
  const uint8_t descriptor = in[4];
  if (descriptor & 0x08) throw_decode("zstd: reserved bit set in the frame header");
  if (!(descriptor & 0x20)) {
    const unsigned exponent = in[5] >> 3, mantissa = in[5] & 7;
    const uint64_t base = uint64_t(1) << (10 + exponent);
    return base + base / 8 * mantissa;
  }
  // Single segment: the window is the content size, stored after the dictionary id.
  static constexpr size_t kDictIdBytes[4] = {0, 1, 2, 4}, kSizeBytes[4] = {1, 2, 4, 8};
  const size_t at = 5 + kDictIdBytes[descriptor & 3], n = kSizeBytes[descriptor >> 6];
  if (in.size() < at + n) throw_decode("zstd: truncated frame header");
  uint64_t size = 0;
  for (size_t i = 0; i < n; ++i) size |= uint64_t(in[at + i]) << (8 * i);
  return n == 2 ? size + 256 : size;
}

class ZstdDecoder final : public AlgDecoder {
 public:
  explicit ZstdDecoder(uint8_t window_log) : max_window_(size_t(1) << (window_log + kMinWindowLog)) {
    dctx_ = ZSTD_createDCtx();
    if (!dctx_) throw std::bad_alloc();
    // Bounds the streaming decoder's window buffer, which a hostile header could otherwise size.
    check(ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, int(window_log + kMinWindowLog)), "window");
  }
  ~ZstdDecoder() override { ZSTD_freeDCtx(dctx_); }

  void decode(std::span<const uint8_t> in, std::span<uint8_t> out, bool partial) override {
    // A frame wider than the image's window would fail in the kernel. windowLogMax alone does not
    // catch it: the one-shot paths (ours, and the streaming API's when `out` holds the whole
    // frame) never look at the window.
    const uint64_t window = frame_window(in);
    if (window > max_window_) throw_decode("zstd: frame window {} exceeds the image's {}", window, max_window_);
    if (partial) return decode_prefix(in, out);
    const size_t got = ZSTD_decompressDCtx(dctx_, out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(got)) throw_decode("zstd: {} (expected {} bytes)", ZSTD_getErrorName(got), out.size());
    if (got != out.size()) throw_short("zstd", got, out.size());
  }

 private:
  // The first out.size() bytes of a frame that may hold more. libzstd's streaming decoder is not
  // used here: it checks a frame against its declared content size only when its internal buffer
  // happens to be no larger, and that buffer grows with the frames decoded before, so a lying frame
  // decoded or failed depending on the decoder's history. The buffer-less decoder keeps none: each
  // block goes straight into `out` while a whole block (at most ZSTD_BLOCKSIZE_MAX) fits, the last
  // ones into `spill_`, which then holds them contiguously as their history.
  void decode_prefix(std::span<const uint8_t> in, std::span<uint8_t> out) {
    const size_t begun = ZSTD_decompressBegin(dctx_);
    if (ZSTD_isError(begun)) throw_decode("zstd: {}", ZSTD_getErrorName(begun));
    size_t read = 0, produced = 0, spilled = 0;
    while (produced < out.size()) {
      const size_t need = ZSTD_nextSrcSizeToDecompress(dctx_);
      if (need == 0 || need > in.size() - read) break;  // end of frame, or of the input
      const size_t room = out.size() - produced;
      const bool direct = spilled == 0 && room >= ZSTD_BLOCKSIZE_MAX;
      if (!direct) spill_.resize(2 * ZSTD_BLOCKSIZE_MAX);  // spilled < room < one block: a block fits
      uint8_t* dst = direct ? out.data() + produced : spill_.data() + spilled;
      const size_t got = ZSTD_decompressContinue(dctx_, dst, direct ? room : spill_.size() - spilled,
                                                 in.data() + read, need);
      if (ZSTD_isError(got)) throw_decode("zstd: {}", ZSTD_getErrorName(got));
      read += need;
      if (direct) {
        produced += got;
      } else {
        std::memcpy(out.data() + produced, dst, std::min(got, room));
        produced += std::min(got, room);
        spilled += got;
      }
    }
    if (produced != out.size()) throw_short("zstd", produced, out.size());
  }

  size_t max_window_;
  ZSTD_DCtx* dctx_ = nullptr;
  std::vector<uint8_t> spill_;
};

}  // namespace

std::unique_ptr<Encoder> make_zstd_encoder(int level, uint32_t max_pcluster_bytes) {
  return std::make_unique<ZstdEncoder>(level, max_pcluster_bytes);
}
std::unique_ptr<AlgDecoder> make_zstd_decoder(uint8_t window_log) {
  if (window_log > kMaxWindowLog - kMinWindowLog)
    throw_decode("zstd: window log {} in the image configuration exceeds 1 MiB", window_log);
  return std::make_unique<ZstdDecoder>(window_log);
}

}  // namespace erofs::compress::detail
