#include "writer/data/data_writer.h"

#include <sys/stat.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "writer/align.h"
#include "writer/data/flat_data.h"
#include "writer/progress.h"
#include "writer/source/file_content.h"

namespace erofs::writer {
namespace {

// The order data is written in: the hot list's files first, in its order, then everything in
// depth-first name order, so that reading a subtree reads the image forward.
std::vector<TreeInode*> data_order(const Tree& tree, InodePlans& plans, const BuildOptions& o) {
  std::vector<TreeInode*> order;
  std::unordered_set<const TreeInode*> done;
  if (!o.hot_files.empty()) {
    // Every name of every regular file, hard links included.
    std::unordered_map<std::string, TreeInode*> files;
    std::vector<std::pair<const TreeInode*, std::string>> dirs = {{tree.root, ""}};
    while (!dirs.empty()) {
      const auto [dir, path] = dirs.back();
      dirs.pop_back();
      for (const Dentry& d : dir->children) {
        std::string child = path.empty() ? d.name : path + "/" + d.name;
        if (d.inode->is_dir()) dirs.emplace_back(d.inode, std::move(child));
        else if (d.inode->is_reg()) files.emplace(std::move(child), d.inode);
      }
    }
    for (const std::string& path : o.hot_files) {
      auto it = files.find(path);
      if (it == files.end()) {
        if (o.warn) o.warn("hot list: " + path + " is not a regular file of the source");
        continue;
      }
      if (!done.insert(it->second).second) continue;
      order.push_back(it->second);
      plans.at(it->second).hot = true;
    }
  }
  std::vector<TreeInode*> stack = {tree.root};
  while (!stack.empty()) {
    TreeInode* ino = stack.back();
    stack.pop_back();
    if (!done.insert(ino).second) continue;
    order.push_back(ino);
    for (auto it = ino->children.rbegin(); it != ino->children.rend(); ++it) stack.push_back(it->inode);
  }
  return order;
}

// Content held in memory (symlink targets): full blocks appended, the tail kept for the inode.
void write_bytes(OutputImage& out, SpillFile& tails, Plan& p, const uint8_t* bytes, uint32_t bs) {
  const uint64_t full = p.inline_tail ? p.data_size / bs * bs : p.data_size;
  p.data.layout = p.inline_tail ? format::Layout::FlatInline : format::Layout::FlatPlain;
  if (full) {
    p.data.startblk = out.offset() / bs;
    out.append({bytes, size_t(full)});
    out.pad_to(align_up(out.offset(), bs));
    p.data.blocks = (full + bs - 1) / bs;
  }
  if (p.inline_tail) p.inline_bytes = tails.append({bytes + full, size_t(p.data_size - full)});
}

// The packed inode holds the fragments: an unnamed regular file, itself compressed.
const Plan* write_packed_inode(CompressedFiles& compressed, Tree& tree, InodePlans& plans, const BuildOptions& o,
                               BuildStats& stats) {
  auto owned = std::make_unique<TreeInode>();
  owned->mode = S_IFREG | 0600;
  owned->nlink = 1;
  owned->mtime = plans.epoch;
  TreeInode* ino = tree.add(std::move(owned));
  plans.index[ino] = plans.plans.size();
  Plan& p = plans.plans.emplace_back();
  p.src = ino;
  p.serial = uint32_t(plans.plans.size());
  if (!compressed.write_packed(p, stats)) {
    plans.plans.pop_back();
    plans.index.erase(ino);
    return nullptr;
  }
  p.extended = !fits_compact(ino, p.data_size, plans.epoch, o.inode_form);
  return &p;
}

}  // namespace

DataArea write_data(OutputImage& out, SpillFile& tails, Tree& tree, InodePlans& plans, const BuildOptions& o,
                    const std::string& target, BuildStats& stats) {
  DataArea area;
  const uint32_t bs = o.block_size;
  const uint64_t data_start = out.offset() / bs;
  const std::vector<TreeInode*> order = data_order(tree, plans, o);
  if (o.compression) {
    area.compressed = std::make_unique<CompressedFiles>(out, tails, o, target);
    std::vector<Plan*> files;
    for (TreeInode* ino : order)
      if (ino->is_reg()) files.push_back(&plans.at(ino));
    area.compressed->write_files(files, stats);
  }
  ContentOpener opener;
  const unsigned chunk_bits = o.chunk_size ? unsigned(__builtin_ctz(o.chunk_size)) : 0;
  for (TreeInode* ino : order) {
    Plan& p = plans.at(ino);
    if (ino->is_reg() && !o.compression) {
      uint64_t got = 0;
      if (ino->size) p.data = write_file_data(out, tails, opener.open(ino->content, ino->size), {bs, p.inline_tail, chunk_bits}, got);
      p.inline_bytes = p.data.tail;
      stats.bytes_in += got;
      if (o.progress) {
        ++o.progress->files;
        o.progress->bytes_in += got;
        o.progress->bytes_out = out.offset();
      }
      if (p.data.layout == format::Layout::ChunkBased) area.uses_chunks = true;
    } else if (ino->is_symlink()) {
      write_bytes(out, tails, p, reinterpret_cast<const uint8_t*>(ino->symlink_target.data()), bs);
    }
  }
  if (area.compressed) area.packed = write_packed_inode(*area.compressed, tree, plans, o, stats);
  stats.data_blocks = out.offset() / bs - data_start;
  return area;
}

}  // namespace erofs::writer
