#include "writer/data/compress_pipeline.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "util/work_queue.h"
#include "writer/errors.h"
#include "writer/source/file_content.h"

namespace erofs::writer {
namespace {

// Segments read together and compressed by one worker. Small files travel in batches, so the
// threads hand each other work (and wake each other) once per batch rather than once per file.
struct Batch {
  std::vector<SegmentResult> segments;  // input holds the raw bytes until compressed
  uint64_t bytes = 0;                   // input bytes, counted against the budget
};

struct Task {
  Batch batch;
  std::promise<Batch> done;
};

// A batch is handed on before it would hold more input than this (or a segment); larger
// segments travel alone.
constexpr uint64_t kBatchBytes = 1 << 20;

// Bytes of input in flight; the reader waits while the budget is spent.
class Budget {
 public:
  explicit Budget(uint64_t limit) : limit_(limit) {}
  bool acquire(uint64_t n) {
    std::unique_lock l(m_);
    cv_.wait(l, [&] { return used_ == 0 || used_ + n <= limit_ || cancelled_; });
    if (cancelled_) return false;
    used_ += n;
    return true;
  }
  void release(uint64_t n) {
    {
      std::lock_guard l(m_);
      used_ -= n;
    }
    cv_.notify_all();
  }
  void cancel() {
    {
      std::lock_guard l(m_);
      cancelled_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  uint64_t used_ = 0, limit_;
  bool cancelled_ = false;
};

}  // namespace

void run_compress_pipeline(const std::vector<PipelineFile>& files, const PipelineOptions& o,
                           const std::function<void(SegmentResult&&)>& sink) {
  const unsigned workers = std::max(1u, o.workers);
  util::WorkQueue<std::shared_ptr<Task>> tasks;
  util::WorkQueue<std::future<Batch>> ordered;
  Budget budget(o.segment_bytes * (2 * workers + 1));

  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      // One encoder per (algorithm, pcluster size) this worker met.
      std::map<std::pair<unsigned, uint32_t>, std::unique_ptr<compress::Encoder>> encoders;
      std::shared_ptr<Task> t;
      while (tasks.pop(t)) {
        try {
          for (SegmentResult& r : t->batch.segments) {
            const PipelineFile& file = files[r.file];
            ZSegmentOptions so = o.segment;
            if (file.pcluster_bytes) so.pcluster_bytes = file.pcluster_bytes;
            so.last_segment = r.last;
            auto& enc = encoders[{file.algorithm, so.pcluster_bytes}];
            if (!enc) enc = compress::make_encoder(o.specs.at(file.algorithm), so.pcluster_bytes);
            r.z = compress_segment(*enc, r.input, r.offset, so);
            if (!o.keep_input) r.input = {};
          }
          t->done.set_value(std::move(t->batch));
        } catch (...) {
          t->done.set_exception(std::current_exception());
        }
      }
    });

  // The batch being filled holds at most a segment's worth, so the budget never waits for it.
  const uint64_t batch_bytes = std::min(kBatchBytes, o.segment_bytes);
  std::thread reader([&] {
    auto t = std::make_shared<Task>();
    auto stop = [&] {
      ordered.close();
      tasks.close();
    };
    auto hand_on = [&] {
      ordered.push(t->done.get_future());
      tasks.push(std::move(t));
      t = std::make_shared<Task>();
    };
    ContentOpener opener;
    for (size_t f = 0; f < files.size(); ++f) {
      const auto& file = files[f];
      if (file.size == 0) continue;
      // An error opening the file reaches the sink in file order, with its first segment.
      std::optional<ContentReader> in;
      std::exception_ptr open_error;
      try {
        in.emplace(opener.open(*file.content, file.size));
      } catch (...) {
        open_error = std::current_exception();
      }
      const bool holes = in && file.size > o.segment_bytes && in->sparse();
      for (uint64_t off = 0; off < file.size; off += o.segment_bytes) {
        uint64_t n = std::min(o.segment_bytes, file.size - off);
        if (!t->batch.segments.empty() && t->batch.bytes + n > batch_bytes) hand_on();
        if (!budget.acquire(n)) return stop();
        SegmentResult& r = t->batch.segments.emplace_back();
        t->batch.bytes += n;
        r.file = f;
        r.offset = off;
        r.last = off + n == file.size;
        try {
          if (open_error) std::rethrow_exception(open_error);
          r.input.resize(size_t(n));
          // The last segment is always read: that read checks that the file ends where it should.
          if (holes && !r.last && in->in_hole(off, n))
            std::fill_n(r.input.data(), size_t(n), uint8_t(0));
          else
            in->read(off, r.input);
        } catch (...) {
          t->done.set_exception(std::current_exception());
          ordered.push(t->done.get_future());
          return stop();
        }
      }
    }
    if (!t->batch.segments.empty()) hand_on();
    stop();
  });

  std::exception_ptr failure;
  std::future<Batch> next;
  while (ordered.pop(next)) {
    uint64_t bytes = 0;
    try {
      Batch b = next.get();
      bytes = b.bytes;
      for (SegmentResult& r : b.segments)
        if (!failure) sink(std::move(r));
    } catch (...) {
      if (!failure) failure = std::current_exception();
      budget.cancel();
    }
    budget.release(bytes);
  }
  reader.join();
  tasks.close();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace erofs::writer
