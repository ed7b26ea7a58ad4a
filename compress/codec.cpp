// Algorithm names, `-z` parsing, and dispatch to the per-algorithm files.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>

#include "compress/internal.h"

namespace erofs::compress {

namespace {

struct AlgInfo {
  std::string_view name;
  Algorithm algorithm;
  int min_level, max_level, default_level;  // min > max: the algorithm takes no level
};

constexpr AlgInfo kAlgs[] = {
    {"lz4", Algorithm::Lz4, 1, 0, -1},
    {"lz4hc", Algorithm::Lz4, 1, 12, 9},
    {"lzma", Algorithm::Lzma, 0, 9, 6},
    {"deflate", Algorithm::Deflate, 1, 9, 6},
    {"zstd", Algorithm::Zstd, 1, 22, 3},
};

constexpr uint32_t kMinDict = 4096;     // liblzma's smallest dictionary
constexpr uint32_t kMaxDict = 8u << 20;  // the format's limit (COMPR_CFGS record)
// The largest dictionary chosen by default. An encoder's memory follows its dictionary (liblzma's
// preset 6 takes about 94 MiB at 8 MiB), and every worker has one: building the linux tree at
// -C1048576 -Eall-fragments peaked at 282 MiB with 8 MiB. Linux fs/ at that setting: 8 MiB
// 7,204,864 bytes in 13.6 s at 177 MiB, 4 MiB 7,208,960 in 11.2 s at 130 MiB, 2 MiB 7,266,304.
constexpr uint32_t kDefaultMaxDict = 4u << 20;

const AlgInfo* find_alg(std::string_view name) {
  for (const AlgInfo& a : kAlgs)
    if (a.name == name) return &a;
  return nullptr;
}

// The table entry for a Spec built by hand or by parse_spec; an empty name means the plain algorithm.
const AlgInfo& info_for(const Spec& spec) {
  if (spec.name.empty()) {
    for (const AlgInfo& a : kAlgs)
      if (a.algorithm == spec.algorithm) return a;
  } else if (const AlgInfo* a = find_alg(spec.name); a && a->algorithm == spec.algorithm) {
    return *a;
  }
  throw SpecError(fmt::format("compression spec names '{}' but algorithm {}", spec.name, int(spec.algorithm)));
}

void check_level(const AlgInfo& a, int level) {
  if (level == -1) return;
  if (a.min_level > a.max_level)
    throw SpecError(fmt::format("{} takes no level (use lz4hc for levels 1..12)", a.name));
  if (level < a.min_level || level > a.max_level)
    throw SpecError(fmt::format("{}: level {} out of range {}..{}", a.name, level, a.min_level, a.max_level));
}

void check_dict(const AlgInfo& a, uint32_t dict_size) {
  if (dict_size == 0) return;
  if (a.algorithm != Algorithm::Lzma) throw SpecError(fmt::format("{}: dictsize applies to lzma only", a.name));
  if (dict_size < kMinDict || dict_size > kMaxDict)
    throw SpecError(fmt::format("lzma: dictsize {} out of range {}..{}", dict_size, kMinDict, kMaxDict));
}

template <typename T>
bool parse_number(std::string_view s, T& value) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size();
}

// Accepts a byte count with an optional k/m suffix (binary units): "1048576", "1024k", "1m".
bool parse_size(std::string_view s, uint32_t& value) {
  unsigned shift = 0;
  if (!s.empty() && (s.back() == 'k' || s.back() == 'K')) shift = 10;
  if (!s.empty() && (s.back() == 'm' || s.back() == 'M')) shift = 20;
  if (shift) s.remove_suffix(1);
  uint64_t v = 0;
  if (!parse_number(s, v) || v > (uint64_t(UINT32_MAX) >> shift)) return false;
  value = uint32_t(v << shift);
  return true;
}

}  // namespace

std::string_view algorithm_name(Algorithm alg) {
  switch (alg) {
    case Algorithm::Lz4: return "lz4";
    case Algorithm::Lzma: return "lzma";
    case Algorithm::Deflate: return "deflate";
    case Algorithm::Zstd: return "zstd";
  }
  return "unknown";
}

Spec parse_spec(std::string_view text) {
  const size_t comma = text.find(',');
  const std::string_view name = text.substr(0, comma);
  const AlgInfo* a = find_alg(name);
  if (!a)
    throw SpecError(fmt::format("unknown compression algorithm '{}' (known: lz4, lz4hc, lzma, deflate, zstd)", name));
  Spec spec;
  spec.algorithm = a->algorithm;
  spec.name = std::string(a->name);

  std::string_view rest = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  bool has_level = false;
  while (comma != std::string_view::npos) {
    const size_t next = rest.find(',');
    const std::string_view option = rest.substr(0, next);
    const size_t eq = option.find('=');
    // A bare value is the level, as in mkfs.erofs's "lz4hc,12".
    const std::string_view key = eq == std::string_view::npos ? "level" : option.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? option : option.substr(eq + 1);
    if (option.empty()) throw SpecError(fmt::format("empty option in compression spec '{}'", text));
    if (key == "level") {
      if (has_level) throw SpecError(fmt::format("{}: level given twice", a->name));
      if (!parse_number(value, spec.level) || spec.level < 0)
        throw SpecError(fmt::format("{}: bad level '{}'", a->name, value));
      check_level(*a, spec.level);
      has_level = true;
    } else if (key == "dictsize") {
      if (!parse_size(value, spec.dict_size) || spec.dict_size == 0)
        throw SpecError(fmt::format("{}: bad dictsize '{}'", a->name, value));
      check_dict(*a, spec.dict_size);
    } else {
      throw SpecError(fmt::format("{}: unknown option '{}' (known: level, dictsize)", a->name, key));
    }
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  return spec;
}

std::unique_ptr<Encoder> make_encoder(const Spec& spec, uint32_t max_pcluster_bytes) {
  if (max_pcluster_bytes == 0 || max_pcluster_bytes > kMaxPclusterBytes)
    throw std::invalid_argument(fmt::format("pcluster size {} out of range 1..{}", max_pcluster_bytes, kMaxPclusterBytes));
  const AlgInfo& a = info_for(spec);
  check_level(a, spec.level);
  check_dict(a, spec.dict_size);
  const int level = spec.level == -1 ? a.default_level : spec.level;
  switch (a.algorithm) {
    case Algorithm::Lz4:
      return detail::make_lz4_encoder(a.max_level > 0, level);
    case Algorithm::Lzma: {
      // The dictionary spans input, not output: a pcluster of text holds several times its size
      // of input, and matches further back than the dictionary are lost (linux-6.1 fs/ tree at
      // 64 KiB pclusters: a 64 KiB dictionary cost 5% in size, 256 KiB 0.2%). Up to 64 KiB
      // pclusters, the sizes chosen for speed, four pclusters as mkfs.erofs 1.9.3 takes: eight
      // gained 1.8% on the 10^9-byte file but made the match finder about 2% slower. Above, the
      // sizes chosen for the smallest image, eight (at 128 KiB, 1.2% smaller on that file than
      // four, which 1.9.3's rolling-hash dedupe then beats). Up to kDefaultMaxDict.
      const uint32_t pcluster = std::bit_ceil(max_pcluster_bytes);
      uint32_t dict = spec.dict_size;
      if (dict == 0) dict = std::clamp<uint32_t>(pcluster * (pcluster <= (64u << 10) ? 4 : 8), 32u << 10, kDefaultMaxDict);
      return detail::make_lzma_encoder(level, dict);
    }
    case Algorithm::Deflate:
      return detail::make_deflate_encoder(level);
    case Algorithm::Zstd:
      return detail::make_zstd_encoder(level, max_pcluster_bytes);
  }
  throw SpecError("unknown compression algorithm");
}

struct Decoder::State {
  std::array<std::unique_ptr<detail::AlgDecoder>, kAlgorithmCount> algs;
};

Decoder::Decoder(DecoderConfig config) : config_(config), state_(std::make_unique<State>()) {}
Decoder::~Decoder() = default;

void Decoder::decode(Algorithm alg, std::span<const uint8_t> in, std::span<uint8_t> out, bool partial,
                     Unchecked unchecked) {
  const unsigned index = unsigned(alg);
  if (index >= kAlgorithmCount) detail::throw_decode("unknown compression algorithm {}", index);
  const std::string_view name = algorithm_name(alg);
  if (out.size() > kMaxDecodedBytes)
    detail::throw_decode("{}: extent of {} bytes exceeds the {} byte limit", name, out.size(), kMaxDecodedBytes);
  if (in.size() > kMaxPclusterBytes)
    detail::throw_decode("{}: stream of {} bytes exceeds the {} byte pcluster limit", name, in.size(), kMaxPclusterBytes);
  if (in.empty()) detail::throw_decode("{}: empty stream", name);
  if (out.empty()) {
    if (partial) return;
    detail::throw_decode("{}: empty extent", name);
  }

  std::unique_ptr<detail::AlgDecoder>& d = state_->algs[index];
  if (!d) {
    switch (alg) {
      case Algorithm::Lz4: d = detail::make_lz4_decoder(config_.check_lz4_offsets); break;
      case Algorithm::Lzma: d = detail::make_lzma_decoder(config_.lzma_dict_size); break;
      case Algorithm::Deflate:
        if (config_.deflate_window_bits > 15)
          detail::throw_decode("deflate: window bits {} in the image configuration exceed 15", config_.deflate_window_bits);
        d = detail::make_deflate_decoder();
        break;
      case Algorithm::Zstd: d = detail::make_zstd_decoder(config_.zstd_window_log); break;
    }
  }
  // Only LZ4 can copy bytes it has not written; the other libraries refuse such streams.
  if (alg == Algorithm::Lz4 && !config_.check_lz4_offsets && (partial || !lz4_zeroes_offset_zero_matches()) &&
      (unchecked == Unchecked::Zero || (unchecked == Unchecked::Walk && detail::lz4_zero_offset_match(in, out.size()))))
    std::fill(out.begin(), out.end(), uint8_t(0));
  d->decode(in, out, partial);
}

void Decoder::verify(Algorithm alg, std::span<const uint8_t> in, std::span<uint8_t> scratch, bool partial) {
  // The walk accepts only streams the checked decode accepts with the same output size, which
  // the unchecked one accepts too; decode() judges the rest, and streams past the limits.
  if (alg == Algorithm::Lz4 && !partial && in.size() <= kMaxPclusterBytes && scratch.size() <= kMaxDecodedBytes &&
      detail::lz4_walk_strict(in, scratch.size()))
    return;
  decode(alg, in, scratch, partial, Unchecked::Zero);
}

}  // namespace erofs::compress
