// A bounded queue of jobs for the driver's background threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace erofs::fuse {

template <class Job>
class JobQueue {
 public:
  explicit JobQueue(size_t capacity) : capacity_(capacity) {}

  // False (and the job dropped) when the queue is full or stopped.
  bool push(Job job) {
    {
      std::lock_guard l(mutex_);
      if (stopped_ || jobs_.size() >= capacity_) return false;
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
    return true;
  }

  // Waits for a job; false once the queue is stopped.
  bool pop(Job& out) {
    std::unique_lock l(mutex_);
    cv_.wait(l, [&] { return stopped_ || !jobs_.empty(); });
    if (stopped_) return false;
    out = std::move(jobs_.front());
    jobs_.pop_front();
    return true;
  }

  void stop() {
    {
      std::lock_guard l(mutex_);
      stopped_ = true;
    }
    cv_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopped_ = false;
};

}  // namespace erofs::fuse
