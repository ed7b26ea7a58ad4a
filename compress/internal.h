// Private glue between codec.cpp and the per-algorithm files. Not part of the layer's interface.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <span>
#include <string_view>

#include "compress/codec.h"

namespace erofs::compress::detail {

// One algorithm's decoder with its library context, created on first use by a Decoder.
// The caller has already checked the size limits, that `in` is not empty and that `out` is not empty.
class AlgDecoder {
 public:
  virtual ~AlgDecoder() = default;
  virtual void decode(std::span<const uint8_t> in, std::span<uint8_t> out, bool partial) = 0;
};

// Levels are already validated (parse_spec or make_encoder); -1 never reaches these.
std::unique_ptr<Encoder> make_lz4_encoder(bool hc, int level);
std::unique_ptr<Encoder> make_lzma_encoder(int level, uint32_t dict_size);
std::unique_ptr<Encoder> make_deflate_encoder(int level);
std::unique_ptr<Encoder> make_zstd_encoder(int level, uint32_t max_pcluster_bytes);

std::unique_ptr<AlgDecoder> make_lz4_decoder(bool check_offsets);
// Whether the LZ4 sequences making the first `out_size` bytes of `in` hold a match at offset 0.
bool lz4_zero_offset_match(std::span<const uint8_t> in, size_t out_size);
// Decodes a whole LZ4 block held to the format's limits into `out` (compress/lz4_strict.cpp): the
// bytes produced, or -1 for a stream outside them or with a match at offset 0. What it produces,
// LZ4_decompress_safe would have produced too.
long lz4_decode_strict(std::span<const uint8_t> in, std::span<uint8_t> out);
// Whether lz4_decode_strict would produce exactly `out_size` bytes from `in`, found without
// writing them.
bool lz4_walk_strict(std::span<const uint8_t> in, size_t out_size);
std::unique_ptr<AlgDecoder> make_lzma_decoder(uint32_t dict_size);
std::unique_ptr<AlgDecoder> make_deflate_decoder();
std::unique_ptr<AlgDecoder> make_zstd_decoder(uint8_t window_log);

// Shared wording for "the stream did not give the expected amount of output".
[[noreturn]] inline void throw_short(std::string_view alg, size_t got, size_t want) {
  throw DecodeError(fmt::format("{}: decoded {} bytes, expected {}", alg, got, want));
}

template <typename... Args>
[[noreturn]] void throw_decode(fmt::format_string<Args...> f, Args&&... args) {
  throw DecodeError(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace erofs::compress::detail
