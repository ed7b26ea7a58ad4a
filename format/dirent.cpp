#include "format/dirent.h"

#include <sys/stat.h>

#include "format/endian.h"

namespace erofs::format {

void Dirent::encode(uint8_t* out) const {
  put_le64(out, nid);
  put_le16(out + 8, nameoff);
  out[10] = file_type;
  out[11] = 0;
}

Dirent Dirent::decode(const uint8_t* in) { return Dirent{get_le64(in), get_le16(in + 8), in[10]}; }

FileType file_type_of_mode(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return FileType::Regular;
    case S_IFDIR: return FileType::Directory;
    case S_IFCHR: return FileType::CharDevice;
    case S_IFBLK: return FileType::BlockDevice;
    case S_IFIFO: return FileType::Fifo;
    case S_IFSOCK: return FileType::Socket;
    case S_IFLNK: return FileType::Symlink;
    default: return FileType::Unknown;
  }
}

void DirSizer::add(size_t name_len) {
  uint32_t need = kDirentSize + uint32_t(name_len);
  if (used_ + need > block_size_) {
    ++full_blocks_;
    used_ = 0;
  }
  used_ += need;
}

}  // namespace erofs::format
