// DEFLATE (algorithm 2): raw RFC 1951 streams with a 32 KiB window.
//
// Encoding is our own one-pass fixed-output encoder (compress/deflate_fill.h). Decoding uses
// libdeflate for whole extents (faster) and zlib when only a prefix is wanted (libdeflate cannot
// stop early).
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <new>
#include <stdexcept>

#include "compress/deflate_fill.h"
#include "compress/internal.h"

namespace erofs::compress::detail {

namespace {

constexpr int kWindowBits = 15;

class DeflateEncoder final : public Encoder {
 public:
  explicit DeflateEncoder(int level) : fill_(level) {}

  Algorithm algorithm() const override { return Algorithm::Deflate; }
  uint8_t deflate_window_bits() const override { return kWindowBits; }

  FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override { return fill_.fill(in, out); }

 private:
  DeflateFill fill_;
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
