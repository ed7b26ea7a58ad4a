// The device table (INCOMPAT_DEVICE_TABLE): 128-byte slots at devt_slotoff * 128 describing the
// extra devices (blobs) an image refers to.
#pragma once

#include <array>
#include <cstdint>

namespace erofs::format {

inline constexpr uint32_t kDeviceSlotSize = 128;

struct DeviceSlot {
  std::array<uint8_t, 64> tag{};  // identifier used to find the blob (digest or uuid)
  uint64_t blocks = 0;            // blocks_lo | blocks_hi << 32
  uint64_t uniaddr = 0;           // start in the unified address space; 0: not mapped there

  void encode(uint8_t* out) const;  // kDeviceSlotSize bytes
  static DeviceSlot decode(const uint8_t* in);
};

}  // namespace erofs::format
