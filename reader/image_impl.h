// The concrete Image. Internal to the reader: its public members are the building blocks the
// reader's own files share (metadata streams, device reads), not an API for other layers.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "format/devices.h"
#include "format/superblock.h"
#include "format/zmap.h"
#include "reader/buffer_pool.h"
#include "reader/compressed_map.h"
#include "reader/decoder_pool.h"
#include "reader/image.h"
#include "reader/input_image.h"
#include "reader/meta_cache.h"
#include "reader/pcluster_cache.h"

namespace erofs::reader {

inline constexpr uint64_t kMetaboxNidBit = 1ull << 63;
// The metadata cache keeps 4 KiB units whatever the block size: one page per read.
inline constexpr unsigned kMetaUnitBits = 12;

class ImageImpl final : public Image {
 public:
  ImageImpl(const std::string& path, const OpenOptions& options);

  const format::Superblock& superblock() const override { return sb_; }
  uint32_t block_size() const override { return blksz_; }
  uint64_t image_size() const override { return file_.size(); }
  uint64_t root_nid() const override { return sb_.root_nid(); }

  Inode inode(uint64_t nid) const override;
  void read_dir(const Inode& dir, const std::function<bool(const DirEntry&)>& fn) const override;
  void read_dir_at(const Inode& dir, uint64_t position,
                   const std::function<bool(const DirEntry&, uint64_t next)>& fn) const override;
  std::optional<DirEntry> lookup(const Inode& dir, std::string_view name) const override;
  Inode resolve(std::string_view path, bool follow_last) const override;
  size_t read(const Inode& file, uint64_t offset, std::span<uint8_t> buf) const override;
  std::vector<SharedBytes> read_shared(const Inode& file, uint64_t offset, uint64_t length) const override;
  std::vector<Extent> extents(const Inode& file) const override;
  void extents_in(const Inode& file, uint64_t from, uint64_t to,
                  const std::function<void(const Extent&)>& fn) const override;
  void check_mapping(const Inode& file, uint64_t from, uint64_t to) const override;
  void check_data(const Inode& file, uint64_t from, uint64_t to, std::vector<uint8_t>& buf,
                  uint64_t& bytes) const override;
  Extent extent_at(const Inode& file, uint64_t offset) const override;
  // Calls fn for the pieces of a fragment extent that start in [from, to) (see extents_in).
  void cut_fragment(const Extent& fragment, uint64_t from, uint64_t to,
                    const std::function<void(const Extent&)>& fn) const;
  void prefetch(const Inode& file, uint64_t offset, uint64_t length) const override;
  std::optional<StoredRun> stored_run(const Inode& file, uint64_t offset) const override;
  int file_descriptor() const override { return file_.fd(); }
  std::string readlink(const Inode& link) const override;
  std::vector<Xattr> xattrs(const Inode& inode) const override;
  void read_raw(uint64_t offset, std::span<uint8_t> buf) const override { file_.read(offset, buf); }
  uint64_t image_reads() const override { return file_.reads(); }
  uint64_t image_direct_reads() const override { return file_.direct_reads(); }
  uint64_t image_mapped_reads() const override { return file_.mapped_reads(); }
  uint64_t image_hints() const override { return file_.hints(); }

  // Inode metadata (inodes, xattr ibodies, index and chunk tables, inline data) lives either on the
  // device or, for nids with bit 63 set, in the decompressed data of the metabox inode.
  // Both go through the metadata cache.
  uint64_t meta_size(bool metabox) const;
  void read_meta(bool metabox, uint64_t pos, std::span<uint8_t> buf) const;
  // `length` bytes at `pos` of a metadata stream: a view into the cached block when they lie in
  // one (no copy), else a copy.
  SharedBytes meta_bytes(bool metabox, uint64_t pos, size_t length) const;
  // Cache unit `index` (kMetaUnitBits) of a metadata stream; the caller checked that it lies
  // inside the stream.
  MetaCache::Block meta_unit(bool metabox, uint64_t index) const;
  // The first time a file's index is mapped, asks for all of it when it spans several metadata
  // blocks, so that random reads of a large file do not each wait for an index block of their own.
  void ask_for_index(const Inode& ino, uint64_t pos, uint64_t bytes) const;

  // File data on the device at a byte address. Addresses inside an extra device's range of the
  // unified address space are refused as unsupported.
  void read_device(uint64_t addr, std::span<uint8_t> buf) const;
  // Refuses (UnsupportedError) a range that lies on an extra device of the unified address space.
  void check_primary_device(uint64_t addr, uint64_t end) const;

  unsigned block_bits() const { return sb_.blkszbits; }
  uint16_t available_algorithms() const { return available_algs_; }
  ExtentStarts& extent_starts() const { return extent_starts_; }

 private:
  void load_superblock(const OpenOptions& options);
  void load_device_table();
  void load_special_inodes();
  void check_flat_extent(const Inode& ino) const;
  void check_chunk_table(const Inode& ino) const;

  size_t read_flat(const Inode& ino, uint64_t offset, std::span<uint8_t> buf) const;
  size_t read_chunked(const Inode& ino, uint64_t offset, std::span<uint8_t> buf) const;
  unsigned chunk_bits(const Inode& ino) const;
  // Flat layouts: the file's bytes held in device blocks; with an inline tail, the last (partial or
  // full) block is inline instead.
  uint64_t flat_device_bytes(const Inode& ino) const;
  // The first device block of a chunk, or nullopt for a hole.
  std::optional<uint64_t> chunk_start(const Inode& ino, uint64_t chunk) const;
  size_t read_compressed(const Inode& ino, uint64_t offset, std::span<uint8_t> buf) const;
  void read_stored(const Inode& ino, const MappedExtent& ext, uint64_t skip, std::span<uint8_t> out) const;
  void read_fragment(const Inode& ino, uint64_t offset, std::span<uint8_t> out) const;
  // check_data's read of one extent through read(): whole into `buf` when it is decoded,
  // else a megabyte at a time.
  void read_through(const Inode& ino, const Extent& ext, std::vector<uint8_t>& buf, uint64_t& bytes) const;
  // One extent's key and whether the cache holds it, looked up once (the cache's lock) however
  // many of the rules below ask.
  class ExtentInCache {
   public:
    ExtentInCache(const ImageImpl& image, const Inode& ino, const MappedExtent& ext)
        : cache_(*image.cache_), key_(image.extent_key(ino, ext)) {}
    const PclusterKey& key() const { return key_; }
    bool cached() {
      if (!cached_) cached_ = cache_.has(key_);
      return *cached_;
    }

   private:
    PclusterCache& cache_;
    PclusterKey key_;
    std::optional<bool> cached_;
  };
  void read_extent(const Inode& ino, const MappedExtent& ext, uint64_t skip, std::span<uint8_t> out,
                   ExtentInCache& in_cache) const;
  bool decode_direct(const MappedExtent& ext, uint64_t skip, uint64_t length, ExtentInCache& in_cache) const;
  void ask_ahead(const Inode& ino, std::span<const MappedExtent> extents) const;
  bool head_only(const MappedExtent& ext, uint64_t skip, uint64_t length, ExtentInCache& in_cache) const;
  // Whether the extent's stream may decode to more than the extent (a partial decode).
  bool decodes_partly(const MappedExtent& ext) const;
  // Decodes the extent's first `length` bytes only, into a buffer of the pool.
  std::shared_ptr<compress::UninitBytes> decoded_head(const Inode& ino, const MappedExtent& ext, uint64_t length) const;
  // decoded_head's bytes [skip, skip + out.size()), copied out.
  void read_extent_head(const Inode& ino, const MappedExtent& ext, uint64_t skip, std::span<uint8_t> out) const;
  PclusterCache::Bytes decoded_extent(const Inode& ino, const MappedExtent& ext) const;
  PclusterKey extent_key(const Inode& ino, const MappedExtent& ext) const;
  // What a decode is for: the bytes, or only the verdict on the stream (a check of the image),
  // when `out` is scratch that may be left holding anything (compress::Decoder::verify).
  enum class Keep { Bytes, Verdict };
  // Decodes the extent into `out` (exactly ext.llen bytes), bypassing the cache.
  // `unchecked`: Zero for reused buffers, Walk for fresh ones (compress::Decoder::Unchecked).
  void decode_into(const Inode& ino, const MappedExtent& ext, std::span<uint8_t> out,
                   compress::Decoder::Unchecked unchecked, Keep keep = Keep::Bytes) const;
  // The same for a random reader's head: from the mapping of the image where it can
  // (OpenOptions::mapped_reads), else as decode_into.
  void decode_head_into(const Inode& ino, const MappedExtent& ext, std::span<uint8_t> out,
                        compress::Decoder::Unchecked unchecked) const;
  // The same from the pcluster's bytes, read already (`raw`), with `decoder`.
  void decode_stream(const Inode& ino, const MappedExtent& ext, std::span<const uint8_t> raw, std::span<uint8_t> out,
                     compress::Decoder::Unchecked unchecked, compress::Decoder& decoder, Keep keep = Keep::Bytes) const;

  // Compressed extents whose pclusters follow each other on the device, for a reader that decodes
  // them in file order (fsck, extract): read from the image in one call rather than one each
  // (checking the linux tree's 4 KiB pclusters made a read per block, 118,000 of them).
  class PclusterRun {
   public:
    PclusterRun(const ImageImpl& image, const Inode& ino) : image_(image), ino_(ino) {}
    // Whether `ext` may join: decoded from the device, right after the last one, within the
    // budget, and inside the image (a pcluster pointing past its end is read alone, to fail alone).
    bool joins(const MappedExtent& ext) const;
    void add(const MappedExtent& ext) { extents_.push_back(ext); }
    const std::vector<MappedExtent>& extents() const { return extents_; }
    // Decodes extents()[i] into `out` (its llen bytes); the first call reads them all.
    void decode(size_t i, std::span<uint8_t> out, compress::Decoder::Unchecked unchecked, Keep keep = Keep::Bytes);
    void clear() {
      extents_.clear();
      read_ = false;
    }

   private:
    const ImageImpl& image_;
    const Inode& ino_;
    std::vector<MappedExtent> extents_;
    std::unique_ptr<DecoderPool::Lease> lease_;  // taken at the first decode: a decoder and a buffer
    bool read_ = false;
  };

  // One directory block of `dir` (blksz bytes at most), from the metadata cache where it is
  // stored as it is.
  SharedBytes dir_block(const Inode& dir, uint64_t index) const;

  // Long xattr name prefixes, expanded (short prefix of the base index + infix).
  const std::vector<std::string>& long_prefixes() const;
  std::optional<std::string> xattr_name(uint64_t nid, uint8_t index, std::string_view suffix) const;
  void read_shared_xattr(uint64_t nid, uint32_t id, std::vector<Xattr>& out) const;

  InputImage file_;
  format::Superblock sb_;
  uint32_t blksz_ = 0;
  uint64_t meta_base_ = 0;  // byte offset of nid 0 on the device
  uint16_t available_algs_ = 0;
  format::ComprConfigs compr_cfgs_;
  std::vector<format::DeviceSlot> devices_;
  uint16_t device_id_mask_ = 0;
  std::optional<Inode> metabox_;
  std::optional<Inode> packed_;
  std::unique_ptr<PclusterCache> cache_;
  mutable BufferPool buffers_;  // decoded extents' and read_shared's buffers
  std::unique_ptr<MetaCache> meta_;
  mutable std::mutex indexes_asked_mutex_;
  mutable std::unordered_set<uint64_t> indexes_asked_;  // nids (ask_for_index), forgotten past a bound
  std::unique_ptr<DecoderPool> decoders_;
  bool whole_extents_ = false;  // OpenOptions::whole_extents
  bool lz4_unchecked_ = false;  // !OpenOptions::check_lz4_offsets

  // Loaded on first use: reading them may need the packed or metabox inode's compressed data.
  mutable std::mutex prefixes_mutex_;
  mutable std::optional<std::vector<std::string>> prefixes_;
  // Sums of 4-byte encoded-extent records (reader/compressed_map.h).
  mutable ExtentStarts extent_starts_;
};

}  // namespace erofs::reader
