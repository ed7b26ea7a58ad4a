// fuzz_roundtrip: compress::Encoder::fill on arbitrary data and pcluster sizes, checked by decoding.
//
// Input: byte 0 picks the encoder (lz4, lz4hc, lzma, deflate, zstd), byte 1 its level, bytes 2-3
// the pcluster size (1..65536 bytes, little-endian + 1); the rest is the data. fill() must keep its
// promises: consumed and produced within bounds, a stream that does not start with a zero byte, and
// a stream that decodes (with the parameters the encoder reports for the superblock) to exactly the
// consumed prefix, and partially to any shorter prefix.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "compress/codec.h"
#include "fuzz/check.h"

namespace {

namespace compress = erofs::compress;
using erofs::fuzz::violation;

struct Choice {
  const char* name;
  compress::Algorithm algorithm;
  int min_level, max_level;  // min > max: no level
};

// lzma stops at level 6: the higher presets only cost time here.
constexpr Choice kChoices[] = {
    {"lz4", compress::Algorithm::Lz4, 1, 0},       {"lz4hc", compress::Algorithm::Lz4, 1, 12},
    {"lzma", compress::Algorithm::Lzma, 0, 6},     {"deflate", compress::Algorithm::Deflate, 1, 9},
    {"zstd", compress::Algorithm::Zstd, 1, 19},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const Choice& c = kChoices[data[0] % std::size(kChoices)];
  compress::Spec spec;
  spec.algorithm = c.algorithm;
  spec.name = c.name;
  if (c.min_level <= c.max_level) spec.level = c.min_level + data[1] % (c.max_level - c.min_level + 1);
  const size_t pcluster = (size_t(data[2]) | size_t(data[3]) << 8) + 1;
  const std::span<const uint8_t> in(data + 4, size - 4);

  auto encoder = compress::make_encoder(spec, uint32_t(pcluster));
  std::vector<uint8_t> out(pcluster);
  const compress::FillResult r = encoder->fill(in, out);
  if (r.consumed == 0) return 0;
  if (r.consumed > in.size() || r.consumed > compress::kMaxDecodedBytes)
    violation("{}: consumed {} of {} input bytes", c.name, r.consumed, in.size());
  if (r.produced == 0 || r.produced > out.size())
    violation("{}: produced {} bytes into a pcluster of {}", c.name, r.produced, out.size());
  if (out[0] == 0) violation("{}: the stream starts with a zero byte", c.name);

  compress::DecoderConfig config;
  config.lzma_dict_size = encoder->lzma_dict_size() ? encoder->lzma_dict_size() : config.lzma_dict_size;
  config.deflate_window_bits = encoder->deflate_window_bits();
  config.zstd_window_log = encoder->zstd_window_log();
  compress::Decoder decoder(config);
  const std::span<const uint8_t> stream(out.data(), r.produced);

  std::vector<uint8_t> back(r.consumed);
  try {
    decoder.decode(c.algorithm, stream, back, false);
  } catch (const compress::DecodeError& e) {
    violation("{} level {}, pcluster {}: {} bytes in {} do not decode: {}", c.name, spec.level, pcluster, r.consumed,
              r.produced, e.what());
  }
  if (std::memcmp(back.data(), in.data(), r.consumed) != 0)
    violation("{} level {}, pcluster {}: {} bytes in {} decode to different data", c.name, spec.level, pcluster,
              r.consumed, r.produced);

  // A prefix, as the reader decodes the head of an extent that starts in the previous block.
  const size_t prefix = r.consumed / 2 + (in.size() % 7);
  if (prefix > 0 && prefix < r.consumed) {
    std::vector<uint8_t> head(prefix);
    try {
      decoder.decode(c.algorithm, stream, head, true);
    } catch (const compress::DecodeError& e) {
      violation("{}: partial decode of {} of {} bytes failed: {}", c.name, prefix, r.consumed, e.what());
    }
    if (std::memcmp(head.data(), in.data(), prefix) != 0)
      violation("{}: partial decode of {} of {} bytes gives different data", c.name, prefix, r.consumed);
  }
  return 0;
}
