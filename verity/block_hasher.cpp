#include "verity/block_hasher.h"

#include <algorithm>
#include <exception>
#include <string>
#include <thread>

#include <openssl/evp.h>

namespace erofs::verity {
namespace {

// A helper thread is started only for this much input at least: starting one costs tens of
// microseconds, hashing a MiB about half a millisecond.
constexpr size_t kMinBytesPerThread = 1u << 20;

}  // namespace

BlockHasher::BlockHasher(Algorithm algorithm, std::span<const uint8_t> salt)
    : algorithm_(algorithm), salt_(salt.begin(), salt.end()), digest_size_(verity::digest_size(algorithm)) {
  const std::string name(algorithm_name(algorithm));
  md_ = EVP_MD_fetch(nullptr, name.c_str(), nullptr);
  ctx_ = EVP_MD_CTX_new();
  if (md_ == nullptr || ctx_ == nullptr) {
    EVP_MD_free(md_);
    EVP_MD_CTX_free(ctx_);
    throw Error("OpenSSL's libcrypto has no " + name);
  }
}

BlockHasher::BlockHasher(const BlockHasher& other) : BlockHasher(other.algorithm_, other.salt_) {}

BlockHasher::~BlockHasher() {
  EVP_MD_CTX_free(ctx_);
  EVP_MD_free(md_);
}

void BlockHasher::hash(std::span<const uint8_t> block, uint8_t* out) {
  // Re-initialising the same context with the same algorithm allocates nothing.
  if (EVP_DigestInit_ex2(ctx_, md_, nullptr) != 1 || EVP_DigestUpdate(ctx_, salt_.data(), salt_.size()) != 1 ||
      EVP_DigestUpdate(ctx_, block.data(), block.size()) != 1 || EVP_DigestFinal_ex(ctx_, out, nullptr) != 1)
    throw Error("OpenSSL's libcrypto failed to hash a block");
}

void BlockHasher::hash_blocks(std::span<const uint8_t> in, size_t block_size, uint8_t* out) {
  for (size_t off = 0; off < in.size(); off += block_size, out += digest_size_) hash(in.subspan(off, block_size), out);
}

uint64_t share_begin(uint64_t count, uint64_t parts, uint64_t i) {
  return i * (count / parts) + std::min(i, count % parts);
}

void for_each_share(BlockHasher& hasher, size_t parts, const std::function<void(BlockHasher&, size_t)>& fn) {
  std::vector<std::exception_ptr> errors(parts);
  std::vector<std::jthread> helpers;
  for (size_t i = 1; i < parts; ++i)
    helpers.emplace_back([&, i] {
      try {
        BlockHasher own(hasher);
        fn(own, i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  try {
    fn(hasher, 0);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  helpers.clear();  // joins
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

size_t useful_threads(uint64_t bytes, unsigned threads) {
  return size_t(std::clamp<uint64_t>(bytes / kMinBytesPerThread, 1, std::max(threads, 1u)));
}

void hash_blocks_parallel(BlockHasher& hasher, std::span<const uint8_t> in, size_t block_size, uint8_t* out,
                          unsigned threads) {
  const size_t blocks = in.size() / block_size;
  const size_t parts = useful_threads(in.size(), threads);
  for_each_share(hasher, parts, [&](BlockHasher& h, size_t i) {
    const uint64_t first = share_begin(blocks, parts, i), end = share_begin(blocks, parts, i + 1);
    h.hash_blocks(in.subspan(first * block_size, (end - first) * block_size), block_size,
                  out + first * hasher.digest_size());
  });
}

}  // namespace erofs::verity
