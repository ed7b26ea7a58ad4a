// Read-only access to an EROFS image: superblock, inodes, directories, path lookup, file data
// and xattrs. Thread-safe (pread-based); every on-disk number is validated before use, and any
// inconsistency raises CorruptError with a one-line message that names the inode and the problem.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "format/constants.h"
#include "format/inode.h"
#include "format/superblock.h"

namespace erofs::reader {

// The image is damaged or hostile.
class CorruptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The image uses a feature this reader does not support; the message names it.
class UnsupportedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// I/O failures and lookups of paths that do not exist (message like strerror, with the path).
class IoError : public std::runtime_error {
 public:
  IoError(const std::string& what, int err) : std::runtime_error(what), error(err) {}
  int error;  // errno value
};

struct Inode {
  uint64_t nid = 0;
  format::DiskInode disk;
  uint64_t pos = 0;          // byte offset of the inode in the image (or metabox stream)
  uint32_t xattr_size = 0;   // inline xattr area size
  uint32_t mode = 0;
  uint64_t size = 0;
  uint32_t uid = 0, gid = 0;
  int64_t mtime = 0;         // seconds, resolved against the superblock epoch for compact inodes
  uint32_t mtime_nsec = 0;
  uint32_t nlink = 0;
  uint32_t rdev_major = 0, rdev_minor = 0;
  uint64_t startblk = format::kNullAddr;  // flat layouts: first data block (NULL: none)

  bool is_dir() const;
  bool is_reg() const;
  bool is_symlink() const;
  format::Layout layout() const { return disk.layout; }
  // nid bit 63: the inode and its metadata live in the metabox inode's data, not on the device.
  bool in_metabox() const { return nid >> 63; }
  uint64_t meta_end() const { return pos + disk.disk_size() + xattr_size; }
};

struct DirEntry {
  std::string name;
  uint64_t nid = 0;
  uint8_t file_type = 0;
};

struct Xattr {
  std::string name;  // full name, prefix included ("user.foo", "system.posix_acl_access")
  std::string value;
};

// Where a run of a file's bytes is stored.
struct Extent {
  enum class Kind : uint8_t {
    Hole,        // reads as zeros
    Plain,       // stored uncompressed on the device at `physical`
    Compressed,  // a pcluster of `physical_length` bytes at device byte `physical`
    Inline,      // in the inode's metadata, at metadata byte `physical` (compressed if algorithm >= 0)
    Fragment,    // at byte `physical` of the packed inode's data
  };
  uint64_t offset = 0, length = 0;  // the file bytes [offset, offset + length)
  Kind kind = Kind::Hole;
  uint64_t physical = 0;
  uint64_t physical_length = 0;
  int algorithm = -1;    // compress::Algorithm id; -1 when stored uncompressed
  bool partial = false;  // decodes only a prefix of a shared pcluster (dedupe)
};

struct OpenOptions {
  bool verify_checksum = true;
  // Decoded compressed extents kept for reuse (shared by all threads); 0 disables the cache.
  uint64_t pcluster_cache_bytes = 64ull << 20;
  // Metadata blocks (inodes, directories, indexes, xattrs) kept, so each is read once
  // (reader/meta_cache.h); 0 reads them again whenever they are needed.
  uint64_t metadata_cache_bytes = 16ull << 20;
  // Refuse LZ4 streams with a match at offset 0 (compress::DecoderConfig::check_lz4_offsets).
  // Without the check, such a match reads zeros, so decoded bytes are still a function of the
  // image alone.
  bool check_lz4_offsets = true;
  // For readers that read every file (fsck, extract): a read that starts inside an extent decodes
  // it whole into the cache, not only up to the bytes asked for, since the rest will be asked for
  // too. Workers reading the files beside each other in the packed inode otherwise each decoded
  // the head of the same pcluster (a fifth of the CPU of checking the tail-packed linux tree).
  bool whole_extents = false;
  // Also for readers that read every file once: reads of 32 KiB or more whose bytes the page
  // cache does not hold go around it (O_DIRECT, reader/input_image.h), so reading the image costs
  // no fresh page per 4 KiB. Readers that come back to the same bytes (FUSE) do better with the
  // cache: it keeps compressed pclusters that the pcluster cache let go (9 MiB of random reads of
  // a 64 KiB-pcluster file read 196 MB from the disk around it, 158 MB through it).
  bool direct_reads = false;
  // For a random reader (FUSE): the heads of extents that reads end inside are decoded straight
  // from a mapping of the image, without a copy of the pcluster out of the page cache (9 MiB of
  // random 4 KiB reads of the 10^9-byte file's 64 KiB-pcluster image: see docs/design.md). Opening
  // with it installs the reader's SIGBUS handler (reader/mapping_faults.h), which keeps a
  // truncated or failing image an error.
  bool mapped_reads = false;
};

// Bytes of a file in memory that stays valid while `owner` lives.
struct SharedBytes {
  std::shared_ptr<const void> owner;
  std::span<const uint8_t> bytes;
};

class Image {
 public:
  // Throws IoError (cannot open/read), CorruptError (bad magic, checksum, sizes) or
  // UnsupportedError (unknown incompatible features: the message names them).
  static std::unique_ptr<Image> open(const std::string& path, const OpenOptions& options = {});
  virtual ~Image() = default;

  virtual const format::Superblock& superblock() const = 0;
  virtual uint32_t block_size() const = 0;
  virtual uint64_t image_size() const = 0;  // bytes of the image file
  virtual uint64_t root_nid() const = 0;

  virtual Inode inode(uint64_t nid) const = 0;
  // Calls fn for every entry in on-disk order, "." and ".." included; fn returns false to stop.
  virtual void read_dir(const Inode& dir, const std::function<bool(const DirEntry&)>& fn) const = 0;
  // The same from `position` (0: the first entry; else a `next` this call gave), with the
  // position of the entry after each one: a directory listed in parts, nothing held in between
  // (FUSE readdir offsets).
  virtual void read_dir_at(const Inode& dir, uint64_t position,
                           const std::function<bool(const DirEntry&, uint64_t next)>& fn) const = 0;
  // Binary search over blocks then entries.
  virtual std::optional<DirEntry> lookup(const Inode& dir, std::string_view name) const = 0;
  // "/a/b/c" or "a/b/c" from the root; symlinks in the middle are followed (depth limit 40); the last
  // component is followed only when follow_last is set. Throws IoError(ENOENT/ENOTDIR/ELOOP).
  virtual Inode resolve(std::string_view path, bool follow_last = false) const = 0;

  // Reads up to buf.size() bytes at `offset`, clamped to the file size; returns the byte count.
  virtual size_t read(const Inode& file, uint64_t offset, std::span<uint8_t> buf) const = 0;
  // The same bytes as read(), as pieces: those of compressed extents point into the pcluster
  // cache's decoded data instead of being copied; the rest come in buffers of their own. Lets a
  // reader hand decoded data on without a copy.
  virtual std::vector<SharedBytes> read_shared(const Inode& file, uint64_t offset, uint64_t length) const = 0;
  // Where the file's bytes from `offset` on lie in the image file as they are (flat and chunk-based
  // layouts): the position there and how many bytes follow contiguously (to the end of the run,
  // clamped to the file size). nullopt for holes, inline tails and compressed data. Lets a reader
  // hand such data on without copying it (splice from file_descriptor()).
  struct StoredRun {
    uint64_t position = 0, length = 0;
  };
  virtual std::optional<StoredRun> stored_run(const Inode& file, uint64_t offset) const = 0;
  // The image file, open read-only for the Image's lifetime.
  virtual int file_descriptor() const = 0;
  // Decodes the compressed extents overlapping [offset, offset + length) into the pcluster cache,
  // for readers about to ask for them (readahead). Nothing to do for other layouts.
  virtual void prefetch(const Inode& file, uint64_t offset, uint64_t length) const = 0;
  // The extent holding byte `offset` (< the file size) of a regular file.
  virtual Extent extent_at(const Inode& file, uint64_t offset) const = 0;
  // The whole mapping of a regular file, in file order, adjacent runs of one kind not merged.
  virtual std::vector<Extent> extents(const Inode& file) const = 0;
  // The extents of extents() that start in [from, to), in file order, one call each. Lets a
  // reader split a large file at extent boundaries (each extent belongs to the piece it starts
  // in) without holding its whole mapping.
  virtual void extents_in(const Inode& file, uint64_t from, uint64_t to,
                          const std::function<void(const Extent&)>& fn) const = 0;
  // Maps every block of the extents that start in [from, to) on its own, as a reader at a random
  // offset (or the kernel) maps it, so that every lcluster index entry is followed and checked:
  // throws CorruptError when an entry is invalid or a block maps to another extent than the one
  // holding it. Nothing to check for layouts without indexes.
  virtual void check_mapping(const Inode& file, uint64_t from, uint64_t to) const = 0;
  // fsck's data check of the extents that start in [from, to): check_mapping's, then every byte
  // of each extent read once (a compressed one judged whole, with `buf`, which grows to hold it,
  // as scratch: compress::Decoder::verify), in one walk of the mapping. `bytes` counts the bytes read, holes included, as it goes,
  // so that it holds those before the error when one is thrown.
  virtual void check_data(const Inode& file, uint64_t from, uint64_t to, std::vector<uint8_t>& buf,
                          uint64_t& bytes) const = 0;
  virtual std::string readlink(const Inode& link) const = 0;
  virtual std::vector<Xattr> xattrs(const Inode& inode) const = 0;

  // Raw bytes of the image (bounds-checked), for fsck and dump.
  virtual void read_raw(uint64_t offset, std::span<uint8_t> buf) const = 0;
  // pread calls on the image file so far, by every thread: what the caches save shows here.
  virtual uint64_t image_reads() const = 0;
  // Those of them that went around the page cache (OpenOptions::direct_reads).
  virtual uint64_t image_direct_reads() const = 0;
  // Pclusters decoded from the mapping of the image (OpenOptions::mapped_reads).
  virtual uint64_t image_mapped_reads() const = 0;
  // Read-ahead hints given so far: a read that needs several pclusters from the device asks for
  // them all before it waits for the first, and the first mapping of a large file for its index.
  virtual uint64_t image_hints() const = 0;
};

}  // namespace erofs::reader
