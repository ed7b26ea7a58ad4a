#include "verity/params.h"

#include <charconv>

#include <fmt/format.h>

namespace erofs::verity {
namespace {

void check_block_size(uint32_t size, std::string_view what) {
  if (size < kMinBlockSize || size > kMaxBlockSize || (size & (size - 1)) != 0)
    throw ParamError(fmt::format("verity {} block size {}: dm-verity needs a power of two from {} to {}", what,
                                 size, kMinBlockSize, kMaxBlockSize));
}

void check_salt_size(size_t size) {
  if (size > kMaxSaltSize) throw ParamError(fmt::format("verity salt of {} bytes: at most {}", size, kMaxSaltSize));
}

uint32_t parse_block_size(std::string_view text, std::string_view what) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw ParamError(fmt::format("verity {} block size '{}' is not a number", what, text));
  return v;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string_view algorithm_name(Algorithm alg) { return alg == Algorithm::Sha256 ? "sha256" : "sha512"; }

Algorithm parse_algorithm(std::string_view name) {
  if (name == "sha256") return Algorithm::Sha256;
  if (name == "sha512") return Algorithm::Sha512;
  throw ParamError(fmt::format("verity hash algorithm '{}': use sha256 or sha512", name));
}

size_t digest_size(Algorithm alg) { return alg == Algorithm::Sha256 ? 32 : 64; }

void validate(const Params& params) {
  check_block_size(params.data_block_size, "data");
  check_block_size(params.hash_block_size, "hash");
  check_salt_size(params.salt.size());
}

Params parse_options(std::string_view text) {
  Params p;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if (key == "hash") {
      p.algorithm = parse_algorithm(value);
    } else if (key == "data-block") {
      p.data_block_size = parse_block_size(value, "data");
    } else if (key == "hash-block") {
      p.hash_block_size = parse_block_size(value, "hash");
    } else {
      throw ParamError(fmt::format("verity option '{}': expected hash=, data-block= or hash-block=", item));
    }
  }
  validate(p);
  return p;
}

std::vector<uint8_t> parse_hex(std::string_view text, std::string_view what) {
  if (text.size() % 2 != 0) throw ParamError(fmt::format("{} '{}': an odd number of hex digits", what, text));
  std::vector<uint8_t> out;
  out.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0) throw ParamError(fmt::format("{} '{}': not hex", what, text));
    out.push_back(uint8_t(hi << 4 | lo));
  }
  return out;
}

std::vector<uint8_t> parse_salt(std::string_view text) {
  if (text == "none") return {};
  if (text.empty()) throw ParamError("verity salt: give hex digits or none");
  std::vector<uint8_t> salt = parse_hex(text, "verity salt");
  check_salt_size(salt.size());
  return salt;
}

std::string to_hex(std::span<const uint8_t> bytes) { return fmt::format("{:02x}", fmt::join(bytes, "")); }

format::VeritySuperblock make_superblock(const Params& params, uint64_t data_blocks,
                                         const std::array<uint8_t, 16>& uuid) {
  format::VeritySuperblock sb;
  sb.uuid = uuid;
  sb.algorithm = algorithm_name(params.algorithm);
  sb.data_block_size = params.data_block_size;
  sb.hash_block_size = params.hash_block_size;
  sb.data_blocks = data_blocks;
  sb.salt = params.salt;
  return sb;
}

Params params_of(const format::VeritySuperblock& sb) {
  Params p{parse_algorithm(sb.algorithm), sb.data_block_size, sb.hash_block_size, sb.salt};
  validate(p);
  return p;
}

}  // namespace erofs::verity
