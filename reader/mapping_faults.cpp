#include "reader/mapping_faults.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mutex>

namespace erofs::reader::mapping_faults {

namespace {

struct Slot {
  std::atomic<uintptr_t> begin{0};  // 0: free
  std::atomic<uintptr_t> end{0};
  std::atomic<uint64_t> faults{0};
};

// One slot per open image that reads through a mapping; a process rarely opens more than a few.
constexpr size_t kSlots = 64;

struct Table {
  Slot slots[kSlots];
  std::mutex claim;  // taken by watch and unwatch, never by the handler
  struct sigaction previous {};
  uintptr_t page = 4096;
  bool installed = false;
};

Table& table() {
  static Table t;
  return t;
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  Table& t = table();
  const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& s : t.slots) {
    const uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (!begin || at < begin || at >= s.end.load(std::memory_order_acquire)) continue;
    // Counted before the zeros appear: a reader that sees them sees the count raised (mmap
    // changes this process's page tables, which every processor running it takes in first).
    s.faults.fetch_add(1, std::memory_order_seq_cst);
    void* page = reinterpret_cast<void*>(at & ~(t.page - 1));
    if (::mmap(page, t.page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) return;
    break;  // the fault stays: it is the previous handler's
  }
  if ((t.previous.sa_flags & SA_SIGINFO) && t.previous.sa_sigaction) {
    t.previous.sa_sigaction(sig, info, context);
  } else if (t.previous.sa_handler != SIG_DFL && t.previous.sa_handler != SIG_IGN) {
    t.previous.sa_handler(sig);
  } else {
    // Returning repeats the access, which faults again and ends the process, as without us.
    ::signal(SIGBUS, SIG_DFL);
  }
}

}  // namespace

std::atomic<uint64_t>* watch(const void* base, size_t length) {
  Table& t = table();
  std::lock_guard l(t.claim);
  if (!t.installed) {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page <= 0) return nullptr;
    t.page = uintptr_t(page);
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(SIGBUS, &sa, &t.previous) != 0) return nullptr;
    t.installed = true;
  }
  for (Slot& s : t.slots) {
    if (s.begin.load(std::memory_order_relaxed)) continue;
    s.faults.store(0, std::memory_order_relaxed);
    s.end.store(reinterpret_cast<uintptr_t>(base) + length, std::memory_order_release);
    s.begin.store(reinterpret_cast<uintptr_t>(base), std::memory_order_release);
    return &s.faults;
  }
  return nullptr;
}

void unwatch(const void* base) {
  Table& t = table();
  std::lock_guard l(t.claim);
  for (Slot& s : t.slots) {
    if (s.begin.load(std::memory_order_relaxed) != reinterpret_cast<uintptr_t>(base)) continue;
    s.begin.store(0, std::memory_order_release);
    s.end.store(0, std::memory_order_release);
  }
}

}  // namespace erofs::reader::mapping_faults
