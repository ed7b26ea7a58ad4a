// A byte vector whose growth leaves the new bytes unset, for buffers that are filled in full right
// after they grow (file contents read into them, pclusters encoded or decoded into them): zeroing
// them first would touch every byte once more. Those of 16 KiB or more start on a page.
// UninitBytes, for buffers their owners keep (the reader's pools, a decoder's input): those of
// 128 KiB or more are mapped pages of their own. UninitHeapBytes, for buffers made and let go
// again and again (the writer's per-segment input and pclusters): all from malloc, which hands
// freed memory out again without faulting in fresh pages (mapped, a -C65536 build of the linux
// tree took 128,000 page faults instead of 83,000).
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace erofs::compress {

template <class T, bool kMapLarge = true>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U, kMapLarge>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U, kMapLarge>&) noexcept {}
  // Large buffers start on a page: the reader reads pclusters into them around the page cache
  // (O_DIRECT), which wants aligned addresses.
  static constexpr size_t kPage = 4096, kAlignedFrom = 16384;
  // With kMapLarge, buffers this large are mapped and unmapped whole. Aligned ones from the heap
  // would leave gaps in malloc's arenas that its growing mmap threshold then keeps from going
  // back: a fsck of a tail-packed tree peaked at twice the memory. Their owners pool them, so few
  // maps are made. AddressSanitizer watches only the heap: its builds keep every buffer there.
#if defined(__SANITIZE_ADDRESS__)
  static constexpr size_t kMappedFrom = SIZE_MAX;
#else
  static constexpr size_t kMappedFrom = kMapLarge ? 131072 : SIZE_MAX;
#endif
  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    const size_t bytes = n * sizeof(T);
    if (bytes >= kMappedFrom) {
      void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      return static_cast<T*>(p);
    }
    if (bytes >= kAlignedFrom) return static_cast<T*>(::operator new(bytes, std::align_val_t(kPage)));
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kMappedFrom) {
      ::munmap(p, bytes);
      return;
    }
    if (bytes >= kAlignedFrom) return ::operator delete(p, std::align_val_t(kPage));
    std::allocator<T>::deallocate(p, n);
  }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using UninitBytes = std::vector<uint8_t, UninitAllocator<uint8_t>>;
using UninitHeapBytes = std::vector<uint8_t, UninitAllocator<uint8_t, false>>;

}  // namespace erofs::compress
