// A byte vector whose growth leaves the new bytes unset, for buffers that are filled in full right
// after they grow (file contents read into them, pclusters encoded or decoded into them): zeroing
// them first would touch every byte once more.
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

}  // namespace erofs::writer
