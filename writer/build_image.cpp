#include "writer/build_image.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "format/constants.h"
#include "format/dirent.h"
#include "format/endian.h"
#include "format/inode.h"
#include "format/superblock.h"
#include "writer/data/compressed_files.h"
#include "writer/layout/dir_blocks.h"
#include "writer/errors.h"
#include "writer/data/flat_data.h"
#include "writer/data/output_image.h"
#include "writer/layout/inode_record.h"
#include "writer/layout/plan.h"
#include "writer/progress.h"
#include "writer/spill_file.h"
#include "writer/source/scan_dir.h"
#include "writer/layout/xattr_plan.h"

namespace erofs::writer {
namespace {

using namespace erofs::format;

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

class Builder {
 public:
  Builder(Tree& tree, const std::string& target, const BuildOptions& o)
      : tree_(tree), target_(target), opt_(o), bs_(o.block_size), xattrs_(tree, o.warn) {
    if (bs_ < 512 || bs_ > 4096 || (bs_ & (bs_ - 1)))
      throw BuildError("block size must be 512, 1024, 2048 or 4096, not " + std::to_string(bs_));
    if (o.chunk_size && (o.chunk_size < bs_ || (o.chunk_size & (o.chunk_size - 1))))
      throw BuildError("chunk size must be a power of two of at least the block size");
    if (opt_.label.size() > 15) throw BuildError("volume label longer than 15 bytes: " + opt_.label);
  }

  BuildStats run() {
    auto t0 = std::chrono::steady_clock::now();
    apply_times();
    plan_inodes();
    if (opt_.progress) {
      for (auto& p : plans_)
        if (p.src->is_reg()) {
          ++opt_.progress->total_files;
          opt_.progress->total_bytes += p.src->size;
        }
      opt_.progress->scanned = true;
    }
    OutputImage out(target_);
    tails_ = std::make_unique<SpillFile>(target_);
    sb_block_ = uint32_t(kSuperblockOffset / bs_);
    out.pad_to(uint64_t(sb_block_ + 1) * bs_);
    write_data(out);
    write_shared_xattrs(out);
    assign_nids(out.offset() / bs_);
    write_metadata(out);
    finish(out);
    stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return stats_;
  }

 private:
  // Compact inodes carry no time of their own: they show the superblock epoch. The epoch is the
  // fixed time if one was given, else the most common whole-second mtime, so that as many inodes as
  // possible can be compact without losing their time.
  void apply_times() {
    if (opt_.fixed_time && !opt_.mkfs_time_only)
      for (auto& ino : tree_.inodes) {
        ino->mtime = *opt_.fixed_time;
        ino->mtime_nsec = 0;
      }
    if (opt_.fixed_time) {
      epoch_ = *opt_.fixed_time;
      return;
    }
    std::map<int64_t, uint64_t> counts;
    int64_t newest = INT64_MIN;
    for (auto& ino : tree_.inodes) {
      newest = std::max(newest, ino->mtime);
      if (ino->mtime_nsec == 0) ++counts[ino->mtime];
    }
    epoch_ = newest;
    uint64_t best = 0;
    for (auto [t, n] : counts)
      if (n > best) {
        best = n;
        epoch_ = t;
      }
  }

  bool fits_compact(const TreeInode* ino, uint64_t data_size) const {
    if (opt_.inode_form == InodeForm::Extended) return false;
    if (data_size > UINT32_MAX || ino->uid > 0xFFFF || ino->gid > 0xFFFF || ino->nlink > 0xFFFF) return false;
    if (opt_.inode_form == InodeForm::Compact) return true;
    return ino->mtime == epoch_ && ino->mtime_nsec == 0;
  }

  uint64_t dir_size(const TreeInode* dir) const {
    // "." and ".." sort among the children; the packing depends on the order.
    std::vector<std::string_view> names = {".", ".."};
    for (auto& d : dir->children) names.push_back(d.name);
    std::sort(names.begin(), names.end());
    DirSizer sizer(bs_);
    for (auto n : names) sizer.add(n.size());
    return sizer.size();
  }

  // Breadth-first order: a directory's children's inodes sit together, close to it.
  void plan_inodes() {
    std::deque<TreeInode*> queue = {tree_.root};
    std::unordered_set<const TreeInode*> seen = {tree_.root};
    plans_.reserve(tree_.inodes.size() + 1);  // +1: the packed inode, added last
    index_.reserve(tree_.inodes.size() + 1);
    while (!queue.empty()) {
      TreeInode* ino = queue.front();
      queue.pop_front();
      index_[ino] = plans_.size();
      Plan& p = plans_.emplace_back();
      p.src = ino;
      p.serial = uint32_t(plans_.size());
      p.xattr_size = xattrs_.ibody_size(ino);
      if (ino->is_dir()) p.data_size = dir_size(ino);
      else if (ino->is_reg() || ino->is_symlink()) p.data_size = ino->size;
      p.extended = !fits_compact(ino, p.data_size);
      uint64_t tail = p.data_size % bs_;
      uint32_t isize = p.extended ? kExtendedInodeSize : kCompactInodeSize;
      // Compressed builds decide a regular file's layout once its data is compressed.
      bool flat_decided_later = ino->is_reg() && (opt_.chunk_size || opt_.compression);
      p.inline_tail = tail && isize + p.xattr_size + tail <= bs_ && !flat_decided_later;
      p.tail_size = p.inline_tail ? uint32_t(tail) : 0;
      for (auto& d : ino->children)
        if (seen.insert(d.inode).second) queue.push_back(d.inode);
      count(ino, p);
    }
  }

  void count(const TreeInode* ino, const Plan& p) {
    ++stats_.inodes;
    (p.extended ? stats_.extended_inodes : stats_.compact_inodes)++;
    if (ino->is_dir()) ++stats_.directories;
    else if (ino->is_reg()) ++stats_.regular_files;
    else if (ino->is_symlink()) ++stats_.symlinks;
    else ++stats_.specials;
    if (!ino->is_dir() && ino->nlink > 1) stats_.hard_links += ino->nlink - 1;
  }

  // File contents go first, in depth-first name order, so reading a subtree reads forward.
  void write_data(OutputImage& out) {
    data_start_ = out.offset() / bs_;
    std::vector<TreeInode*> order;
    std::vector<TreeInode*> stack = {tree_.root};
    std::unordered_set<const TreeInode*> done;
    while (!stack.empty()) {
      TreeInode* ino = stack.back();
      stack.pop_back();
      if (!done.insert(ino).second) continue;
      order.push_back(ino);
      for (auto it = ino->children.rbegin(); it != ino->children.rend(); ++it) stack.push_back(it->inode);
    }
    if (opt_.compression) {
      compressed_ = std::make_unique<CompressedFiles>(out, *tails_, opt_, target_);
      std::vector<Plan*> files;
      for (TreeInode* ino : order)
        if (ino->is_reg()) files.push_back(&plans_[index_.at(ino)]);
      compressed_->write_files(files, stats_);
    }
    for (TreeInode* ino : order) {
      Plan& p = plans_[index_.at(ino)];
      if (ino->is_reg() && !opt_.compression) {
        uint64_t got = 0;
        unsigned chunk_bits = opt_.chunk_size ? unsigned(__builtin_ctz(opt_.chunk_size)) : 0;
        p.data = write_file_data(out, *tails_, ino->source_path, ino->size, {bs_, p.inline_tail, chunk_bits}, got,
                                 ino->data_fd, ino->data_offset);
        p.inline_bytes = p.data.tail;
        stats_.bytes_in += got;
        if (opt_.progress) {
          ++opt_.progress->files;
          opt_.progress->bytes_in += got;
          opt_.progress->bytes_out = out.offset();
        }
        if (p.data.layout == Layout::ChunkBased) uses_chunks_ = true;
      } else if (ino->is_symlink()) {
        write_bytes(out, p, reinterpret_cast<const uint8_t*>(ino->symlink_target.data()));
      }
    }
    if (compressed_) write_packed_inode();
    stats_.data_blocks = out.offset() / bs_ - data_start_;
  }

  // The packed inode holds the fragments: an unnamed regular file, itself compressed.
  void write_packed_inode() {
    auto owned = std::make_unique<TreeInode>();
    owned->mode = S_IFREG | 0600;
    owned->nlink = 1;
    owned->mtime = epoch_;
    TreeInode* ino = tree_.add(std::move(owned));
    index_[ino] = plans_.size();
    Plan& p = plans_.emplace_back();
    p.src = ino;
    p.serial = uint32_t(plans_.size());
    if (!compressed_->write_packed(p, stats_)) {
      plans_.pop_back();
      index_.erase(ino);
      return;
    }
    p.extended = !fits_compact(ino, p.data_size);
    packed_ = &p;
  }

  // Content held in memory (symlink targets, directories): full blocks appended, tail kept inline.
  void write_bytes(OutputImage& out, Plan& p, const uint8_t* bytes) {
    uint64_t full = p.inline_tail ? p.data_size / bs_ * bs_ : p.data_size;
    p.data.layout = p.inline_tail ? Layout::FlatInline : Layout::FlatPlain;
    if (full) {
      p.data.startblk = out.offset() / bs_;
      out.append({bytes, size_t(full)});
      out.pad_to(round_up(out.offset(), bs_));
      p.data.blocks = (full + bs_ - 1) / bs_;
    }
    if (p.inline_tail) p.inline_bytes = tails_->append({bytes + full, size_t(p.data_size - full)});
  }

  void write_shared_xattrs(OutputImage& out) {
    if (xattrs_.shared_area().empty()) return;
    xattr_blkaddr_ = out.offset() / bs_;
    out.append(xattrs_.shared_area());
    out.pad_to(round_up(out.offset(), bs_));
  }

  // Inodes are packed on 32-byte slots from meta_blkaddr. A record that fits in a block goes into
  // the fullest block that still has room for all of it (best fit), so an inline tail never
  // crosses a block boundary and little space is lost; a larger record starts new blocks. Slot 0
  // stays unused: nid 0 means "none" in several superblock fields. The root comes first, so its
  // nid is small.
  void assign_nids(uint64_t meta_blkaddr) {
    meta_blkaddr_ = meta_blkaddr;
    std::set<std::pair<uint32_t, uint64_t>> open = {{bs_ - kSlotSize, 0}};  // (free bytes, block)
    std::vector<uint32_t> used = {kSlotSize};
    for (auto& p : plans_) {
      if (p.src->is_dir()) p.data.layout = p.inline_tail ? Layout::FlatInline : Layout::FlatPlain;
      uint64_t size = round_up(layout_record(p, 0).size, kSlotSize);
      uint64_t pos;
      if (size <= bs_) {
        auto it = open.lower_bound({uint32_t(size), 0});
        uint64_t blk;
        if (it == open.end()) {
          blk = used.size();
          used.push_back(0);
        } else {
          blk = it->second;
          open.erase(it);
        }
        pos = blk * bs_ + used[blk];
        used[blk] += uint32_t(size);
        if (bs_ - used[blk] >= kSlotSize) open.insert({bs_ - used[blk], blk});
      } else {
        pos = used.size() * bs_;
        for (RecordLayout r = layout_record(p, pos); r.inline_size; r = layout_record(p, pos)) {
          uint64_t start = pos + r.inline_off;
          if (start / bs_ == (start + r.inline_size - 1) / bs_) break;
          pos += kSlotSize;
        }
        uint64_t end = round_up(pos + layout_record(p, pos).size, kSlotSize);
        used.resize((end + bs_ - 1) / bs_, bs_);
        used.back() = uint32_t(end - (used.size() - 1) * bs_);
        if (bs_ - used.back() >= kSlotSize) open.insert({bs_ - used.back(), used.size() - 1});
      }
      p.nid = pos / kSlotSize;
    }
    meta_bytes_ = used.size() * bs_;
    if (plans_.front().nid > 0xFFFF) throw BuildError("internal error: root nid does not fit 16 bits");
  }

  std::vector<uint8_t> directory_content(const TreeInode* dir) const {
    std::vector<DirRecord> entries;
    entries.push_back({".", plans_[index_.at(dir)].nid, uint8_t(FileType::Directory)});
    entries.push_back({"..", plans_[index_.at(dir->parent)].nid, uint8_t(FileType::Directory)});
    for (auto& d : dir->children)
      entries.push_back({d.name, plans_[index_.at(d.inode)].nid, uint8_t(file_type_of_mode(d.inode->mode))});
    std::sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.name < b.name; });
    return encode_directory(entries, bs_);
  }

  void write_metadata(OutputImage& out) {
    const uint64_t meta_base = meta_blkaddr_ * bs_;
    // Directory blocks follow the inodes; their addresses are known now that the nids are.
    uint64_t dir_blk = meta_blkaddr_ + meta_bytes_ / bs_;
    std::vector<std::vector<uint8_t>> dir_blocks;
    std::vector<uint8_t> rec, dir_tail;
    std::vector<Plan*> by_nid;
    for (auto& p : plans_) by_nid.push_back(&p);
    std::sort(by_nid.begin(), by_nid.end(), [](const Plan* a, const Plan* b) { return a->nid < b->nid; });
    for (Plan* pp : by_nid) {
      Plan& p = *pp;
      if (p.src->is_dir()) {
        auto content = directory_content(p.src);
        uint64_t full = p.inline_tail ? p.data_size / bs_ * bs_ : p.data_size;
        if (full) {
          p.data.startblk = dir_blk;
          p.data.blocks = full / bs_ + (full % bs_ != 0);
          dir_blk += p.data.blocks;
          dir_blocks.emplace_back(content.begin(), content.begin() + full);
        }
        if (p.inline_tail) dir_tail.assign(content.begin() + full, content.end());
      }
      uint64_t pos = p.nid * kSlotSize;
      RecordLayout r = layout_record(p, pos);
      rec.assign(r.size, 0);
      encode_inode(p, rec.data());
      xattrs_.encode_ibody(p.src, rec.data() + p.inode_size());
      std::copy(r.index.begin(), r.index.end(), rec.begin() + r.index_off);
      if (r.inline_size && p.src->is_dir()) std::copy(dir_tail.begin(), dir_tail.end(), rec.begin() + r.inline_off);
      else if (r.inline_size) tails_->read(p.inline_bytes, rec.data() + r.inline_off);
      out.pad_to(meta_base + pos);
      out.append(rec);
    }
    out.pad_to(meta_base + meta_bytes_);
    stats_.meta_blocks = meta_bytes_ / bs_;
    for (auto& b : dir_blocks) {
      out.append(b);
      out.pad_to(round_up(out.offset(), bs_));
      stats_.meta_blocks += (b.size() + bs_ - 1) / bs_;
    }
  }

  void encode_inode(const Plan& p, uint8_t* out) const {
    const TreeInode* ino = p.src;
    DiskInode d;
    d.extended = p.extended;
    d.layout = p.data.layout;
    d.xattr_icount = xattrs_.icount(ino);
    d.mode = uint16_t(ino->mode);
    d.size = p.data_size;
    d.ino = p.serial;
    d.uid = ino->uid;
    d.gid = ino->gid;
    d.nlink = ino->nlink;
    d.nb = p.extended ? 0 : uint16_t(ino->nlink);
    d.mtime = p.extended ? ino->mtime : 0;
    d.mtime_nsec = p.extended ? ino->mtime_nsec : 0;
    if (S_ISCHR(ino->mode) || S_ISBLK(ino->mode)) d.u = encode_rdev(ino->rdev_major, ino->rdev_minor);
    else if (S_ISFIFO(ino->mode) || S_ISSOCK(ino->mode)) d.u = 0;
    else if (p.compressed) {
      d.layout = p.z.compact && !p.whole_fragment ? Layout::CompressedCompact : Layout::CompressedFull;
      d.u = uint32_t(p.zblocks);
    } else if (p.data.layout == Layout::ChunkBased) d.u = p.data.chunk_format;
    else d.u = p.data.startblk >= kNullAddr ? kNullAddr : uint32_t(p.data.startblk);
    d.encode({out, d.disk_size()});
  }

  void finish(OutputImage& out) {
    uint64_t end = round_up(out.offset(), bs_);
    out.pad_to(end);
    uint64_t blocks = end / bs_;
    if (blocks > UINT32_MAX) throw BuildError("image exceeds 2^32 blocks");
    Superblock sb;
    sb.magic = kMagic;
    sb.feature_compat = kCompatSbChksum | kCompatMtime | (xattrs_.uses_filter() ? kCompatXattrFilter : 0);
    sb.feature_incompat = uses_chunks_ ? kIncompatChunkedFile : 0;
    std::vector<uint8_t> configs;
    if (compressed_) {
      // Big-pcluster mode (and with it the configuration records) is always on: one index
      // form for every pcluster size, understood since Linux 5.13.
      sb.feature_incompat |= kIncompatZeroPadding | kIncompatComprCfgs;
      if (compressed_->used_inline()) sb.feature_incompat |= kIncompatZtailpacking;
      if (compressed_->used_dedupe()) sb.feature_incompat |= kIncompatFragments;  // the same bit means dedupe
      if (packed_) {
        sb.feature_incompat |= kIncompatFragments;
        sb.packed_nid = packed_->nid;
      }
      sb.u1 = compressed_->algorithm_bitmap();
      configs = compressed_->configs().encode(sb.u1);
    }
    sb.blkszbits = uint8_t(__builtin_ctz(bs_));
    sb.root_nid_2b = uint16_t(plans_.front().nid);
    sb.inos = plans_.size();
    sb.epoch = epoch_;
    sb.blocks_lo = uint32_t(blocks);
    sb.meta_blkaddr = uint32_t(meta_blkaddr_);
    sb.xattr_blkaddr = uint32_t(xattr_blkaddr_);
    std::memcpy(sb.volume_name.data(), opt_.label.data(), opt_.label.size());
    sb.uuid = make_uuid(out, sb);

    // The checksum covers the superblock and the rest of its block (all zeros here).
    std::vector<uint8_t> region(checksum_length(bs_), 0);
    if (sb.size() + configs.size() > region.size()) throw BuildError("internal error: superblock block overflows");
    std::copy(configs.begin(), configs.end(), region.begin() + sb.size());
    sb.encode(region);
    sb.checksum = compute_checksum(region);
    sb.encode(region);
    out.patch(kSuperblockOffset, region);
    out.commit(end);
    stats_.image_bytes = end;
  }

  std::array<uint8_t, 16> make_uuid(OutputImage& out, const Superblock& sb) const {
    std::array<uint8_t, 16> u{};
    switch (opt_.uuid_mode) {
      case UuidMode::Clear: return u;
      case UuidMode::Fixed: return opt_.uuid;
      case UuidMode::Random:
        if (::getrandom(u.data(), u.size(), 0) != ssize_t(u.size())) throw BuildError("getrandom failed");
        break;
      case UuidMode::Derived: {
        // From the image content, so equal inputs give equal images.
        XXH128_hash_t h = out.content_hash();
        uint8_t head[kSuperblockSize];
        sb.encode(head);
        XXH128_hash_t s = XXH3_128bits_withSeed(head, sizeof head, h.low64 ^ h.high64);
        std::memcpy(u.data(), &s.low64, 8);
        std::memcpy(u.data() + 8, &s.high64, 8);
        break;
      }
    }
    u[6] = uint8_t((u[6] & 0x0F) | (opt_.uuid_mode == UuidMode::Random ? 0x40 : 0x80));
    u[8] = uint8_t((u[8] & 0x3F) | 0x80);
    return u;
  }

  Tree& tree_;
  std::string target_;
  const BuildOptions& opt_;
  uint32_t bs_;
  XattrPlan xattrs_;
  std::vector<Plan> plans_;
  std::unordered_map<const TreeInode*, size_t> index_;
  int64_t epoch_ = 0;
  uint32_t sb_block_ = 0;
  uint64_t data_start_ = 0, xattr_blkaddr_ = 0, meta_blkaddr_ = 0, meta_bytes_ = 0;
  bool uses_chunks_ = false;
  std::unique_ptr<SpillFile> tails_;
  std::unique_ptr<CompressedFiles> compressed_;
  Plan* packed_ = nullptr;
  BuildStats stats_;
};

}  // namespace

BuildStats build_image(Tree& tree, const std::string& image_path, const BuildOptions& options) {
  return Builder(tree, image_path, options).run();
}

BuildStats build_image(const std::string& source_dir, const std::string& image_path, const BuildOptions& options) {
  auto scan = scan_directory(source_dir, options.source, options.warn);
  BuildStats stats = build_image(scan.tree, image_path, options);
  stats.skipped_inputs = scan.skipped;
  return stats;
}

}  // namespace erofs::writer
