#include "lib/progress_relay.h"

namespace erofs::lib {

ProgressRelay::ProgressRelay(const std::function<void(const Progress&)>& callback, unsigned interval_ms)
    : callback_(callback), interval_(std::max(1u, interval_ms)) {
  if (!callback_) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
      lock.unlock();
      callback_(snapshot());
      lock.lock();
    }
  });
}

ProgressRelay::~ProgressRelay() { stop(); }

void ProgressRelay::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProgressRelay::finish() {
  stop();
  if (callback_) callback_(snapshot());
}

Progress ProgressRelay::snapshot() const {
  Progress p;
  p.scanned = counters_.scanned;
  p.total_files = counters_.total_files;
  p.total_bytes = counters_.total_bytes;
  p.files = counters_.files;
  p.bytes_in = counters_.bytes_in;
  p.bytes_out = counters_.bytes_out;
  p.packed_bytes = counters_.packed_bytes;
  p.packed_done = counters_.packed_done;
  return p;
}

}  // namespace erofs::lib
