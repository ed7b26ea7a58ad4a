#include "tools/progress_display.h"

#include <unistd.h>

#include <fmt/format.h>

#include "tools/format_util.h"

namespace erofs::tools {

ProgressDisplay::ProgressDisplay(const writer::Progress& progress)
    : p_(progress), tty_(::isatty(2)), start_(std::chrono::steady_clock::now()), thread_([this] { run(); }) {}

ProgressDisplay::~ProgressDisplay() {
  stop_ = true;
  thread_.join();
  if (tty_) fmt::print(stderr, "\r\033[K");
}

void ProgressDisplay::run() {
  auto interval = tty_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000);
  auto next = std::chrono::steady_clock::now() + (tty_ ? std::chrono::milliseconds(500) : interval);
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::chrono::steady_clock::now() < next) continue;
    next += interval;
    render();
  }
}

void ProgressDisplay::render() {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  uint64_t in = p_.bytes_in, out = p_.bytes_out, total = p_.total_bytes;
  double rate = secs > 0 ? double(in) / secs : 0;
  std::string eta = "?";
  if (p_.scanned && rate > 0 && total >= in) {
    auto left = uint64_t(double(total - in) / rate);
    eta = fmt::format("{}:{:02}", left / 60, left % 60);
  }
  std::string line = p_.scanned ? fmt::format("files {}/{}  in {}/{}  out {}  ratio {:.2f}  {}/s  ETA {}", p_.files.load(),
                                              p_.total_files.load(), human_bytes(in), human_bytes(total),
                                              human_bytes(out), in ? double(out) / double(in) : 0.0,
                                              human_bytes(uint64_t(rate)), eta)
                                : std::string("scanning the source...");
  if (tty_) fmt::print(stderr, "\r\033[K{}", line);
  else fmt::print(stderr, "{}\n", line);
  std::fflush(stderr);
}

}  // namespace erofs::tools
