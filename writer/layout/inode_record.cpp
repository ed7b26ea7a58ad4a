#include "writer/layout/inode_record.h"

#include "format/endian.h"

namespace erofs::writer {

namespace {
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

RecordLayout layout_record(const Plan& p, uint64_t pos) {
  RecordLayout r;
  uint64_t end = pos + p.inode_size() + p.xattr_size;
  if (p.compressed) {
    end = round_up(end, 8);
    r.index = p.whole_fragment ? encode_whole_fragment(p.z.fragment_off) : encode_zindex(p.z, end);
    r.index_off = end - pos;
    end += r.index.size();
    if (p.z.tail == ZTail::Inline) r.inline_size = p.inline_bytes.size;
  } else if (p.data.layout == format::Layout::ChunkBased) {
    end = round_up(end, 4);
    r.index_off = end - pos;
    r.index.resize(4 * p.data.chunk_map.size());
    for (size_t i = 0; i < p.data.chunk_map.size(); ++i) format::put_le32(r.index.data() + 4 * i, p.data.chunk_map[i]);
    end += r.index.size();
  } else if (p.inline_tail) {
    r.inline_size = p.tail_size;
  }
  r.inline_off = end - pos;
  r.size = r.inline_off + r.inline_size;
  return r;
}

}  // namespace erofs::writer
