// The hash of dm-verity's format version 1, H(salt || block), through OpenSSL's EVP interface
// (the SHA-2 code veritysetup itself uses, with the CPU's SHA instructions where it has them),
// and the hashing of many consecutive blocks on several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
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

// Share i of `count` items cut into `parts` contiguous shares: [share_begin(i), share_begin(i + 1)),
// the first count % parts shares one item longer.
uint64_t share_begin(uint64_t count, uint64_t parts, uint64_t i);

// fn(h, i) for every share i < parts at once: share 0 on the calling thread with `hasher`, the
// others on threads started for the call, each with a copy of it. Returns when all are done,
// rethrowing the first exception any of them threw.
void for_each_share(BlockHasher& hasher, size_t parts, const std::function<void(BlockHasher&, size_t)>& fn);

// hasher.hash_blocks(in, block_size, out) on `threads` threads: the calling one (with `hasher`)
// and threads - 1 started for the call, each hashing a contiguous share, when `in` is large
// enough to pay for starting them. The digests do not depend on the number of threads.
void hash_blocks_parallel(BlockHasher& hasher, std::span<const uint8_t> in, size_t block_size,
                          uint8_t* out, unsigned threads);

// How many threads `bytes` of data are worth: one per MiB at least, `threads` at most.
size_t useful_threads(uint64_t bytes, unsigned threads);

}  // namespace erofs::verity
