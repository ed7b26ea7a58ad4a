// Zstandard (algorithm 3): one frame per pcluster, content size in the header, no checksum,
// window at most 1 MiB.
//
// Encoding streams with ZSTD_e_flush (which ends a block) under SteppedFiller. The consumed size is
// only known at the end, so zstd's frame header (written without a size) is replaced by one that
// carries it, and the last kept block gets its Last_Block bit by hand.

// For ZSTD_c_stableInBuffer and ZSTD_c_srcSizeHint (experimental parameters, plain enum values).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "compress/internal.h"
#include "compress/stepped_fill.h"

namespace erofs::compress::detail {

namespace {

constexpr uint8_t kMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};
// zstd's own header when the size is unknown: magic, descriptor 0 (no size, no checksum,
// no dictionary, not single-segment), window descriptor.
constexpr size_t kPlainHeader = 6;
// The replacement adds a frame content size field of at most 4 bytes (extents are <= 12 MiB).
constexpr size_t kMaxSizeField = 4;
constexpr unsigned kMinWindowLog = 10;
constexpr unsigned kMaxWindowLog = 20;

// Steps are at most one block (set per encoder): zstd ends a block there anyway, so full steps
// cost nothing extra, while each shorter one costs ~7% of a 4 KiB fill. Going back means replaying
// the whole frame, so where an overshoot would waste more than 10% of the pcluster, steps aim low.
constexpr SteppedFiller::Params kFillParams{
    .units_per_byte = 1, .first_aim = 0.6, .aim = 0.7, .safe_aim = 0.5, .cut_share = 0.1, .stop_share = 0.02};

void check(size_t rc, const char* what) {
  if (ZSTD_isError(rc)) throw std::runtime_error(fmt::format("zstd: {}: {}", what, ZSTD_getErrorName(rc)));
}

constexpr unsigned kMinZstdWindowLog = 15;

class ZstdEncoder final : public Encoder, SteppedFiller {
 public:
  // The window spans input, not output: eight times the largest pcluster covers the input a
  // pcluster of text holds (at 128 KiB pclusters a one-pcluster window cost 3%), within the 1 MiB
  // the kernel accepts. At least 32 KiB: a window of one small pcluster costs 16-20% in size.
  ZstdEncoder(int level, uint32_t max_pcluster_bytes)
      : window_log_(std::clamp<unsigned>(std::bit_width(std::max<uint32_t>(max_pcluster_bytes, 1) - 1) + 3,
                                         kMinZstdWindowLog, kMaxWindowLog)) {
    cctx_ = ZSTD_createCCtx();
    if (!cctx_) throw std::bad_alloc();
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level), "level");
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, int(window_log_)), "window");
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 0), "checksum");
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_stableInBuffer, 1), "stable input");
    // The size is unknown until the end; without a hint zstd would size its tables for a large
    // input. A smaller hint than the window would also shrink the window the frame declares.
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_srcSizeHint, 1 << window_log_), "size hint");
  }
  ~ZstdEncoder() override { ZSTD_freeCCtx(cctx_); }

  Algorithm algorithm() const override { return Algorithm::Zstd; }
  uint8_t zstd_window_log() const override { return uint8_t(window_log_ - kMinWindowLog); }
  void start_input() override { forget_history(); }

  FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    in = in.first(std::min(in.size(), kMaxDecodedBytes));
    if (in.empty() || out.size() < 16) return {};
    // Room past the pcluster lets an overshooting step finish, so its real ratio is known.
    cap_ = out.size() + out.size() / 4 + 64;
    if (buf_.size() < cap_) buf_.resize(cap_);

    fill_in_ = in;
    Params params = kFillParams;
    params.max_step = std::min<size_t>(ZSTD_BLOCKSIZE_MAX, size_t(1) << window_log_);
    const Outcome o = run(in, out.size() - kMaxSizeField, params);
    if (o.consumed == 0) return {};
    return {o.consumed, assemble(o, out)};
  }

 private:
  void restart() override {
    check(ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_only), "reset");
    pos_ = 0;
  }

  Step step(std::span<const uint8_t> in) override {
    // With a stable input buffer zstd matches straight from the caller's input (no copy into a
    // ring buffer, whose wrap-around would push it onto its slower split-window search).
    const size_t offset = size_t(in.data() - fill_in_.data());
    ZSTD_inBuffer src{fill_in_.data(), offset + in.size(), offset};
    ZSTD_outBuffer dst{buf_.data(), cap_, pos_};
    Step s;
    for (;;) {
      const size_t left = ZSTD_compressStream2(cctx_, &dst, &src, ZSTD_e_flush);
      check(left, "compress");
      if (left == 0) {
        s.complete = true;
        break;
      }
      if (dst.pos == dst.size) break;
    }
    pos_ = dst.pos;
    s.used = pos_;
    s.read = src.pos - offset;
    return s;
  }

  // Writes the final frame to `out`: a header with the content size, then the blocks up to
  // `o.used` with the last one marked as such.
  size_t assemble(const Outcome& o, std::span<uint8_t> out) {
    const uint8_t* p = buf_.data();
    if (o.used <= kPlainHeader || std::memcmp(p, kMagic, 4) != 0 || p[4] != 0)
      throw std::logic_error("zstd: unexpected frame header");
    size_t last = kPlainHeader;
    for (size_t at = kPlainHeader;;) {
      const uint32_t h = p[at] | uint32_t(p[at + 1]) << 8 | uint32_t(p[at + 2]) << 16;
      const size_t body = ((h >> 1) & 3) == 1 ? 1 : h >> 3;  // an RLE block stores one byte
      last = at;
      at += 3 + body;
      if (at == o.used) break;
      if (at > o.used) throw std::logic_error("zstd: block walk missed the cut-back point");
    }
    buf_[last] |= 1;

    uint8_t header[kPlainHeader + kMaxSizeField];
    std::memcpy(header, p, kPlainHeader);
    size_t n = kPlainHeader;
    const uint64_t size = o.consumed;
    // Frame_Content_Size_flag 1 stores size - 256 in 2 bytes; flag 2 stores 4 bytes.
    if (size >= 256 && size < 256 + 65536) {
      header[4] = 1 << 6;
      const uint64_t v = size - 256;
      for (int i = 0; i < 2; ++i) header[n++] = uint8_t(v >> (8 * i));
    } else {
      header[4] = 2 << 6;
      for (int i = 0; i < 4; ++i) header[n++] = uint8_t(size >> (8 * i));
    }
    const size_t blocks = o.used - kPlainHeader;
    std::memcpy(out.data(), header, n);
    std::memcpy(out.data() + n, p + kPlainHeader, blocks);
    return n + blocks;
  }

  unsigned window_log_;
  ZSTD_CCtx* cctx_ = nullptr;
  std::span<const uint8_t> fill_in_;  // the current fill's input, which steps are parts of
  std::vector<uint8_t> buf_;
  size_t cap_ = 0;
  size_t pos_ = 0;
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
  void decode_prefix(std::span<const uint8_t> in, std::span<uint8_t> out) {
    ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_only);
    ZSTD_inBuffer src{in.data(), in.size(), 0};
    ZSTD_outBuffer dst{out.data(), out.size(), 0};
    while (dst.pos < dst.size) {
      const size_t before_in = src.pos, before_out = dst.pos;
      const size_t rc = ZSTD_decompressStream(dctx_, &dst, &src);
      if (ZSTD_isError(rc)) throw_decode("zstd: {}", ZSTD_getErrorName(rc));
      if (rc == 0) break;  // end of frame
      if (src.pos == before_in && dst.pos == before_out) break;  // input exhausted
    }
    if (dst.pos != out.size()) throw_short("zstd", dst.pos, out.size());
  }

  size_t max_window_;
  ZSTD_DCtx* dctx_ = nullptr;
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
