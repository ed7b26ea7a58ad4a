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

namespace erofs::compress::detail {

namespace {

constexpr uint8_t kMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};
constexpr unsigned kMinWindowLog = 10;
constexpr unsigned kMaxWindowLog = 20;

void check(size_t rc, const char* what) {
  if (ZSTD_isError(rc)) throw std::runtime_error(fmt::format("zstd: {}: {}", what, ZSTD_getErrorName(rc)));
}

constexpr unsigned kMinZstdWindowLog = 15;

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
                                         kMinZstdWindowLog, kMaxWindowLog)) {
    cctx_ = ZSTD_createCCtx();
    if (!cctx_) throw std::bad_alloc();
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level), "level");
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, int(window_log_)), "window");
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 0), "checksum");
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_contentSizeFlag, 1), "content size");
  }
  ~ZstdEncoder() override { ZSTD_freeCCtx(cctx_); }

  Algorithm algorithm() const override { return Algorithm::Zstd; }
  uint8_t zstd_window_log() const override { return uint8_t(window_log_ - kMinWindowLog); }
  void start_input() override { search_.forget_history(); }

  FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    in = in.first(std::min(in.size(), kMaxDecodedBytes));
    return search_.fill(in.size(), out, [&](size_t n, std::span<uint8_t> dst) -> size_t {
      const size_t got = ZSTD_compress2(cctx_, dst.data(), dst.size(), in.data(), n);
      if (ZSTD_isError(got)) {
        if (ZSTD_getErrorCode(got) == ZSTD_error_dstSize_tooSmall) return 0;
        check(got, "compress");
      }
      return got;
    });
  }

 private:
  unsigned window_log_;
  ZSTD_CCtx* cctx_ = nullptr;
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
