// LZ4 (algorithm 0): raw LZ4 blocks. liblz4 has a native fixed-output mode (destSize), so
// fill() is a single library call.
#include <lz4.h>
#include <lz4hc.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "compress/internal.h"

namespace erofs::compress::detail {

namespace {

class Lz4Encoder final : public Encoder {
 public:
  Lz4Encoder(bool hc, int level) : hc_(hc), level_(level) {
    if (hc_) {
      state_.resize(size_t(LZ4_sizeofStateHC()));
      LZ4_initStreamHC(state_.data(), state_.size());
    }
  }

  Algorithm algorithm() const override { return Algorithm::Lz4; }

  FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    int size = int(std::min({in.size(), kMaxDecodedBytes, size_t(LZ4_MAX_INPUT_SIZE)}));
    const int room = int(std::min(out.size(), size_t(INT_MAX)));
    if (size == 0 || room == 0) return {};
    const auto* src = reinterpret_cast<const char*>(in.data());
    auto* dst = reinterpret_cast<char*>(out.data());
    int produced;
    if (hc_) {
      // Each pcluster starts afresh without clearing the tables (LZ4_compress_HC_destSize clears
      // all 256 KiB of them per call, a twentieth of a -C4096 build's CPU): entries left by
      // earlier pclusters lie below the new start, are never matched, and the output is the same.
      auto* stream = reinterpret_cast<LZ4_streamHC_t*>(state_.data());
      LZ4_resetStreamHC_fast(stream, level_);
      produced = LZ4_compress_HC_continue_destSize(stream, src, dst, &size, room);
    } else {
      produced = LZ4_compress_destSize(src, dst, &size, room);
    }
    // Nothing consumed would leave a lone zero token, which 0PADDING cannot represent.
    if (produced <= 0 || size <= 0) return {};
    return {size_t(size), size_t(produced)};
  }

 private:
  bool hc_;
  int level_;
  std::vector<char> state_;  // LZ4HC's 256 KiB stream state, kept so each fill neither allocates nor clears it
};

}  // namespace

// liblz4 accepts a match offset of 0, which the format forbids: the match then copies bytes not
// yet written, so the output would keep whatever the buffer held. Walk the sequences that make the
// first `out_size` bytes. (Past them, zero padding may follow the stream.)
bool lz4_zero_offset_match(std::span<const uint8_t> in, size_t out_size) {
  size_t ip = 0, op = 0;
  auto length = [&](size_t nibble) {
    size_t n = nibble;
    if (nibble == 15)
      while (ip < in.size()) {
        const uint8_t b = in[ip++];
        n += b;
        if (b != 255) break;
      }
    return n;
  };
  while (ip < in.size() && op < out_size) {
    const uint8_t token = in[ip++];
    const size_t literals = length(token >> 4);
    if (literals >= in.size() - ip) return false;  // the last literals, or a truncated stream
    ip += literals;
    op += literals;
    if (op >= out_size || in.size() - ip < 2) return false;
    if (in[ip] == 0 && in[ip + 1] == 0) return true;
    ip += 2;
    op += length(token & 15) + 4;
  }
  return false;
}

namespace {

class Lz4Decoder final : public AlgDecoder {
 public:
  explicit Lz4Decoder(bool check_offsets) : check_offsets_(check_offsets) {}

  void decode(std::span<const uint8_t> in, std::span<uint8_t> out, bool partial) override {
    // The common case in one pass: a whole extent, decoded and checked together. Anything that
    // pass refuses goes the old way, so a damaged stream is judged and named as before.
    if (check_offsets_ && !partial && lz4_decode_strict(in, out) == long(out.size())) return;
    if (check_offsets_ && lz4_zero_offset_match(in, out.size())) throw_decode("lz4: corrupt stream (match offset 0)");
    const auto* src = reinterpret_cast<const char*>(in.data());
    auto* dst = reinterpret_cast<char*>(out.data());
    const int n = int(in.size()), m = int(out.size());
    const int got = partial ? LZ4_decompress_safe_partial(src, dst, n, m, m) : LZ4_decompress_safe(src, dst, n, m);
    if (got < 0) {
      if (partial) throw_decode("lz4: corrupt stream");
      throw_decode("lz4: corrupt stream or more than {} bytes of output", m);
    }
    if (got != m) throw_short("lz4", size_t(got), out.size());
  }

 private:
  bool check_offsets_;
};

}  // namespace

std::unique_ptr<Encoder> make_lz4_encoder(bool hc, int level) { return std::make_unique<Lz4Encoder>(hc, level); }
std::unique_ptr<AlgDecoder> make_lz4_decoder(bool check_offsets) {
  return std::make_unique<Lz4Decoder>(check_offsets);
}

}  // namespace erofs::compress::detail

namespace erofs::compress {

namespace {

bool probe_offset_zero_matches() {
  // Each block: literals, a match at offset 0, the last literals; `at` and `length` place the
  // match in the output. They take the three ways liblz4 1.9.4 copies a match: its fast loop (64
  // bytes or more of output left), its careful loop, and the careful loop's copy near the end.
  struct Probe {
    std::vector<uint8_t> block;
    size_t size, at, length;
  };
  auto make = [](size_t literals, size_t match, size_t last) {
    Probe p{{}, literals + match + last, literals, match};
    auto put_length = [&](size_t n) {  // the bytes after a nibble of 15
      for (n -= 15; n >= 255; n -= 255) p.block.push_back(255);
      p.block.push_back(uint8_t(n));
    };
    const size_t ml = match - 4;
    p.block.push_back(uint8_t((std::min<size_t>(literals, 15) << 4) | std::min<size_t>(ml, 15)));
    if (literals >= 15) put_length(literals);
    for (size_t i = 0; i < literals; ++i) p.block.push_back(uint8_t('a' + i % 26));
    p.block.insert(p.block.end(), {0, 0});  // the offset
    if (ml >= 15) put_length(ml);
    p.block.push_back(uint8_t(std::min<size_t>(last, 15) << 4));
    if (last >= 15) put_length(last);
    for (size_t i = 0; i < last; ++i) p.block.push_back(uint8_t('A' + i % 26));
    return p;
  };
  for (const Probe& p : {make(8, 40, 100), make(1, 4, 13), make(2, 20, 8)}) {
    for (const uint8_t dirt : {uint8_t(0xAA), uint8_t(0x55)}) {
      std::vector<uint8_t> out(p.size, dirt);
      const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(p.block.data()),
                                          reinterpret_cast<char*>(out.data()), int(p.block.size()), int(out.size()));
      if (got != int(p.size)) return false;
      if (!std::all_of(out.begin() + long(p.at), out.begin() + long(p.at + p.length), [](uint8_t b) { return b == 0; }))
        return false;
    }
  }
  return true;
}

}  // namespace

bool lz4_zeroes_offset_zero_matches() {
  static const bool zeroes = probe_offset_zero_matches();
  return zeroes;
}

}  // namespace erofs::compress
