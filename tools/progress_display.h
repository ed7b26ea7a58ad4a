// Shows build progress on stderr: a line redrawn in place on a terminal, plain lines every few
// seconds otherwise. One thread reads the builder's counters; the builder never waits for it.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "writer/progress.h"

namespace erofs::tools {

class ProgressDisplay {
 public:
  explicit ProgressDisplay(const writer::Progress& progress);
  ~ProgressDisplay();  // stops the thread and clears the line

 private:
  void run();
  void render();
  const writer::Progress& p_;
  bool tty_;
  std::atomic<bool> stop_{false};
  std::chrono::steady_clock::time_point start_;
  std::thread thread_;
};

}  // namespace erofs::tools
