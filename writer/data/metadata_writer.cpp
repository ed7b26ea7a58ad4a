#include "writer/data/metadata_writer.h"

#include <sys/random.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "format/superblock.h"
#include "writer/align.h"
#include "writer/errors.h"
#include "writer/layout/inode_area.h"
#include "writer/layout/inode_record.h"

namespace erofs::writer {
namespace {

using namespace erofs::format;

class MetadataWriter {
 public:
  MetadataWriter(OutputImage& out, const SpillFile& tails, InodePlans& plans, const XattrPlan& xattrs,
                 const DataArea& data, const BuildOptions& o, BuildStats& stats)
      : out_(out), tails_(tails), plans_(plans), xattrs_(xattrs), data_(data), opt_(o), bs_(o.block_size), stats_(stats) {}

  uint64_t run() {
    write_shared_xattrs();
    meta_blkaddr_ = out_.offset() / bs_;
    meta_bytes_ = assign_nids(plans_.plans, bs_);
    write_inode_area();
    return write_superblock();
  }

 private:
  void write_shared_xattrs() {
    if (xattrs_.shared_area().empty()) return;
    xattr_blkaddr_ = out_.offset() / bs_;
    out_.append(xattrs_.shared_area());
    out_.pad_to(align_up(out_.offset(), bs_));
  }

  // Records in nid order; directory blocks follow the inode area, their addresses known now that
  // the nids are.
  void write_inode_area() {
    const uint64_t meta_base = meta_blkaddr_ * bs_;
    uint64_t dir_blk = meta_blkaddr_ + meta_bytes_ / bs_;
    std::vector<std::vector<uint8_t>> dir_blocks;
    std::vector<uint8_t> rec, dir_tail;
    std::vector<Plan*> by_nid;
    for (auto& p : plans_.plans) by_nid.push_back(&p);
    std::sort(by_nid.begin(), by_nid.end(), [](const Plan* a, const Plan* b) { return a->nid < b->nid; });
    for (Plan* pp : by_nid) {
      Plan& p = *pp;
      if (p.src->is_dir()) {
        auto content = directory_content(p.src, plans_, bs_);
        const uint64_t full = p.inline_tail ? p.data_size / bs_ * bs_ : p.data_size;
        if (full) {
          p.data.startblk = dir_blk;
          p.data.blocks = full / bs_ + (full % bs_ != 0);
          dir_blk += p.data.blocks;
          dir_blocks.emplace_back(content.begin(), content.begin() + full);
        }
        if (p.inline_tail) dir_tail.assign(content.begin() + full, content.end());
      }
      const uint64_t pos = p.nid * kSlotSize;
      const RecordLayout r = layout_record(p, pos);
      rec.assign(r.size, 0);
      encode_inode(p, xattrs_.icount(p.src), rec.data());
      xattrs_.encode_ibody(p.src, rec.data() + p.inode_size());
      if (r.index_size) {
        const auto index = encode_record_index(p, pos);
        std::copy(index.begin(), index.end(), rec.begin() + r.index_off);
      }
      if (r.inline_size && p.src->is_dir()) std::copy(dir_tail.begin(), dir_tail.end(), rec.begin() + r.inline_off);
      else if (r.inline_size) tails_.read(p.inline_bytes, rec.data() + r.inline_off);
      out_.pad_to(meta_base + pos);
      out_.append(rec);
    }
    out_.pad_to(meta_base + meta_bytes_);
    stats_.meta_blocks = meta_bytes_ / bs_;
    for (auto& b : dir_blocks) {
      out_.append(b);
      out_.pad_to(align_up(out_.offset(), bs_));
      stats_.meta_blocks += (b.size() + bs_ - 1) / bs_;
    }
  }

  uint64_t write_superblock() {
    const uint64_t end = align_up(out_.offset(), bs_);
    out_.pad_to(end);
    const uint64_t blocks = end / bs_;
    if (blocks > UINT32_MAX) throw BuildError("image exceeds 2^32 blocks");
    Superblock sb;
    sb.magic = kMagic;
    sb.feature_compat = kCompatSbChksum | kCompatMtime | (xattrs_.uses_filter() ? kCompatXattrFilter : 0);
    sb.feature_incompat = data_.uses_chunks ? kIncompatChunkedFile : 0;
    std::vector<uint8_t> configs;
    if (const CompressedFiles* c = data_.compressed.get()) {
      // Big-pcluster mode (and with it the configuration records) is always on: one index
      // form for every pcluster size, understood since Linux 5.13.
      sb.feature_incompat |= kIncompatZeroPadding | kIncompatComprCfgs;
      if (c->used_inline()) sb.feature_incompat |= kIncompatZtailpacking;
      if (c->used_dedupe()) sb.feature_incompat |= kIncompatFragments;  // the same bit means dedupe
      if (data_.packed) {
        sb.feature_incompat |= kIncompatFragments;
        sb.packed_nid = data_.packed->nid;
      }
      sb.u1 = c->algorithm_bitmap();
      configs = c->configs().encode(sb.u1);
    }
    sb.blkszbits = uint8_t(__builtin_ctz(bs_));
    sb.root_nid_2b = uint16_t(plans_.plans.front().nid);
    sb.inos = plans_.plans.size();
    sb.epoch = plans_.epoch;
    sb.blocks_lo = uint32_t(blocks);
    sb.meta_blkaddr = uint32_t(meta_blkaddr_);
    sb.xattr_blkaddr = uint32_t(xattr_blkaddr_);
    std::memcpy(sb.volume_name.data(), opt_.label.data(), opt_.label.size());
    sb.uuid = make_uuid(sb);

    // The checksum covers the superblock and the rest of its block (all zeros here).
    std::vector<uint8_t> region(checksum_length(bs_), 0);
    if (sb.size() + configs.size() > region.size()) throw BuildError("internal error: superblock block overflows");
    std::copy(configs.begin(), configs.end(), region.begin() + sb.size());
    sb.encode(region);
    sb.checksum = compute_checksum(region);
    sb.encode(region);
    out_.patch(kSuperblockOffset, region);
    return end;
  }

  std::array<uint8_t, 16> make_uuid(const Superblock& sb) const {
    std::array<uint8_t, 16> u{};
    switch (opt_.uuid_mode) {
      case UuidMode::Clear: return u;
      case UuidMode::Fixed: return opt_.uuid;
      case UuidMode::Random:
        if (::getrandom(u.data(), u.size(), 0) != ssize_t(u.size())) throw BuildError("getrandom failed");
        break;
      case UuidMode::Derived: {
        // From the image content, so equal inputs give equal images.
        const XXH128_hash_t h = out_.content_hash();
        uint8_t head[kSuperblockSize];
        sb.encode(head);
        const XXH128_hash_t s = XXH3_128bits_withSeed(head, sizeof head, h.low64 ^ h.high64);
        std::memcpy(u.data(), &s.low64, 8);
        std::memcpy(u.data() + 8, &s.high64, 8);
        break;
      }
    }
    u[6] = uint8_t((u[6] & 0x0F) | (opt_.uuid_mode == UuidMode::Random ? 0x40 : 0x80));
    u[8] = uint8_t((u[8] & 0x3F) | 0x80);
    return u;
  }

  OutputImage& out_;
  const SpillFile& tails_;
  InodePlans& plans_;
  const XattrPlan& xattrs_;
  const DataArea& data_;
  const BuildOptions& opt_;
  const uint32_t bs_;
  BuildStats& stats_;
  uint64_t xattr_blkaddr_ = 0, meta_blkaddr_ = 0, meta_bytes_ = 0;
};

}  // namespace

uint64_t write_metadata(OutputImage& out, const SpillFile& tails, InodePlans& plans, const XattrPlan& xattrs,
                        const DataArea& data, const BuildOptions& options, BuildStats& stats) {
  return MetadataWriter(out, tails, plans, xattrs, data, options, stats).run();
}

}  // namespace erofs::writer
