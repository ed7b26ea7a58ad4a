#include "writer/data/compress_pipeline.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "util/mirrored_ring.h"
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
  // A segment longer than a window travels alone, unread: its worker reads it through the file's
  // reader, a window at a time.
  std::shared_ptr<const ContentReader> stream;
  bool holes = false;  // the file is sparse: windows that lie in a hole are not read
};

// A streamed segment's input, read into a ring the worker keeps between segments (fresh
// buffers for every segment cost a page fault per page). The ring holds the extent the encoder
// works on and a window ahead of it, so the file is read in window-sized pieces; the bytes kept
// from one window to the next stay where they are.
class WindowedInput final : public SegmentInput {
 public:
  // The ring holds at least `most` (the most one call of at() asks for) and a window.
  WindowedInput(const ContentReader& in, uint64_t offset, uint64_t size, uint64_t window, bool holes,
                const util::MirroredRing& ring)
      : in_(in), offset_(offset), size_(size), window_(window), holes_(holes), ring_(ring) {}

  uint64_t size() const override { return size_; }

  std::span<const uint8_t> at(uint64_t pos, uint64_t n) override {
    if (pos + n > end_) refill(pos, n);
    return {ring_.at(pos), size_t(n)};
  }

 private:
  // Reads on from end_ to at least a window past it; [pos, end_) stays in the ring.
  void refill(uint64_t pos, uint64_t n) {
    const uint64_t until = std::min(size_, std::max(pos + n, end_ + window_));
    // The read that ends the file is always made: it checks that the file ends where it should.
    const bool ends_file = in_.size() == offset_ + until;
    const bool hole = holes_ && !ends_file && in_.in_hole(offset_ + end_, until - end_);
    // Written through the ring's first copy only, in two pieces where it wraps: pages of the
    // second copy that are touched count twice in the process's resident size.
    while (end_ < until) {
      const uint64_t room = ring_.size() - end_ % ring_.size();
      const std::span<uint8_t> fresh(ring_.at(end_), size_t(std::min(until - end_, room)));
      if (hole)
        std::fill(fresh.begin(), fresh.end(), uint8_t(0));
      else
        in_.read(offset_ + end_, fresh);
      end_ += fresh.size();
    }
  }

  const ContentReader& in_;
  const uint64_t offset_, size_, window_;
  const bool holes_;
  const util::MirroredRing& ring_;
  uint64_t end_ = 0;  // the segment's bytes before end_ are read; the ring's last size() of them are kept
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
  // A segment of a window or less is held whole, a longer one by its worker's buffer (see held).
  // Room for two streamed segments more than there are workers: results are taken in order, so a
  // worker that finishes its segment before the one ahead of it goes on with the next instead of
  // waiting (with room for one per worker, 2 cores were busy 1.89 of the time on a 10^9-byte file).
  Budget budget(o.window_bytes * 2 * (workers + 2));

  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      // One encoder per (algorithm, pcluster size) this worker met.
      std::map<std::pair<unsigned, uint32_t>, std::unique_ptr<compress::Encoder>> encoders;
      // Made at the first streamed segment: most workers of a tree never meet one.
      std::optional<util::MirroredRing> ring;
      std::shared_ptr<Task> t;
      while (tasks.pop(t)) {
        try {
          for (SegmentResult& r : t->batch.segments) {
            const PipelineFile& file = files[r.file];
            ZSegmentOptions so = o.segment;
            if (file.pcluster_bytes) so.pcluster_bytes = file.pcluster_bytes;
            so.last_segment = r.last;
            so.tail = file.tail;
            auto& enc = encoders[{file.algorithm, so.pcluster_bytes}];
            if (!enc) enc = compress::make_encoder(o.specs.at(file.algorithm), so.pcluster_bytes);
            if (t->batch.stream) {
              const uint64_t ring_bytes = so.max_extent + o.window_bytes;
              if (!ring || ring->size() < ring_bytes) ring.emplace(size_t(ring_bytes));
              WindowedInput in(*t->batch.stream, r.offset, r.size, o.window_bytes, t->batch.holes, *ring);
              r.z = compress_segment(*enc, in, r.offset, so);
            } else {
              r.z = compress_segment(*enc, r.input, r.offset, so);
            }
            // A tail that is the whole segment (a small file, with fragments) holds the input's
            // bytes already; the sink rereads the file in the rare case it needs them again.
            const bool tail_holds_input = r.z.has_tail && r.z.tail.lstart == r.offset;
            if (!o.keep_input || tail_holds_input) r.input = {};
          }
          t->done.set_value(std::move(t->batch));
        } catch (...) {
          t->done.set_exception(std::current_exception());
        }
      }
    });

  // The batch being filled holds at most a segment's worth, so the budget never waits for it.
  const uint64_t batch_bytes = std::min(kBatchBytes, o.window_bytes);
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
      std::shared_ptr<const ContentReader> in;
      std::exception_ptr open_error;
      try {
        in = std::make_shared<const ContentReader>(opener.open(*file.content, file.size));
      } catch (...) {
        open_error = std::current_exception();
      }
      const bool holes = in && file.size > o.window_bytes && in->sparse();
      for (uint64_t off = 0; off < file.size; off += o.segment_bytes) {
        const uint64_t n = std::min(o.segment_bytes, file.size - off);
        const bool streamed = n > o.window_bytes && !open_error;
        // What the segment holds in memory while it waits and while it is compressed.
        const uint64_t held = streamed ? std::min(n, 2 * o.window_bytes) : n;
        if (!t->batch.segments.empty() && (streamed || t->batch.bytes + held > batch_bytes)) hand_on();
        if (!budget.acquire(held)) return stop();
        SegmentResult& r = t->batch.segments.emplace_back();
        t->batch.bytes += held;
        r.file = f;
        r.offset = off;
        r.size = n;
        r.last = off + n == file.size;
        if (streamed) {
          t->batch.stream = in;
          t->batch.holes = holes;
          hand_on();
          continue;
        }
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
