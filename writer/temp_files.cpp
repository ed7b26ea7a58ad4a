#include "writer/temp_files.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace erofs::writer {
namespace {

// One slot per live temporary file, readable from a signal handler.
constexpr int kSlots = 16;
std::atomic<const char*> g_temp_paths[kSlots];

extern "C" void remove_temps_and_exit(int sig) {
  for (auto& slot : g_temp_paths)
    if (const char* p = slot.load()) ::unlink(p);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void register_temp(const char* p) {
  for (auto& slot : g_temp_paths) {
    const char* expected = nullptr;
    if (slot.compare_exchange_strong(expected, p)) return;
  }
}

void unregister_temp(const char* p) {
  for (auto& slot : g_temp_paths) {
    const char* expected = p;
    if (slot.compare_exchange_strong(expected, nullptr)) return;
  }
}

void install_cleanup_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, remove_temps_and_exit);
}

}  // namespace erofs::writer
