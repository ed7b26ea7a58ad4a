// Decoders for the image's algorithms, lent one per thread at a time: a compress::Decoder keeps
// library contexts and is not thread-safe, and creating one per extent would be wasteful. Each
// comes with a buffer for the pcluster it decodes, kept between loans: allocating one per extent
// cost a malloc and a free each (4% of checking the linux tree's 4 KiB pclusters).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "compress/codec.h"
#include "compress/uninit_bytes.h"

namespace erofs::reader {

class DecoderPool {
 public:
  explicit DecoderPool(compress::DecoderConfig config) : config_(config) {}

  struct Entry {
    explicit Entry(compress::DecoderConfig config) : decoder(config) {}
    compress::Decoder decoder;
    compress::UninitBytes input;  // the compressed bytes being decoded
  };

  class Lease {
   public:
    Lease(DecoderPool& pool, std::unique_ptr<Entry> entry) : pool_(pool), entry_(std::move(entry)) {}
    ~Lease() { pool_.give_back(std::move(entry_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Entry& operator*() { return *entry_; }
    Entry* operator->() { return entry_.get(); }

   private:
    DecoderPool& pool_;
    std::unique_ptr<Entry> entry_;
  };

  Lease acquire();

 private:
  void give_back(std::unique_ptr<Entry> entry);

  compress::DecoderConfig config_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Entry>> idle_;
};

}  // namespace erofs::reader
