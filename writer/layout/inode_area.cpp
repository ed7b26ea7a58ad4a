#include "writer/layout/inode_area.h"

#include <algorithm>
#include <set>

#include "format/constants.h"
#include "format/dirent.h"
#include "writer/align.h"
#include "writer/errors.h"
#include "writer/layout/dir_blocks.h"
#include "writer/layout/inode_record.h"

namespace erofs::writer {

uint64_t assign_nids(std::vector<Plan>& plans, uint32_t bs) {
  using format::kSlotSize;
  std::set<std::pair<uint32_t, uint64_t>> open = {{bs - kSlotSize, 0}};  // (free bytes, block)
  std::vector<uint32_t> used = {kSlotSize};
  for (auto& p : plans) {
    if (p.src->is_dir()) p.data.layout = p.inline_tail ? format::Layout::FlatInline : format::Layout::FlatPlain;
    const uint64_t size = align_up(layout_record(p, 0).size, kSlotSize);
    uint64_t pos;
    if (size <= bs) {
      auto it = open.lower_bound({uint32_t(size), 0});
      uint64_t blk;
      if (it == open.end()) {
        blk = used.size();
        used.push_back(0);
      } else {
        blk = it->second;
        open.erase(it);
      }
      pos = blk * bs + used[blk];
      used[blk] += uint32_t(size);
      if (bs - used[blk] >= kSlotSize) open.insert({bs - used[blk], blk});
    } else {
      pos = used.size() * bs;
      for (RecordLayout r = layout_record(p, pos); r.inline_size; r = layout_record(p, pos)) {
        const uint64_t start = pos + r.inline_off;
        if (start / bs == (start + r.inline_size - 1) / bs) break;
        pos += kSlotSize;
      }
      const uint64_t end = align_up(pos + layout_record(p, pos).size, kSlotSize);
      used.resize((end + bs - 1) / bs, bs);
      used.back() = uint32_t(end - (used.size() - 1) * bs);
      if (bs - used.back() >= kSlotSize) open.insert({bs - used.back(), used.size() - 1});
    }
    p.nid = pos / kSlotSize;
  }
  if (plans.front().nid > 0xFFFF) throw BuildError("internal error: root nid does not fit 16 bits");
  return used.size() * bs;
}

std::vector<uint8_t> directory_content(const TreeInode* dir, const InodePlans& plans, uint32_t bs) {
  std::vector<DirRecord> entries;
  entries.push_back({".", plans.at(dir).nid, uint8_t(format::FileType::Directory)});
  entries.push_back({"..", plans.at(dir->parent).nid, uint8_t(format::FileType::Directory)});
  for (auto& d : dir->children)
    entries.push_back({d.name, plans.at(d.inode).nid, uint8_t(format::file_type_of_mode(d.inode->mode))});
  std::sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return encode_directory(entries, bs);
}

}  // namespace erofs::writer
