// Decoders for the image's algorithms, lent one per thread at a time: a compress::Decoder keeps
// library contexts and is not thread-safe, and creating one per extent would be wasteful.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "compress/codec.h"

namespace erofs::reader {

class DecoderPool {
 public:
  explicit DecoderPool(compress::DecoderConfig config) : config_(config) {}

  class Lease {
   public:
    Lease(DecoderPool& pool, std::unique_ptr<compress::Decoder> decoder) : pool_(pool), decoder_(std::move(decoder)) {}
    ~Lease() { pool_.give_back(std::move(decoder_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    compress::Decoder& operator*() { return *decoder_; }
    compress::Decoder* operator->() { return decoder_.get(); }

   private:
    DecoderPool& pool_;
    std::unique_ptr<compress::Decoder> decoder_;
  };

  Lease acquire();

 private:
  void give_back(std::unique_ptr<compress::Decoder> decoder);

  compress::DecoderConfig config_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<compress::Decoder>> idle_;
};

}  // namespace erofs::reader
