// Rounding positions and sizes up to a block or slot boundary, for the writer's own layout
// arithmetic (its numbers come from the source, not from an image: nothing hostile to check).
#pragma once

#include <cstdint>

namespace erofs::writer {

constexpr uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

}  // namespace erofs::writer
