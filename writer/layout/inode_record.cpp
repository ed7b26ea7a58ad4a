#include "writer/layout/inode_record.h"

#include <sys/stat.h>

#include "format/endian.h"
#include "format/inode.h"
#include "format/zmap.h"
#include "writer/align.h"

namespace erofs::writer {

RecordLayout layout_record(const Plan& p, uint64_t pos) {
  RecordLayout r;
  uint64_t end = pos + p.inode_size() + p.xattr_size;
  if (p.compressed) {
    end = align_up(end, 8);
    r.index_size = p.whole_fragment ? format::kMapHeaderSize : zindex_size(p.z, end);
    if (p.z.tail == ZTail::Inline) r.inline_size = p.inline_bytes.size;
  } else if (p.data.layout == format::Layout::ChunkBased) {
    end = align_up(end, 4);
    r.index_size = 4 * p.data.chunk_map.size();
  } else if (p.inline_tail) {
    r.inline_size = p.tail_size;
  }
  r.index_off = end - pos;
  r.inline_off = r.index_off + r.index_size;
  r.size = r.inline_off + r.inline_size;
  return r;
}

std::vector<uint8_t> encode_record_index(const Plan& p, uint64_t pos) {
  const RecordLayout r = layout_record(p, pos);
  if (p.compressed) return p.whole_fragment ? encode_whole_fragment(p.z.fragment_off) : encode_zindex(p.z, pos + r.index_off);
  std::vector<uint8_t> out(r.index_size);
  for (size_t i = 0; i < p.data.chunk_map.size(); ++i) format::put_le32(out.data() + 4 * i, p.data.chunk_map[i]);
  return out;
}

void encode_inode(const Plan& p, uint16_t xattr_icount, uint8_t* out) {
  using format::Layout;
  const TreeInode* ino = p.src;
  format::DiskInode d;
  d.extended = p.extended;
  d.layout = p.data.layout;
  d.xattr_icount = xattr_icount;
  d.mode = uint16_t(ino->mode);
  d.size = p.data_size;
  d.ino = p.serial;
  d.uid = ino->uid;
  d.gid = ino->gid;
  d.nlink = ino->nlink;
  d.nb = p.extended ? 0 : uint16_t(ino->nlink);
  d.mtime = p.extended ? ino->mtime : 0;
  d.mtime_nsec = p.extended ? ino->mtime_nsec : 0;
  if (S_ISCHR(ino->mode) || S_ISBLK(ino->mode)) d.u = format::encode_rdev(ino->rdev_major, ino->rdev_minor);
  else if (S_ISFIFO(ino->mode) || S_ISSOCK(ino->mode)) d.u = 0;
  else if (p.compressed) {
    d.layout = p.z.compact && !p.whole_fragment ? Layout::CompressedCompact : Layout::CompressedFull;
    d.u = uint32_t(p.zblocks);
  } else if (p.data.layout == Layout::ChunkBased) d.u = p.data.chunk_format;
  else d.u = p.data.startblk >= format::kNullAddr ? format::kNullAddr : uint32_t(p.data.startblk);
  d.encode({out, d.disk_size()});
}

}  // namespace erofs::writer
