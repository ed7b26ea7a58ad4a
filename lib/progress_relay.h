// Passes a build's counters to a callback from a thread of its own while the build runs, and a
// last time when the build ends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "erofs-kit/erofs.hpp"
#include "writer/progress.h"

namespace erofs::lib {

class ProgressRelay {
 public:
  // Does nothing when `callback` is empty.
  ProgressRelay(const std::function<void(const Progress&)>& callback, unsigned interval_ms);
  ~ProgressRelay();  // stops the thread
  ProgressRelay(const ProgressRelay&) = delete;
  ProgressRelay& operator=(const ProgressRelay&) = delete;

  // What the builder updates; null without a callback.
  writer::Progress* counters() { return callback_ ? &counters_ : nullptr; }
  // Stops the thread and reports the final counters from the calling thread.
  void finish();

 private:
  Progress snapshot() const;
  void stop();
  const std::function<void(const Progress&)>& callback_;
  std::chrono::milliseconds interval_;
  writer::Progress counters_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace erofs::lib
