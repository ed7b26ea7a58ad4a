// Buffers for decoded data, handed out again once their last holder lets go. A streaming reader
// needs a fresh buffer for every request and every extent it decodes; memory that malloc takes
// from the system each time costs a page fault per 4 KiB on first touch, which was a fifth of
// the FUSE daemon's CPU for sequential reads of 64 KiB pclusters. Kept buffers are bounded in
// bytes; small ones are left to malloc, which reuses them well. Thread-safe, and buffers may
// outlive the pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "compress/uninit_bytes.h"

namespace erofs::reader {

class BufferPool {
 public:
  explicit BufferPool(uint64_t keep_bytes);

  // A buffer of `size` bytes, contents unset, for data that may be kept (the pcluster cache):
  // never one over twice the size.
  std::shared_ptr<compress::UninitBytes> take(size_t size);
  // The same for bytes let go once a reply is written (extent heads, whole-extent reads): the
  // smallest kept buffer that fits, however much larger, and small sizes too, in a pool that can
  // keep at least 2 MiB (else as take). Random readers ask for heads of every size; with take's
  // rule each size class needed memory of its own, fresh pages faulted in one by one (2,200
  // faults for 9 MiB of random 4 KiB reads at 64 KiB pclusters, the daemon's system time twice
  // squashfuse's).
  std::shared_ptr<compress::UninitBytes> take_brief(size_t size);
  // A brief buffer whose `size` bytes are zero, for an LZ4 decode that must not see bytes it has
  // not written (compress::Decoder::Unchecked::Zeroed). Its bytes are zeroed again when it is let
  // go, on the thread that lets it go: a FUSE read lets go of its head after the reply is
  // written, so the zeroing overlaps the reader taking in the answer instead of adding to its
  // wait (9 MiB of random 4 KiB reads at 64 KiB pclusters: memset was 6% of the daemon's CPU).
  // Its holder must not resize it.
  std::shared_ptr<compress::UninitBytes> take_zeroed(size_t size);
  // A buffer sized as take's whose `size` bytes are zero, zeroed again when let go, for an LZ4
  // extent decoded into the pcluster cache (Unchecked::Zeroed): the zeroing costs less than the
  // walk of the stream it spares (the daemon's CPU for sequential reads of the 10^9-byte file at
  // 64 KiB pclusters: 570-580 ms against 630-670 ms, warm, 6 alternating runs).
  std::shared_ptr<compress::UninitBytes> take_zeroed_kept(size_t size);
  // The bytes of the buffers now waiting to be handed out again.
  uint64_t kept_bytes() const;

 private:
  enum class Use { Kept, Brief, Zeroed, KeptZeroed };
  struct Kept {
    std::unique_ptr<compress::UninitBytes> buffer;
    bool zeroed;  // every byte of its capacity is zero
  };
  struct Shelf {
    std::mutex mutex;
    uint64_t keep = 0;
    uint64_t bytes = 0;
    std::vector<Kept> free;
    void put(compress::UninitBytes* buffer, bool zero);
  };
  std::shared_ptr<compress::UninitBytes> take(size_t size, Use use);
  std::shared_ptr<Shelf> shelf_;
};

}  // namespace erofs::reader
