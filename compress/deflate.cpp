// DEFLATE (algorithm 2): raw RFC 1951 streams with a 32 KiB window.
//
// Encoding uses zlib because it can end a block on demand (Z_BLOCK) and continue with the same
// window, which SteppedFiller needs; libdeflate only compresses whole buffers. Decoding uses
// libdeflate for whole extents (faster) and zlib when only a prefix is wanted.
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "compress/internal.h"
#include "compress/stepped_fill.h"

namespace erofs::compress::detail {

namespace {

constexpr int kWindowBits = 15;
// An empty final block with fixed codes: BFINAL=1, BTYPE=01, end-of-block code 0000000.
constexpr unsigned kEndBits = 10;

// zlib spends ~2% of a 4 KiB fill building each extra block's trees, so steps stay few; a rewind
// costs ~18 instructions per byte of window, so overshoots are rewound unless little room is left.
constexpr SteppedFiller::Params kFillParams{
    .units_per_byte = 8, .cheap_rewind = true, .first_aim = 0.5, .aim = 0.6, .cut_share = 0.05, .stop_share = 0.02};

class DeflateEncoder final : public Encoder, SteppedFiller {
 public:
  explicit DeflateEncoder(int level) {
    if (deflateInit2(&zs_, level, Z_DEFLATED, -kWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::bad_alloc();
  }
  ~DeflateEncoder() override { deflateEnd(&zs_); }

  Algorithm algorithm() const override { return Algorithm::Deflate; }
  uint8_t deflate_window_bits() const override { return kWindowBits; }
  void start_input() override { forget_history(); }

  FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    in = in.first(std::min(in.size(), kMaxDecodedBytes));
    if (in.empty() || out.size() < 4) return {};
    // Room past the pcluster lets an overshooting step finish, so its real ratio is known.
    cap_ = out.size() + out.size() / 4 + 64;
    if (buf_.size() < cap_) buf_.resize(cap_);

    const Outcome o = run(in, uint64_t(out.size()) * 8 - kEndBits, kFillParams);
    if (o.consumed == 0) return {};
    const size_t n = o.at_boundary ? finish() : cut_back(o.used);
    std::memcpy(out.data(), buf_.data(), n);
    // A leading non-final stored block starts with a zero byte, which 0PADDING would strip.
    // Bits 3-7 of that byte are padding up to the stored length, so bit 3 is free to set.
    if (out[0] == 0) out[0] = 0x08;
    return {o.consumed, n};
  }

 private:
  void restart() override {
    deflateReset(&zs_);
    base_ = 0;
    zs_.next_out = buf_.data();
    zs_.avail_out = static_cast<uInt>(cap_);
  }

  // A DEFLATE stream is only a run of blocks, so a fresh zlib stream can carry on at any block
  // boundary: give it the last 32 KiB of input as its window and the boundary's partial byte as
  // leading bits. Far cheaper than compressing everything again.
  void rewind(std::span<const uint8_t> in, size_t consumed, uint64_t used) override {
    flush_through((used + 7) / 8);
    const uint8_t partial = buf_[used / 8];
    deflateReset(&zs_);
    const size_t window = std::min<size_t>(consumed, size_t(1) << kWindowBits);
    if (deflateSetDictionary(&zs_, in.data() + consumed - window, static_cast<uInt>(window)) != Z_OK ||
        (used % 8 && deflatePrime(&zs_, int(used % 8), partial & ((1 << (used % 8)) - 1)) != Z_OK))
      throw std::logic_error("deflate: zlib refused to resume at a block boundary");
    base_ = used / 8;
    zs_.next_out = buf_.data() + base_;
    zs_.avail_out = static_cast<uInt>(cap_ - base_);
  }

  Step step(std::span<const uint8_t> in) override {
    zs_.next_in = const_cast<Bytef*>(in.data());
    zs_.avail_in = static_cast<uInt>(in.size());
    const int rc = deflate(&zs_, Z_BLOCK);
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw std::logic_error("deflate: zlib rejected a step");
    unsigned pending = 0;
    int bits = 0;
    deflatePending(&zs_, &pending, &bits);
    Step s;
    s.used = (uint64_t(base_) + zs_.total_out + pending) * 8 + unsigned(bits);
    s.read = in.size() - zs_.avail_in;
    // With output space left over, zlib has taken all input and ended the block.
    s.complete = zs_.avail_out > 0 && zs_.avail_in == 0;
    zs_.avail_in = 0;
    return s;
  }

  // The stream ends right after the last step: let zlib write its held-back bits and an
  // empty final block (the budget kept kEndBits for it).
  size_t finish() {
    if (deflate(&zs_, Z_FINISH) != Z_STREAM_END) throw std::logic_error("deflate: no room to finish");
    return base_ + zs_.total_out;
  }

  // Makes sure the first `keep` bytes are in buf_ after an overshoot: zlib may still hold the
  // last bits before the boundary, and finishing (the stream is abandoned anyway) writes them.
  void flush_through(size_t keep) {
    if (base_ + zs_.total_out < keep && zs_.avail_out > 0) deflate(&zs_, Z_FINISH);
    if (base_ + zs_.total_out < keep) throw std::logic_error("deflate: cut-back point not written");
  }

  // The last step overshot: keep the stream up to bit `used` and end it there by hand.
  size_t cut_back(uint64_t used) {
    flush_through((used + 7) / 8);
    uint8_t* p = buf_.data();
    if (used % 8) p[used / 8] &= uint8_t((1u << (used % 8)) - 1);
    uint64_t pos = used;
    auto put = [&](unsigned value, unsigned count) {
      for (unsigned i = 0; i < count; ++i, ++pos) {
        if (pos % 8 == 0) p[pos / 8] = 0;
        p[pos / 8] |= uint8_t(((value >> i) & 1) << (pos % 8));
      }
    };
    put(0b011, 3);  // BFINAL=1, BTYPE=01 (fixed codes), least significant bit first
    put(0, 7);      // end of block
    return (pos + 7) / 8;
  }

  z_stream zs_{};
  std::vector<uint8_t> buf_;
  size_t cap_ = 0;
  size_t base_ = 0;  // where the current zlib stream's output starts in buf_
};

class DeflateDecoder final : public AlgDecoder {
 public:
  DeflateDecoder() {
    whole_ = libdeflate_alloc_decompressor();
    if (!whole_) throw std::bad_alloc();
    // The window is always 32 KiB: a smaller one in the configuration only promises that the
    // stream needs no more.
    if (inflateInit2(&zs_, -kWindowBits) != Z_OK) {
      libdeflate_free_decompressor(whole_);
      throw std::bad_alloc();
    }
  }
  ~DeflateDecoder() override {
    libdeflate_free_decompressor(whole_);
    inflateEnd(&zs_);
  }

  void decode(std::span<const uint8_t> in, std::span<uint8_t> out, bool partial) override {
    if (partial) return decode_prefix(in, out);
    size_t got = 0;
    switch (libdeflate_deflate_decompress(whole_, in.data(), in.size(), out.data(), out.size(), &got)) {
      case LIBDEFLATE_SUCCESS:
        if (got != out.size()) throw_short("deflate", got, out.size());
        return;
      case LIBDEFLATE_INSUFFICIENT_SPACE:
        throw_decode("deflate: stream decodes to more than {} bytes", out.size());
      default:
        throw_decode("deflate: corrupt stream");
    }
  }

 private:
  // libdeflate cannot stop early, so a prefix goes through zlib, which stops when `out` is full.
  void decode_prefix(std::span<const uint8_t> in, std::span<uint8_t> out) {
    inflateReset(&zs_);
    zs_.next_in = const_cast<Bytef*>(in.data());
    zs_.avail_in = static_cast<uInt>(in.size());
    zs_.next_out = out.data();
    zs_.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&zs_, Z_SYNC_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
      throw_decode("deflate: corrupt stream ({})", zs_.msg ? zs_.msg : "zlib error");
    if (zs_.total_out != out.size()) throw_short("deflate", zs_.total_out, out.size());
  }

  libdeflate_decompressor* whole_ = nullptr;
  z_stream zs_{};
};

}  // namespace

std::unique_ptr<Encoder> make_deflate_encoder(int level) { return std::make_unique<DeflateEncoder>(level); }
std::unique_ptr<AlgDecoder> make_deflate_decoder() { return std::make_unique<DeflateDecoder>(); }

}  // namespace erofs::compress::detail
