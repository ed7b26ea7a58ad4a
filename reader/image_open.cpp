// Image::open: superblock validation, device table and the special (metabox, packed) inodes.
#include <bit>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compress/codec.h"
#include "format/constants.h"
#include "format/superblock.h"
#include "reader/checked.h"
#include "reader/image_impl.h"

namespace erofs::reader {

namespace {

// Largest block size any kernel accepts (64 KiB pages); between 4 KiB and that is a real but
// unsupported configuration, beyond it the field is garbage.
constexpr unsigned kLargestKnownBlockBits = 16;
constexpr uint32_t kMaxLzmaDictSize = 8u << 20;
constexpr uint8_t kMaxDeflateWindowBits = 15;
// Decode buffers kept for reuse, as a share of the pcluster cache: the FUSE daemon's 256 MiB
// keeps 32 MiB, what the kernel's readahead has in flight at once (12 requests of 1 MiB and the
// extents at their edges).
constexpr uint64_t kBuffersKeptShare = 8;

}  // namespace

std::unique_ptr<Image> Image::open(const std::string& path, const OpenOptions& options) {
  return std::make_unique<ImageImpl>(path, options);
}

ImageImpl::ImageImpl(const std::string& path, const OpenOptions& options)
    : file_(path, {.direct = options.direct_reads, .mapped = options.mapped_reads}),
      cache_(std::make_unique<PclusterCache>(options.pcluster_cache_bytes)),
      buffers_(options.pcluster_cache_bytes / kBuffersKeptShare),
      meta_(std::make_unique<MetaCache>(options.metadata_cache_bytes)) {
  load_superblock(options);
  load_device_table();
  // Algorithms absent from the records keep the codec's defaults; they cannot be used anyway.
  compress::DecoderConfig config;
  if (available_algs_ & (1u << unsigned(compress::Algorithm::Lzma))) config.lzma_dict_size = compr_cfgs_.lzma_dict_size;
  if (available_algs_ & (1u << unsigned(compress::Algorithm::Deflate)))
    config.deflate_window_bits = compr_cfgs_.deflate_window_bits;
  if (available_algs_ & (1u << unsigned(compress::Algorithm::Zstd))) config.zstd_window_log = compr_cfgs_.zstd_window_log;
  config.check_lz4_offsets = options.check_lz4_offsets;
  whole_extents_ = options.whole_extents;
  lz4_unchecked_ = !options.check_lz4_offsets;
  decoders_ = std::make_unique<DecoderPool>(config);
  load_special_inodes();
}

void ImageImpl::load_superblock(const OpenOptions& options) {
  using namespace format;
  if (file_.size() < kSuperblockOffset + kSuperblockSize)
    throw CorruptError(fmt::format("image of {} bytes is too small to hold a superblock", file_.size()));
  uint8_t head[kSuperblockSize];
  file_.read(kSuperblockOffset, head);
  Superblock probe = Superblock::decode(head);
  if (probe.magic != kMagic) throw CorruptError(fmt::format("bad superblock magic 0x{:08x}", probe.magic));
  if (probe.blkszbits < kMinBlockBits || probe.blkszbits > kLargestKnownBlockBits)
    throw CorruptError(fmt::format("invalid block size bits {}", probe.blkszbits));
  if (probe.blkszbits > kMaxBlockBits)
    throw UnsupportedError(fmt::format("block size {} is larger than 4096", 1u << probe.blkszbits));
  blksz_ = 1u << probe.blkszbits;

  // The checksum covers the rest of the superblock's block; that block also holds the
  // configuration records, so read it whole once.
  std::vector<uint8_t> region(checksum_length(blksz_));
  if (kSuperblockOffset + region.size() > file_.size())
    throw CorruptError("image ends inside the superblock block");
  file_.read(kSuperblockOffset, region);
  sb_ = Superblock::decode(region);
  if (sb_.size() > region.size())
    throw CorruptError(fmt::format("{} superblock extension slots do not fit in the block", sb_.sb_extslots));

  if (options.verify_checksum && (sb_.feature_compat & kCompatSbChksum)) {
    uint32_t crc = compute_checksum(region);
    if (crc != sb_.checksum)
      throw CorruptError(fmt::format("superblock checksum mismatch: stored 0x{:08x}, computed 0x{:08x}",
                                     sb_.checksum, crc));
  }
  if (uint32_t unknown = sb_.feature_incompat & ~kIncompatAll)
    throw UnsupportedError(
        fmt::format("unsupported incompatible features: {}", fmt::join(incompat_feature_names(unknown), ", ")));
  if (sb_.dirblkbits != 0)
    throw UnsupportedError(fmt::format("directory block size bits {} (only 0 is defined)", sb_.dirblkbits));

  uint64_t blocks = sb_.blocks();
  if (checked::shl(blocks, sb_.blkszbits) > file_.size())
    throw CorruptError(fmt::format("image is truncated: the superblock counts {} blocks of {} bytes, the file holds {} bytes",
                                   blocks, blksz_, file_.size()));
  // Inode offsets count from meta_blkaddr; checked here once so later nid arithmetic starts in range.
  meta_base_ = checked::shl(sb_.meta_blkaddr, sb_.blkszbits);

  if (sb_.has_incompat(kIncompatMetabox) && sb_.sb_extslots < 1)
    throw CorruptError("METABOX is set but the superblock has no extension slot for the metabox nid");
  if ((sb_.metabox_nid | sb_.packed_nid) & kMetaboxNidBit)
    throw CorruptError("the packed or metabox nid has bit 63 set");
  if (!sb_.has_incompat(kIncompatMetabox) && (sb_.root_nid() & kMetaboxNidBit))
    throw CorruptError("the root nid points into a metabox, but METABOX is not set");
  if ((sb_.feature_compat & kCompatIshareXattrs) &&
      (!sb_.has_incompat(kIncompatXattrPrefixes) || sb_.ishare_xattr_prefix_id >= sb_.xattr_prefix_count))
    throw CorruptError(fmt::format("ishare xattr prefix id {} is not a long prefix", sb_.ishare_xattr_prefix_id));

  if (sb_.has_incompat(kIncompatComprCfgs)) {
    available_algs_ = sb_.u1;
    if (uint16_t unknown = available_algs_ & ~uint16_t((1u << compress::kAlgorithmCount) - 1))
      throw UnsupportedError(fmt::format("unsupported compression algorithms (bitmap 0x{:x})", unknown));
    std::string why;
    auto records = std::span<const uint8_t>(region).subspan(sb_.size());
    if (!ComprConfigs::decode(records, available_algs_, compr_cfgs_, &why)) throw CorruptError(why);
    if (compr_cfgs_.lzma_dict_size > kMaxLzmaDictSize)
      throw UnsupportedError(fmt::format("lzma dictionary size {} exceeds 8 MiB", compr_cfgs_.lzma_dict_size));
    if (compr_cfgs_.deflate_window_bits > kMaxDeflateWindowBits)
      throw UnsupportedError(fmt::format("deflate window bits {} exceed 15", compr_cfgs_.deflate_window_bits));
  } else {
    // Without configuration records, LZ4 is the only algorithm and u1 its window size.
    available_algs_ = 1u << unsigned(compress::Algorithm::Lz4);
  }
}

void ImageImpl::load_device_table() {
  if (!sb_.has_incompat(format::kIncompatDeviceTable) || sb_.extra_devices == 0) return;
  uint64_t pos = uint64_t(sb_.devt_slotoff) * format::kDeviceSlotSize;
  std::vector<uint8_t> table(size_t(sb_.extra_devices) * format::kDeviceSlotSize);
  if (checked::add(pos, table.size()) > file_.size())
    throw CorruptError(fmt::format("device table of {} slots at byte {} is outside the image", sb_.extra_devices, pos));
  file_.read(pos, table);
  for (uint32_t i = 0; i < sb_.extra_devices; ++i)
    devices_.push_back(format::DeviceSlot::decode(table.data() + size_t(i) * format::kDeviceSlotSize));
  device_id_mask_ = uint16_t(std::bit_ceil(uint32_t(sb_.extra_devices) + 1) - 1);
}

void ImageImpl::load_special_inodes() {
  // The metabox first: every other inode may live in it.
  if (sb_.has_incompat(format::kIncompatMetabox)) {
    Inode mb = inode(sb_.metabox_nid);
    if (!mb.is_reg()) throw CorruptError(fmt::format("metabox inode {} is not a regular file", mb.nid));
    metabox_ = mb;
  }
  if (sb_.packed_nid != 0) {
    Inode packed = inode(sb_.packed_nid);
    if (!packed.is_reg()) throw CorruptError(fmt::format("packed inode {} is not a regular file", packed.nid));
    packed_ = packed;
  }
  Inode root = inode(root_nid());
  if (!root.is_dir()) throw CorruptError(fmt::format("root inode {} is not a directory", root.nid));
}

}  // namespace erofs::reader
