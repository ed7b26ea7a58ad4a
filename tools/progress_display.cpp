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

namespace {

std::string time_left(uint64_t total, uint64_t done, double rate) {
  if (rate <= 0 || total < done) return "?";
  const auto left = uint64_t(double(total - done) / rate);
  return fmt::format("{}:{:02}", left / 60, left % 60);
}

}  // namespace

void ProgressDisplay::show(const Progress& p) {
  show([&](double secs) {
    if (!p.scanned) return std::string("scanning the source...");
    if (p.packed_bytes) {
      // The files are done; their fragments are being compressed, at a rate of their own.
      if (packed_start_ < 0) packed_start_ = secs;
      const double rate = secs > packed_start_ ? double(p.packed_done) / (secs - packed_start_) : 0;
      return fmt::format("files {}/{}  fragments {}/{}  out {}  {}/s  ETA {}", p.files, p.total_files,
                         human_bytes(p.packed_done), human_bytes(p.packed_bytes), human_bytes(p.bytes_out),
                         human_bytes(uint64_t(rate)), time_left(p.packed_bytes, p.packed_done, rate));
    }
    const double rate = secs > 0 ? double(p.bytes_in) / secs : 0;
    return fmt::format("files {}/{}  in {}/{}  out {}  ratio {:.2f}  {}/s  ETA {}", p.files, p.total_files,
                       human_bytes(p.bytes_in), human_bytes(p.total_bytes), human_bytes(p.bytes_out),
                       p.bytes_in ? double(p.bytes_out) / double(p.bytes_in) : 0.0, human_bytes(uint64_t(rate)),
                       time_left(p.total_bytes, p.bytes_in, rate));
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
