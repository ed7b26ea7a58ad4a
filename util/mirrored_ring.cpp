#include "util/mirrored_ring.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace erofs::util {

MirroredRing::MirroredRing(size_t bytes) {
  const long page = ::sysconf(_SC_PAGESIZE);
  const size_t p = page > 0 ? size_t(page) : 4096;
  if (bytes == 0 || bytes > SIZE_MAX / 4) throw std::bad_alloc();
  size_ = (bytes + p - 1) / p * p;
  // Reserve room for both copies, then put the ring's pages in the first half and map the same
  // pages again in the second (mremap of a shared mapping with old size 0 adds a mapping of it).
  void* area = ::mmap(nullptr, 2 * size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (area == MAP_FAILED) throw std::bad_alloc();
  auto* base = static_cast<uint8_t*>(area);
  void* first = ::mmap(base, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  void* second = first == MAP_FAILED
                     ? MAP_FAILED
                     : ::mremap(first, 0, size_, MREMAP_MAYMOVE | MREMAP_FIXED, base + size_);
  if (second != base + size_) {
    ::munmap(area, 2 * size_);
    throw std::bad_alloc();
  }
  base_ = base;
}

MirroredRing::~MirroredRing() { ::munmap(base_, 2 * size_); }

}  // namespace erofs::util
