#include "format/devices.h"

#include <cstring>

#include "format/endian.h"

namespace erofs::format {

void DeviceSlot::encode(uint8_t* out) const {
  std::memset(out, 0, kDeviceSlotSize);
  std::memcpy(out, tag.data(), tag.size());
  put_le32(out + 64, uint32_t(blocks));
  put_le32(out + 68, uint32_t(uniaddr));
  put_le16(out + 72, uint16_t(blocks >> 32));
  put_le16(out + 74, uint16_t(uniaddr >> 32));
}

DeviceSlot DeviceSlot::decode(const uint8_t* in) {
  DeviceSlot s;
  std::memcpy(s.tag.data(), in, s.tag.size());
  s.blocks = get_le32(in + 64) | (uint64_t(get_le16(in + 72)) << 32);
  s.uniaddr = get_le32(in + 68) | (uint64_t(get_le16(in + 74)) << 32);
  return s;
}

}  // namespace erofs::format
