#include "reader/buffer_pool.h"

#include <algorithm>

namespace erofs::reader {

namespace {
// Below this, malloc's own bins serve repeated sizes from memory already touched.
constexpr size_t kSmallestPooled = 64 << 10;

// Brief buffers are made at least this large, so that one serves the heads of every extent:
// made to the size asked, each new largest head took a buffer of its own, fresh memory faulted in
// page by page (8 MiB in 9 MiB of random 4 KiB reads of the 10^9-byte file at 64 KiB pclusters,
// where extents decode to 1.5 MB). Pages never touched cost no memory.
constexpr size_t kBriefCapacity = 2 << 20;

// New buffers come in a few sizes, four to each doubling (5/4, 6/4, 7/4, 8/4 of a power of two):
// readers ask for any size (the head of an extent up to a random offset), and a buffer then
// serves every size down to half its own, so a handful of them serve every request. Costs at most
// a quarter more memory than asked for.
size_t capacity_for(size_t size) {
  size_t octave = kSmallestPooled;
  while (octave * 2 < size) octave *= 2;
  for (size_t quarters = 5;; ++quarters)
    if (octave / 4 * quarters >= size) return octave / 4 * quarters;
}
}  // namespace

BufferPool::BufferPool(uint64_t keep_bytes) : shelf_(std::make_shared<Shelf>()) { shelf_->keep = keep_bytes; }

std::shared_ptr<compress::UninitBytes> BufferPool::take(size_t size) { return take(size, Use::Kept); }

std::shared_ptr<compress::UninitBytes> BufferPool::take_brief(size_t size) { return take(size, Use::Brief); }

std::shared_ptr<compress::UninitBytes> BufferPool::take_zeroed(size_t size) { return take(size, Use::Zeroed); }

std::shared_ptr<compress::UninitBytes> BufferPool::take_zeroed_kept(size_t size) { return take(size, Use::KeptZeroed); }

std::shared_ptr<compress::UninitBytes> BufferPool::take(size_t size, Use use) {
  // A pool too small to keep a buffer of kBriefCapacity (a reader with a small cache) would drop
  // each one when let go: brief buffers are then made as the others are, and zeroed ones zeroed
  // here.
  const bool pooled_brief = kBriefCapacity <= shelf_->keep;
  const bool zero = use == Use::Zeroed || use == Use::KeptZeroed;
  // Small kept buffers are malloc's, never pooled: zeroed here, in memory malloc has touched.
  if ((use == Use::Zeroed && !pooled_brief) || (use == Use::KeptZeroed && size < kSmallestPooled)) {
    auto b = take(size, Use::Kept);
    std::fill(b->begin(), b->end(), uint8_t(0));
    return b;
  }
  const bool brief = (use == Use::Brief || use == Use::Zeroed) && pooled_brief;
  if (size < kSmallestPooled && !brief) return std::make_shared<compress::UninitBytes>(size);
  std::unique_ptr<compress::UninitBytes> buffer;
  bool zeroed = false;
  {
    std::lock_guard l(shelf_->mutex);
    auto& free = shelf_->free;
    // The smallest that fits, and not one over twice the size: a large buffer lent for a small
    // extent would sit in the cache with most of its memory idle.
    size_t best = free.size();
    for (size_t i = 0; i < free.size(); ++i) {
      const size_t cap = free[i].buffer->capacity();
      if (cap >= size && (brief || cap / 2 <= size) && (!zero || free[i].zeroed) &&
          (best == free.size() || cap < free[best].buffer->capacity()))
        best = i;
    }
    if (best != free.size()) {
      buffer = std::move(free[best].buffer);
      zeroed = free[best].zeroed;
      free.erase(free.begin() + ptrdiff_t(best));
      shelf_->bytes -= buffer->capacity();
    }
  }
  if (!buffer) {
    buffer = std::make_unique<compress::UninitBytes>();
    buffer->reserve(brief ? std::max(capacity_for(size), kBriefCapacity) : capacity_for(size));
  }
  if (zero && !zeroed) {
    // Once, for a buffer new to zeroed use: from then on it is zeroed as it is let go.
    buffer->resize(buffer->capacity());
    std::fill(buffer->begin(), buffer->end(), uint8_t(0));
  }
  buffer->resize(size);
  return {buffer.release(), [shelf = shelf_, zero](compress::UninitBytes* b) { shelf->put(b, zero); }};
}

void BufferPool::Shelf::put(compress::UninitBytes* buffer, bool zero) {
  std::unique_ptr<compress::UninitBytes> owned(buffer);
  const uint64_t cap = owned->capacity();
  if (cap > keep) return;
  // Only the bytes handed out can have been written.
  if (zero) std::fill(owned->begin(), owned->end(), uint8_t(0));
  std::vector<Kept> dropped;  // freed after the lock
  std::lock_guard l(mutex);
  // The oldest go first: the buffers kept follow the sizes readers ask for now.
  size_t drop = 0;
  for (; bytes + cap > keep; ++drop) bytes -= free[drop].buffer->capacity();
  for (size_t i = 0; i < drop; ++i) dropped.push_back(std::move(free[i]));
  free.erase(free.begin(), free.begin() + ptrdiff_t(drop));
  bytes += cap;
  free.push_back({std::move(owned), zero});
}

uint64_t BufferPool::kept_bytes() const {
  std::lock_guard l(shelf_->mutex);
  return shelf_->bytes;
}

}  // namespace erofs::reader
