#include "verity/derive.h"

#include <algorithm>
#include <string_view>

#include "verity/block_hasher.h"

namespace erofs::verity {
namespace {

// SHA-256 of a purpose label and `input`, so that a salt never equals a UUID source.
std::array<uint8_t, 32> labelled_sha256(std::string_view label, std::span<const uint8_t> input) {
  std::array<uint8_t, 32> out;
  BlockHasher(Algorithm::Sha256, std::span(reinterpret_cast<const uint8_t*>(label.data()), label.size()))
      .hash(input, out.data());
  return out;
}

}  // namespace

std::vector<uint8_t> derive_salt(std::span<const uint8_t> seed) {
  const auto h = labelled_sha256("erofs-kit dm-verity salt", seed);
  return {h.begin(), h.end()};
}

std::array<uint8_t, 16> derive_uuid(std::span<const uint8_t> root_hash) {
  const auto h = labelled_sha256("erofs-kit dm-verity uuid", root_hash);
  std::array<uint8_t, 16> u;
  std::copy_n(h.begin(), u.size(), u.begin());
  u[6] = uint8_t((u[6] & 0x0F) | 0x80);  // version 8: custom
  u[8] = uint8_t((u[8] & 0x3F) | 0x80);  // the RFC variant
  return u;
}

}  // namespace erofs::verity
