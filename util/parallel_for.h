// Runs the iterations of a loop on the calling thread and a few helper threads that stay alive
// between loops, for work made of many short, independent system calls (a directory's entries).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace erofs::util {

class ParallelFor {
 public:
  explicit ParallelFor(unsigned helpers);
  ~ParallelFor();
  ParallelFor(const ParallelFor&) = delete;
  ParallelFor& operator=(const ParallelFor&) = delete;

  // Calls fn(i) once for every i in [0, n), in any order and on any of the threads; returns when
  // all calls have returned. fn must not throw.
  void run(size_t n, const std::function<void(size_t)>& fn);

 private:
  void work();
  void helper();

  std::mutex m_;
  std::condition_variable start_, done_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t n_ = 0;
  std::atomic<size_t> next_{0};
  unsigned busy_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace erofs::util
