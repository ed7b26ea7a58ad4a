// Threads that run tasks handed to them, for work the submitting thread should not wait for: the
// FUSE driver's decoding of large reads and its decode-ahead. The queue is bounded, and a full
// one refuses the task, so that the submitter can do it itself (or drop it) instead of waiting.
#pragma once

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "util/work_queue.h"

namespace erofs::util {

class TaskPool {
 public:
  TaskPool(unsigned threads, size_t max_queued) : tasks_(max_queued) {
    for (unsigned i = 0; i < threads; ++i)
      threads_.emplace_back([this] {
        for (std::function<void()> task; tasks_.pop(task);) task();
      });
  }
  // Runs what is queued, then joins the threads.
  ~TaskPool() {
    tasks_.close();
    for (auto& t : threads_) t.join();
  }
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // False (and nothing run) when the queue is full.
  bool submit(std::function<void()> task) { return tasks_.push(std::move(task)); }
  // Drops what is queued; the tasks running finish.
  void cancel() { tasks_.cancel(); }

 private:
  WorkQueue<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
};

}  // namespace erofs::util
