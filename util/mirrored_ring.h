// A ring buffer mapped twice, one copy right after the other, so that up to size() bytes from
// any position are one contiguous span. A window sliding over a long stream keeps the bytes it
// still needs where they are instead of moving them to the front of a buffer: the writer's
// windowed input, asked for 8 MB at every pcluster and refilled every 4 MiB, moved two bytes in
// memory for each byte of a large file that way.
#pragma once

#include <cstddef>
#include <cstdint>

namespace erofs::util {

class MirroredRing {
 public:
  // At least `bytes`, rounded up to whole pages. Throws std::bad_alloc when it cannot be mapped.
  explicit MirroredRing(size_t bytes);
  ~MirroredRing();
  MirroredRing(const MirroredRing&) = delete;
  MirroredRing& operator=(const MirroredRing&) = delete;

  size_t size() const { return size_; }
  // Where the stream's byte `pos` lives; the size() bytes from there are contiguous.
  uint8_t* at(uint64_t pos) const { return base_ + pos % size_; }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace erofs::util
