// Shows progress on stderr: a line redrawn in place on a terminal, plain lines every few seconds
// otherwise. Fed the library's build progress snapshots (BuildSettings::on_progress, from the
// library's own progress thread) or any other line (extraction); it draws at most once per
// interval, so short runs print nothing.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include "erofs-kit/erofs.hpp"

namespace erofs::tools {

class ProgressDisplay {
 public:
  ProgressDisplay();
  ~ProgressDisplay();  // clears the line on a terminal
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  void show(const Progress& progress);
  // Any other progress: `line` gets the seconds since the start, and is called only when drawn.
  void show(const std::function<std::string(double seconds)>& line);

 private:
  std::mutex mutex_;
  bool tty_;
  bool drawn_ = false;
  double packed_start_ = -1;  // seconds at the first line about the packed inode
  std::chrono::steady_clock::time_point start_, next_;
};

}  // namespace erofs::tools
