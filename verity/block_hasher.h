// The hash of dm-verity's format version 1, H(salt || block), through OpenSSL's EVP interface
// (the SHA-2 code veritysetup itself uses, with the CPU's SHA instructions where it has them),
// and the hashing of many consecutive blocks on several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <openssl/types.h>

#include "verity/params.h"

namespace erofs::verity {

// Not thread-safe: one per thread. Copying gives an independent hasher with the same algorithm
// and salt. Throws Error if OpenSSL cannot provide the algorithm.
class BlockHasher {
 public:
  BlockHasher(Algorithm algorithm, std::span<const uint8_t> salt);
  BlockHasher(const BlockHasher& other);
  BlockHasher& operator=(const BlockHasher&) = delete;
  ~BlockHasher();

  size_t digest_size() const { return digest_size_; }
  // Writes H(salt || block) to the first digest_size() bytes of `out`.
  void hash(std::span<const uint8_t> block, uint8_t* out);
  // Hashes each block_size piece of `in` (a whole number of them) to consecutive digests at `out`.
  void hash_blocks(std::span<const uint8_t> in, size_t block_size, uint8_t* out);

 private:
  Algorithm algorithm_;
  std::vector<uint8_t> salt_;
  size_t digest_size_;
  EVP_MD* md_ = nullptr;
  EVP_MD_CTX* ctx_ = nullptr;
};

// hasher.hash_blocks(in, block_size, out) on `threads` threads: the calling one (with `hasher`)
// and threads - 1 started for the call, each hashing a contiguous share, when `in` is large
// enough to pay for starting them. The digests do not depend on the number of threads.
void hash_blocks_parallel(BlockHasher& hasher, std::span<const uint8_t> in, size_t block_size,
                          uint8_t* out, unsigned threads);

}  // namespace erofs::verity
