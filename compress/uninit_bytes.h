// A byte vector whose growth leaves the new bytes unset, for buffers that are filled in full right
// after they grow (file contents read into them, pclusters encoded or decoded into them): zeroing
// them first would touch every byte once more. Those of 16 KiB or more start on a page.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace erofs::compress {

template <class T>
struct UninitAllocator : std::allocator<T> {
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  // Large buffers start on a page: the reader reads pclusters into them around the page cache
  // (O_DIRECT), which wants aligned addresses.
  static constexpr size_t kPage = 4096, kAlignedFrom = 16384;
  T* allocate(size_t n) {
    if (n * sizeof(T) >= kAlignedFrom) return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kPage)));
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) >= kAlignedFrom) return ::operator delete(p, std::align_val_t(kPage));
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

}  // namespace erofs::compress
