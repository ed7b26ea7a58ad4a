// Decides which xattrs are shared (stored once, referenced by id) and encodes each inode's
// inline xattr body.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "writer/tree.h"

namespace erofs::writer {

// Whether EROFS can store the xattr: a known namespace prefix, at most 255 bytes of name after it
// and 65535 bytes of value (the entry header's name_len and value_size). A directory on Linux
// cannot hold anything else, but an archive can.
bool storable_xattr(const std::string& name, const std::string& value);

class XattrPlan {
 public:
  // Xattrs whose names no on-disk prefix can express are dropped with a warning.
  XattrPlan(const Tree& tree, const std::function<void(const std::string&)>& warn);

  // Encoded shared entries, to be placed at the start of block xattr_blkaddr.
  const std::vector<uint8_t>& shared_area() const { return shared_area_; }
  bool uses_filter() const { return !bodies_.empty(); }

  uint16_t icount(const Inode* ino) const;
  uint32_t ibody_size(const Inode* ino) const;
  void encode_ibody(const Inode* ino, uint8_t* out) const;  // ibody_size(ino) bytes

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
  std::unordered_map<const Inode*, Body> bodies_;
  std::vector<uint8_t> shared_area_;
};

}  // namespace erofs::writer
