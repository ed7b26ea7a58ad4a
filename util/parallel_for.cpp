#include "util/parallel_for.h"

namespace erofs::util {

ParallelFor::ParallelFor(unsigned helpers) {
  for (unsigned i = 0; i < helpers; ++i) threads_.emplace_back([this] { helper(); });
}

ParallelFor::~ParallelFor() {
  {
    std::lock_guard l(m_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : threads_) t.join();
}

void ParallelFor::work() {
  for (size_t i = next_.fetch_add(1); i < n_; i = next_.fetch_add(1)) (*fn_)(i);
}

void ParallelFor::run(size_t n, const std::function<void(size_t)>& fn) {
  // A loop too short to share costs more in wake-ups than it saves.
  if (threads_.empty() || n < 4) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  {
    std::lock_guard l(m_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    busy_ = unsigned(threads_.size());
    ++generation_;
  }
  start_.notify_all();
  work();
  std::unique_lock l(m_);
  done_.wait(l, [&] { return busy_ == 0; });
}

void ParallelFor::helper() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock l(m_);
      start_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    work();
    std::lock_guard l(m_);
    if (--busy_ == 0) done_.notify_one();
  }
}

}  // namespace erofs::util
