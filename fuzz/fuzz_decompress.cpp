// fuzz_decompress: compress::Decoder::decode for lz4, lzma, deflate and zstd on arbitrary streams
// with arbitrary declared sizes and the partial flag (input format: fuzz/decompress_input.h).
//
// Each record is decoded by one Decoder that is reused for all records of the input (as the
// reader's decoder pool reuses them) and by a fresh Decoder. Both must agree: both throw
// DecodeError, or both succeed with the same bytes, also when their output buffers were filled with
// different bytes before (0xAA, 0x55), so a success that leaves output bytes unwritten, or state
// carried over from an earlier stream, shows up as a difference. Sizes beyond the format's limits,
// empty streams and unknown algorithms must be refused. Any other exception or a sanitizer report
// is a crash.
//
// The one-pass LZ4 decoder behind checked decoding (compress/lz4_strict.cpp) is also held to
// liblz4 itself: whatever it accepts, LZ4_decompress_safe must accept with the same bytes; and the
// walk behind Decoder::verify must accept exactly the streams it decodes to the declared size.
#include <lz4.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include <sanitizer/asan_interface.h>

#include "compress/codec.h"
#include "compress/internal.h"
#include "fuzz/check.h"
#include "fuzz/decompress_input.h"

namespace {

namespace compress = erofs::compress;
using erofs::fuzz::violation;

// Output windows sit at the end of one large allocation, so an overflow runs into the heap's
// redzone, and the 64 KiB before a window are poisoned, so an underflow is caught too. Reusing the
// allocation keeps large declared sizes cheap (no page faults, no fill unless decoding succeeds).
class Buffer {
 public:
  static constexpr size_t kCapacity = size_t(1) << 24;  // the largest declared size + 1
  static constexpr size_t kGuard = 64u << 10;
  Buffer() : base_(new uint8_t[kCapacity]) {}
  std::span<uint8_t> window(size_t n) {
    ASAN_UNPOISON_MEMORY_REGION(guard_, guard_size_);
    uint8_t* start = base_.get() + kCapacity - n;
    guard_size_ = std::min<size_t>(kGuard, kCapacity - n);
    guard_ = start - guard_size_;
    ASAN_POISON_MEMORY_REGION(guard_, guard_size_);
    return {start, n};
  }

 private:
  std::unique_ptr<uint8_t[]> base_;
  uint8_t* guard_ = nullptr;
  size_t guard_size_ = 0;
};

// True when decode succeeded; DecodeError is the one expected failure.
bool decode(compress::Decoder& d, const erofs::fuzz::Record& r, std::span<uint8_t> out) {
  try {
    d.decode(compress::Algorithm(r.algorithm), r.stream, out, r.partial);
    return true;
  } catch (const compress::DecodeError&) {
    return false;
  }
}

// A stream the one-pass decoder accepts must decode to the same bytes with liblz4.
void check_strict_lz4(const erofs::fuzz::Record& r, std::span<uint8_t> out, std::span<uint8_t> oracle) {
  if (r.algorithm != uint8_t(compress::Algorithm::Lz4) || r.out_size > compress::kMaxDecodedBytes) return;
  const long n = compress::detail::lz4_decode_strict(r.stream, out);
  if (compress::detail::lz4_walk_strict(r.stream, out.size()) != (n == long(out.size())))
    violation("lz4 walk: {} where the one-pass decoder produced {} of {} bytes", n == long(out.size()) ? "refused" : "accepted",
              n, out.size());
  if (n < 0) return;
  if (size_t(n) > out.size()) violation("lz4 one-pass decoder: {} bytes produced into {}", n, out.size());
  const int want = LZ4_decompress_safe(reinterpret_cast<const char*>(r.stream.data()),
                                       reinterpret_cast<char*>(oracle.data()), int(r.stream.size()), int(out.size()));
  if (want != int(n))
    violation("lz4 one-pass decoder: {} bytes where liblz4 gives {} ({}-byte stream, {}-byte output)", n, want,
              r.stream.size(), out.size());
  if (std::memcmp(out.data(), oracle.data(), size_t(n)) != 0)
    violation("lz4 one-pass decoder: bytes differ from liblz4's ({}-byte stream)", r.stream.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto records = erofs::fuzz::parse_records({data, size});
  if (records.empty()) return 0;
  const compress::DecoderConfig config = erofs::fuzz::decoder_config(records.front().config);
  compress::Decoder reused(config);
  auto fresh = [&](const erofs::fuzz::Record& r, std::span<uint8_t> out) {
    compress::Decoder d(config);
    return decode(d, r, out);
  };
  static Buffer buffer_a, buffer_b;
  for (const auto& r : records) {
    const std::span<uint8_t> a = buffer_a.window(r.out_size), b = buffer_b.window(r.out_size);
    check_strict_lz4(r, a, b);
    const bool ok = decode(reused, r, a);
    if (ok != fresh(r, b))
      violation("algorithm {}: a reused decoder {} where a fresh one did not", r.algorithm,
                ok ? "succeeded" : "failed");
    if (!ok) continue;
    if (r.algorithm >= compress::kAlgorithmCount) violation("unknown algorithm {} accepted", r.algorithm);
    if (r.out_size > compress::kMaxDecodedBytes)
      violation("algorithm {}: output of {} bytes accepted, beyond the {} byte limit", r.algorithm, r.out_size,
                compress::kMaxDecodedBytes);
    if (r.stream.size() > compress::kMaxPclusterBytes || r.stream.empty())
      violation("algorithm {}: stream of {} bytes accepted", r.algorithm, r.stream.size());
    if (r.out_size == 0 && !r.partial) violation("algorithm {}: empty extent accepted", r.algorithm);

    // Most streams fail, so the fills (costly for multi-megabyte sizes) are left to the successes:
    // decode again over different fillings, which must not show through.
    std::memset(a.data(), 0xAA, a.size());
    std::memset(b.data(), 0x55, b.size());
    if (!decode(reused, r, a) || !fresh(r, b))
      violation("algorithm {}: a stream that decoded once fails the second time", r.algorithm);
    if (std::memcmp(a.data(), b.data(), r.out_size) != 0) {
      size_t at = 0;
      while (a[at] == b[at]) ++at;
      violation("algorithm {} ({} bytes, partial {}): outputs differ first at byte {} ({:#04x} vs {:#04x}): "
                "unwritten output or state kept between streams",
                r.algorithm, r.out_size, r.partial, at, a[at], b[at]);
    }
  }
  return 0;
}
