// Decides which xattrs are shared (stored once, referenced by id) and encodes each inode's
// inline xattr body.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "writer/source/tree.h"

namespace erofs::writer {

class XattrPlan {
 public:
  // Xattrs whose names no on-disk prefix can express are dropped with a warning.
  XattrPlan(const Tree& tree, const std::function<void(const std::string&)>& warn);

  // Encoded shared entries, to be placed at the start of block xattr_blkaddr.
  const std::vector<uint8_t>& shared_area() const { return shared_area_; }
  bool uses_filter() const { return !bodies_.empty(); }

  uint16_t icount(const TreeInode* ino) const;
  uint32_t ibody_size(const TreeInode* ino) const;
  void encode_ibody(const TreeInode* ino, uint8_t* out) const;  // ibody_size(ino) bytes

 private:
  struct Body {
    std::vector<uint32_t> shared_ids;
    std::vector<size_t> inline_entries;  // indexes into entries_
    uint32_t filter = 0;
    uint32_t size = 0;
  };
  struct Entry {
    uint8_t index;
    std::string suffix;
    std::string value;
    uint32_t encoded_size() const;
    void encode(uint8_t* out) const;
  };
  std::vector<Entry> entries_;
  std::unordered_map<const TreeInode*, Body> bodies_;
  std::vector<uint8_t> shared_area_;
};

}  // namespace erofs::writer
