// A queue of work items handed between threads: the compression pipeline's workers and ordered
// results, the FUSE driver's background jobs, extraction and fsck jobs. Optionally bounded: push
// refuses new items when full (for jobs that are only worth doing soon), push_wait waits for
// room (for producers that must hand on everything, at the consumers' pace).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace erofs::util {

template <class T>
class WorkQueue {
 public:
  // capacity 0: unbounded.
  explicit WorkQueue(size_t capacity = 0) : capacity_(capacity) {}

  // False (and the item dropped) when the queue is full, closed or cancelled.
  bool push(T item) {
    {
      std::lock_guard l(mutex_);
      if (closed_ || (capacity_ && items_.size() >= capacity_)) return false;
      items_.push_back(std::move(item));
    }
    cv_.notify_one();
    return true;
  }

  // Waits while the queue is full; false (and the item dropped) when it is closed or cancelled.
  bool push_wait(T item) {
    {
      std::unique_lock l(mutex_);
      room_.wait(l, [&] { return closed_ || !capacity_ || items_.size() < capacity_; });
      if (closed_) return false;
      items_.push_back(std::move(item));
    }
    cv_.notify_one();
    return true;
  }

  // Waits for an item; false once the queue is closed and empty, or cancelled.
  bool pop(T& out) {
    {
      std::unique_lock l(mutex_);
      cv_.wait(l, [&] { return closed_ || !items_.empty(); });
      if (items_.empty()) return false;
      out = std::move(items_.front());
      items_.pop_front();
    }
    room_.notify_one();
    return true;
  }

  // No more items: consumers take what is queued, then pop() returns false.
  void close() {
    {
      std::lock_guard l(mutex_);
      closed_ = true;
    }
    cv_.notify_all();
    room_.notify_all();
  }

  // Like close(), and what is still queued is dropped.
  void cancel() {
    std::deque<T> dropped;
    {
      std::lock_guard l(mutex_);
      closed_ = true;
      dropped.swap(items_);
    }
    cv_.notify_all();
    room_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable cv_;    // an item or the end
  std::condition_variable room_;  // room for push_wait, or the end
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace erofs::util
