#include "writer/layout/xattr_plan.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "format/endian.h"
#include "format/xattr.h"
#include "writer/errors.h"

namespace erofs::writer {

using namespace erofs::format;

uint32_t XattrPlan::Entry::encoded_size() const {
  return XattrEntryHeader{uint8_t(suffix.size()), index, uint16_t(value.size())}.entry_size();
}

void XattrPlan::Entry::encode(uint8_t* out) const {
  XattrEntryHeader{uint8_t(suffix.size()), index, uint16_t(value.size())}.encode(out);
  std::memcpy(out + kXattrEntryHeaderSize, suffix.data(), suffix.size());
  std::memcpy(out + kXattrEntryHeaderSize + suffix.size(), value.data(), value.size());
  std::memset(out + kXattrEntryHeaderSize + suffix.size() + value.size(), 0,
              encoded_size() - kXattrEntryHeaderSize - suffix.size() - value.size());
}

XattrPlan::XattrPlan(const Tree& tree, const std::function<void(const std::string&)>& warn) {
  // Entries are keyed by full name and value; identical ones on several inodes become shared.
  std::map<std::pair<std::string, std::string>, size_t> ids;
  std::vector<uint32_t> users;
  std::vector<std::pair<const TreeInode*, std::vector<size_t>>> per_inode;
  for (auto& owned : tree.inodes) {
    const TreeInode* ino = owned.get();
    if (ino->xattrs.empty()) continue;
    std::vector<size_t> mine;
    for (auto& [name, value] : ino->xattrs) {
      if (!format::storable_xattr(name, value.size())) {
        if (warn) warn("xattr " + name + " cannot be stored in EROFS (dropped)");
        continue;
      }
      auto split = split_xattr_name(name);
      auto [it, fresh] = ids.try_emplace({name, value}, entries_.size());
      if (fresh) {
        entries_.push_back({split->index, std::string(split->suffix), value});
        users.push_back(0);
      }
      ++users[it->second];
      mine.push_back(it->second);
    }
    if (!mine.empty()) per_inode.emplace_back(ino, std::move(mine));
  }

  // Shared entries are laid out in (name, value) order: `ids` iterates that way.
  std::vector<uint32_t> shared_id(entries_.size(), UINT32_MAX);
  for (auto& [key, idx] : ids) {
    if (users[idx] < 2) continue;
    shared_id[idx] = uint32_t(shared_area_.size() / 4);
    size_t at = shared_area_.size();
    shared_area_.resize(at + entries_[idx].encoded_size());
    entries_[idx].encode(shared_area_.data() + at);
  }

  for (auto& [ino, mine] : per_inode) {
    Body b;
    uint32_t seen_bits = 0;
    b.size = kXattrIbodyHeaderSize;
    for (size_t idx : mine) {
      const Entry& e = entries_[idx];
      seen_bits |= 1u << (XXH32(e.suffix.data(), e.suffix.size(), kXattrFilterSeed + e.index) & 31);
      if (shared_id[idx] != UINT32_MAX) {
        b.shared_ids.push_back(shared_id[idx]);
        b.size += 4;
      } else {
        b.inline_entries.push_back(idx);
        b.size += e.encoded_size();
      }
    }
    if (b.shared_ids.size() > 255) throw BuildError("an inode has more than 255 shared xattrs");
    if ((b.size - kXattrIbodyHeaderSize) / 4 + 1 > 0xFFFF) throw BuildError("xattrs of one inode exceed 256 KiB");
    b.filter = ~seen_bits;
    bodies_.emplace(ino, std::move(b));
  }
}

uint32_t XattrPlan::ibody_size(const TreeInode* ino) const {
  auto it = bodies_.find(ino);
  return it == bodies_.end() ? 0 : it->second.size;
}

uint16_t XattrPlan::icount(const TreeInode* ino) const {
  uint32_t size = ibody_size(ino);
  return size ? uint16_t((size - kXattrIbodyHeaderSize) / 4 + 1) : 0;
}

void XattrPlan::encode_ibody(const TreeInode* ino, uint8_t* out) const {
  auto it = bodies_.find(ino);
  if (it == bodies_.end()) return;
  const Body& b = it->second;
  XattrIbodyHeader{b.filter, uint8_t(b.shared_ids.size())}.encode(out);
  uint8_t* p = out + kXattrIbodyHeaderSize;
  for (uint32_t id : b.shared_ids) {
    put_le32(p, id);
    p += 4;
  }
  for (size_t idx : b.inline_entries) {
    entries_[idx].encode(p);
    p += entries_[idx].encoded_size();
  }
}

}  // namespace erofs::writer
