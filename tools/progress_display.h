// Shows build progress on stderr: a line redrawn in place on a terminal, plain lines every few
// seconds otherwise. Fed the library's progress snapshots (BuildSettings::on_progress), from the
// library's own progress thread; it draws at most once per interval, so short builds print
// nothing.
#pragma once

#include <chrono>
#include <mutex>

#include "erofs-kit/erofs.hpp"

namespace erofs::tools {

class ProgressDisplay {
 public:
  ProgressDisplay();
  ~ProgressDisplay();  // clears the line on a terminal
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  void show(const Progress& progress);

 private:
  std::mutex mutex_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, next_;
};

}  // namespace erofs::tools
