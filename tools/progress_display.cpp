#include "tools/progress_display.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "tools/format_util.h"

namespace erofs::tools {
namespace {

std::chrono::milliseconds interval(bool tty) { return std::chrono::milliseconds(tty ? 200 : 5000); }

}  // namespace

ProgressDisplay::ProgressDisplay()
    : tty_(::isatty(2)), start_(std::chrono::steady_clock::now()),
      next_(start_ + (tty_ ? std::chrono::milliseconds(500) : interval(false))) {}

ProgressDisplay::~ProgressDisplay() {
  if (tty_ && drawn_) fmt::print(stderr, "\r\033[K");
}

void ProgressDisplay::show(const Progress& p) {
  show([&p](double secs) {
    const double rate = secs > 0 ? double(p.bytes_in) / secs : 0;
    std::string eta = "?";
    if (p.scanned && rate > 0 && p.total_bytes >= p.bytes_in) {
      const auto left = uint64_t(double(p.total_bytes - p.bytes_in) / rate);
      eta = fmt::format("{}:{:02}", left / 60, left % 60);
    }
    return p.scanned ? fmt::format("files {}/{}  in {}/{}  out {}  ratio {:.2f}  {}/s  ETA {}", p.files, p.total_files,
                                   human_bytes(p.bytes_in), human_bytes(p.total_bytes), human_bytes(p.bytes_out),
                                   p.bytes_in ? double(p.bytes_out) / double(p.bytes_in) : 0.0,
                                   human_bytes(uint64_t(rate)), eta)
                     : std::string("scanning the source...");
  });
}

void ProgressDisplay::show(const std::function<std::string(double)>& line) {
  std::lock_guard l(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (now < next_) return;
  next_ = now + interval(tty_);
  const std::string text = line(std::chrono::duration<double>(now - start_).count());
  if (tty_) fmt::print(stderr, "\r\033[K{}", text);
  else fmt::print(stderr, "{}\n", text);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace erofs::tools
