// One interface for every EROFS compression algorithm: fixed-output encoding ("fill this
// pcluster with as much input as fits") and bounded decoding. Algorithms are picked by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace erofs::compress {

// Algorithm ids as stored on disk (superblock bitmap, map header).
enum class Algorithm : uint8_t { Lz4 = 0, Lzma = 1, Deflate = 2, Zstd = 3 };
inline constexpr unsigned kAlgorithmCount = 4;

// Format limits (Z_EROFS_PCLUSTER_MAX_SIZE / _MAX_DSIZE): fill() never consumes more than
// kMaxDecodedBytes, and decode() rejects larger inputs or outputs before touching them.
inline constexpr size_t kMaxPclusterBytes = 1u << 20;
inline constexpr size_t kMaxDecodedBytes = 12u << 20;

std::string_view algorithm_name(Algorithm alg);

// A parsed `-z` argument: "lz4", "lz4hc,12", "lz4hc,level=12", "lzma,9", "lzma,dictsize=1048576",
// "deflate,6", "zstd,15".
struct Spec {
  Algorithm algorithm = Algorithm::Lz4;
  std::string name;        // canonical: lz4, lz4hc, lzma, deflate, zstd
  int level = -1;          // -1: the algorithm's default
  uint32_t dict_size = 0;  // lzma only; 0: chosen from the pcluster size
};

class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Throws SpecError with a one-line message naming the bad part.
Spec parse_spec(std::string_view text);

// Raised by decoders on corrupt or hostile input. The message says what is wrong.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FillResult {
  size_t consumed = 0;  // input bytes represented by the output
  size_t produced = 0;  // output bytes written to the start of `out`
};

// Not thread-safe: one encoder per worker thread.
class Encoder {
 public:
  virtual ~Encoder() = default;
  virtual Algorithm algorithm() const = 0;

  // Encodes the longest prefix of `in` whose stream fits in `out` (the pcluster), writing it to the
  // start of `out`. The stream never begins with a zero byte (the reader strips leading zero padding).
  // consumed == 0 means nothing could be encoded.
  virtual FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) = 0;
  // The next fill starts a new input (a segment of a file): whatever earlier fills taught the
  // encoder (zstd's first guess of the ratio) is forgotten, so its streams depend on
  // this input alone, not on which inputs it compressed before, and an image does not depend on
  // which worker compressed which segment.
  virtual void start_input() {}

  // Parameters the superblock's configuration record needs.
  virtual uint32_t lzma_dict_size() const { return 0; }
  virtual uint8_t deflate_window_bits() const { return 15; }
  virtual uint8_t zstd_window_log() const { return 0; }  // log2(window) - 10
};

// max_pcluster_bytes bounds `out` for every later fill() call (used to size windows and dictionaries).
std::unique_ptr<Encoder> make_encoder(const Spec& spec, uint32_t max_pcluster_bytes);

// Per-image decoding parameters, from the superblock's configuration records.
struct DecoderConfig {
  uint32_t lzma_dict_size = 8u << 20;
  uint8_t deflate_window_bits = 15;
  uint8_t zstd_window_log = 10;
  // Refuse LZ4 streams with a match at offset 0, which the format forbids and liblz4 accepts: such
  // a match copies output bytes not yet written. A whole extent is decoded and checked in one pass
  // (compress/lz4_strict.cpp); a partial one, or a stream that pass refuses, is walked before
  // liblz4 decodes it, at 0.75 of a decode. Without the check, such a match reads zeros (see
  // Decoder::Unchecked), so the output still depends on the stream alone.
  bool check_lz4_offsets = true;
};

// Whether the linked liblz4, decoding a whole block (LZ4_decompress_safe), writes zeros for a
// match at offset 0 instead of leaving what the buffer held, as 1.9.4 does in each of its copy
// paths (its partial decode does not, near the end of its output). Found by decoding crafted
// blocks into dirty buffers once per process (a fact about the library linked, so every decoder
// and reader shares the answer): where it holds, an unchecked whole decode's output depends on
// the stream alone without zeroing the buffer first.
bool lz4_zeroes_offset_zero_matches();

// Not thread-safe: one decoder per thread; it keeps library contexts between calls.
class Decoder {
 public:
  explicit Decoder(DecoderConfig config = {});
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // How an LZ4 stream is kept from copying bytes of `out` it has not written, when its offsets go
  // unchecked (DecoderConfig::check_lz4_offsets): Zero zeroes `out` first, which costs less than
  // the walk for reused memory already in the CPU cache; Walk walks the stream and zeroes `out`
  // only if it holds a match at offset 0, which costs less for fresh memory; Zeroed promises that
  // `out` is zero already (reader::BufferPool::take_zeroed), so nothing is done.
  // Zero and Walk do nothing for a whole LZ4 block (not partial) when the linked liblz4 writes
  // zeros for such a match itself (lz4_zeroes_offset_zero_matches).
  enum class Unchecked { Zero, Walk, Zeroed };

  // Decodes `in` (leading zero padding already stripped) into exactly out.size() bytes.
  // partial: the stream may hold more output than out.size(); decoding stops early.
  // Otherwise the stream must produce exactly out.size() bytes. Throws DecodeError.
  void decode(Algorithm alg, std::span<const uint8_t> in, std::span<uint8_t> out, bool partial,
              Unchecked unchecked = Unchecked::Walk);
  // Judges `in` as decode() would, with the same errors, but leaves `scratch` (the extent's size)
  // holding anything: for a check of an image, where the bytes are not wanted (EROFS keeps no
  // checksum of them). An LZ4 stream held to the format's limits is judged by walking its
  // sequences (compress/lz4_strict.cpp), a fraction of a decode; anything else is decoded.
  void verify(Algorithm alg, std::span<const uint8_t> in, std::span<uint8_t> scratch, bool partial);

 private:
  struct State;
  DecoderConfig config_;
  std::unique_ptr<State> state_;
};

}  // namespace erofs::compress
