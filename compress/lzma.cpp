// LZMA (algorithm 1): MicroLZMA streams. liblzma's MicroLZMA encoder is fixed-output by design
// (it encodes as much input as fits in avail_out), so fill() is one lzma_code() call.
#include <lzma.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "compress/internal.h"

namespace erofs::compress::detail {

namespace {

// The MicroLZMA encoder cannot end a stream in less.
constexpr size_t kMinOutput = 6;
// The format's limit for the configuration record's dictionary size.
constexpr uint32_t kMaxDict = 8u << 20;

// The encoder's match finder reaches at random over tables several times the dictionary (about
// 45 MiB at the 4 MiB default): backed by huge pages they cost fewer TLB misses, which made
// builds about 3% faster (150 MB of the benchmark's file, -C1048576 -Eall-fragments). The
// machine's default (transparent huge pages only where asked for) would give them none.
constexpr size_t kHugePage = 2u << 20;

void* encoder_alloc(void*, size_t nmemb, size_t size) {
  if (size && nmemb > SIZE_MAX / size) return nullptr;
  const size_t n = nmemb * size;
  if (n < kHugePage) return std::malloc(n);
  const size_t rounded = (n + kHugePage - 1) / kHugePage * kHugePage;
  if (rounded < n) return nullptr;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p) madvise(p, rounded, MADV_HUGEPAGE);  // a hint: without it the memory works the same
  return p;
}

void encoder_free(void*, void* p) { std::free(p); }

constexpr lzma_allocator kEncoderAllocator{encoder_alloc, encoder_free, nullptr};

class LzmaEncoder final : public Encoder {
 public:
  LzmaEncoder(int level, uint32_t dict_size) {
    if (lzma_lzma_preset(&options_, uint32_t(level))) throw std::invalid_argument("lzma: bad preset");
    options_.dict_size = dict_size;
    strm_.allocator = &kEncoderAllocator;
  }
  ~LzmaEncoder() override { lzma_end(&strm_); }

  Algorithm algorithm() const override { return Algorithm::Lzma; }
  uint32_t lzma_dict_size() const override { return options_.dict_size; }

  FillResult fill(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    in = in.first(std::min(in.size(), kMaxDecodedBytes));
    if (in.empty() || out.size() < kMinOutput) return {};
    // Re-initialising the same stream reuses liblzma's buffers from the previous fill.
    const lzma_ret init = lzma_microlzma_encoder(&strm_, &options_);
    if (init == LZMA_MEM_ERROR) throw std::bad_alloc();
    if (init != LZMA_OK) throw std::runtime_error(fmt::format("lzma: encoder setup failed ({})", int(init)));
    strm_.next_in = in.data();
    strm_.avail_in = in.size();
    strm_.next_out = out.data();
    strm_.avail_out = out.size();
    const lzma_ret rc = lzma_code(&strm_, LZMA_FINISH);
    if (rc == LZMA_MEM_ERROR) throw std::bad_alloc();
    if (rc != LZMA_STREAM_END) throw std::runtime_error(fmt::format("lzma: encoding failed ({})", int(rc)));
    if (strm_.total_in == 0) return {};
    return {size_t(strm_.total_in), size_t(strm_.total_out)};
  }

 private:
  lzma_options_lzma options_{};
  lzma_stream strm_ = LZMA_STREAM_INIT;
};

class LzmaDecoder final : public AlgDecoder {
 public:
  explicit LzmaDecoder(uint32_t dict_size) : dict_size_(dict_size) {}
  ~LzmaDecoder() override { lzma_end(&strm_); }

  void decode(std::span<const uint8_t> in, std::span<uint8_t> out, bool partial) override {
    // A partial decode only promises that the stream holds at least out.size() bytes.
    const lzma_ret init = lzma_microlzma_decoder(&strm_, in.size(), out.size(), !partial, dict_size_);
    if (init == LZMA_MEM_ERROR) throw std::bad_alloc();
    if (init != LZMA_OK) throw_decode("lzma: decoder setup failed ({})", int(init));
    strm_.next_in = in.data();
    strm_.avail_in = in.size();
    strm_.next_out = out.data();
    strm_.avail_out = out.size();
    const lzma_ret rc = lzma_code(&strm_, LZMA_FINISH);
    switch (rc) {
      case LZMA_STREAM_END:
        if (strm_.total_out != out.size()) throw_short("lzma", strm_.total_out, out.size());
        return;
      case LZMA_MEM_ERROR:
        throw std::bad_alloc();
      case LZMA_OPTIONS_ERROR:
        throw_decode("lzma: bad properties byte {:#04x}", in[0]);
      case LZMA_BUF_ERROR:
        throw_short("lzma", strm_.total_out, out.size());
      default:
        throw_decode("lzma: corrupt stream (after {} of {} bytes)", strm_.total_out, out.size());
    }
  }

 private:
  uint32_t dict_size_;
  lzma_stream strm_ = LZMA_STREAM_INIT;
};

}  // namespace

std::unique_ptr<Encoder> make_lzma_encoder(int level, uint32_t dict_size) {
  return std::make_unique<LzmaEncoder>(level, dict_size);
}

std::unique_ptr<AlgDecoder> make_lzma_decoder(uint32_t dict_size) {
  if (dict_size > kMaxDict) throw_decode("lzma: dictionary size {} in the image configuration exceeds 8 MiB", dict_size);
  return std::make_unique<LzmaDecoder>(std::max<uint32_t>(dict_size, LZMA_DICT_SIZE_MIN));
}

}  // namespace erofs::compress::detail
