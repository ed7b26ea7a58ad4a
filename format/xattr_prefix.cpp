#include "format/xattr_prefix.h"

#include "format/endian.h"

namespace erofs::format {

void LongPrefixHeader::encode(uint8_t* out) const {
  put_le16(out, len);
  out[2] = base_index;
}

LongPrefixHeader LongPrefixHeader::decode(const uint8_t* in) { return {get_le16(in), in[2]}; }

}  // namespace erofs::format
