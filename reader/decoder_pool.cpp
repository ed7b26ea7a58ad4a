#include "reader/decoder_pool.h"

namespace erofs::reader {

DecoderPool::Lease DecoderPool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto d = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(d));
    }
  }
  return Lease(*this, std::make_unique<Entry>(config_));
}

void DecoderPool::give_back(std::unique_ptr<Entry> entry) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(entry));
}

}  // namespace erofs::reader
