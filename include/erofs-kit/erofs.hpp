// erofs-kit's public C++ API: read EROFS images and build them from a directory, a tar stream,
// an mtree manifest or entries added from code.
//
// Every call reports failure as a value (Result<T> holding an Error with a one-line message);
// nothing is printed and nothing throws across this interface except std::bad_alloc. There is no
// global state: any number of Image and ImageBuilder objects may live in one process, each used
// by one thread at a time (an Image's const methods may be called from several threads at once).
// The header needs C++17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#ifndef EROFS_KIT_API
#define EROFS_KIT_API __attribute__((visibility("default")))
#endif

namespace erofs {

enum class ErrorCode {
  InvalidArgument = 1,  // a setting or argument is malformed (the message names it)
  NotFound,             // no such path in the image or the builder
  Io,                   // a system call failed (sys_errno says why)
  Corrupt,              // the image is damaged or hostile
  Unsupported,          // the image uses a feature this version does not read
  Build,                // the source cannot be turned into an image (the message names the entry)
};

struct Error {
  ErrorCode code = ErrorCode::Io;
  int sys_errno = 0;    // the errno value for Io and NotFound, else 0
  std::string message;  // one line
};

// A value or the Error that prevented it.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // Only when ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  // Only when !ok().
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}
  bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

enum class FileType { Regular, Directory, Symlink, CharDevice, BlockDevice, Fifo, Socket };

struct FileInfo {
  uint64_t ino = 0;  // the inode's number (nid) in the image
  FileType type = FileType::Regular;
  uint32_t mode = 0;  // st_mode: type and permission bits
  uint32_t uid = 0, gid = 0;
  uint64_t size = 0;
  int64_t mtime = 0;
  uint32_t mtime_nsec = 0;
  uint32_t nlink = 0;
  uint32_t rdev_major = 0, rdev_minor = 0;
};

struct DirEntry {
  std::string name;
  uint64_t ino = 0;
  FileType type = FileType::Regular;
};

struct Xattr {
  std::string name;  // with its prefix: "user.foo", "security.capability", "system.posix_acl_access"
  std::string value;
};

struct ImageInfo {
  uint32_t block_size = 0;
  uint64_t image_bytes = 0;
  uint64_t inodes = 0;
  uint64_t root_ino = 0;
  std::string uuid;   // xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
  std::string label;
};

struct OpenSettings {
  bool verify_checksum = true;
  uint64_t cache_bytes = 64ull << 20;  // decoded compressed data kept for reuse; 0: none
};

struct CheckReport {
  std::vector<std::string> problems;  // one line each; empty when the image is clean
  uint64_t inodes = 0, directories = 0, files = 0, data_bytes = 0;
};

struct CheckSettings {
  bool data = true;      // decode every byte of every file
  unsigned workers = 0;  // threads checking data; 0: two per core. The report is the same for any count.
};

// Counters of an extraction in progress.
struct ExtractProgress {
  uint64_t entries = 0;       // inodes created so far
  uint64_t total_inodes = 0;  // the image's inode count
  uint64_t bytes = 0;         // file bytes written
};

struct ExtractSettings {
  std::string path = "/";  // extract only this directory or file of the image
  bool owners = true;      // chown (as root)
  bool xattrs = true;
  unsigned workers = 0;    // threads creating files; 0: one per core
  // Called about every progress_interval_ms from the calling thread, and once at the end.
  std::function<void(const ExtractProgress&)> on_progress;
  unsigned progress_interval_ms = 200;
  // An entry extracted with a problem (an xattr the destination refuses). Any thread, one at a time.
  std::function<void(const std::string&)> on_warning;
  // An entry left out because the image is damaged there (one line naming its path); the rest is
  // extracted. Any thread, one at a time.
  std::function<void(const std::string&)> on_error;
};

struct ExtractSummary {
  uint64_t directories = 0, files = 0, symlinks = 0, special_files = 0, hard_links = 0, bytes = 0;
  uint64_t errors = 0;    // entries left out (on_error)
  uint64_t warnings = 0;  // on_warning calls
};

// A read-only image. Paths are absolute or relative to the image's root; symlinks in the middle
// of a path are followed, the last component is not.
class EROFS_KIT_API Image {
 public:
  static Result<Image> open(const std::string& path, const OpenSettings& settings = {});
  Image(Image&&) noexcept;
  Image& operator=(Image&&) noexcept;
  ~Image();

  ImageInfo info() const;
  Result<FileInfo> stat(std::string_view path) const;
  Result<FileInfo> stat(uint64_t ino) const;
  // Entries in on-disk (byte) order, without "." and "..".
  Result<std::vector<DirEntry>> list(std::string_view path) const;
  // Reads up to `length` bytes at `offset` of a regular file; returns how many (0 at the end).
  Result<size_t> read(uint64_t ino, uint64_t offset, void* buffer, size_t length) const;
  // The whole content of a regular file.
  Result<std::string> read_file(std::string_view path) const;
  Result<std::string> readlink(std::string_view path) const;
  Result<std::vector<Xattr>> xattrs(std::string_view path) const;
  // Writes the tree (or the subtree at `path`) into the directory `destination`, which must not
  // hold any of its names yet; nothing outside it is created or changed. `owners`: chown as root.
  // Fails (Corrupt, naming the first) when an entry could not be extracted: the image is damaged there.
  Result<void> extract(const std::string& destination, std::string_view path = "/", bool owners = true) const;
  // The same on several threads: entries the image has damaged are left out (on_error, counted in
  // ExtractSummary::errors) and the rest is extracted; fails only when the extraction cannot go on
  // (the destination fails, or the tree is hostile: a loop, a directory under two names).
  Result<ExtractSummary> extract(const std::string& destination, const ExtractSettings& settings) const;
  // Checks every structure and, with `data`, decodes every byte of every file.
  Result<CheckReport> check(bool data = true) const;
  Result<CheckReport> check(const CheckSettings& settings) const;

 private:
  struct Impl;
  explicit Image(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Counters of a build in progress.
struct Progress {
  bool scanned = false;  // the totals are known
  uint64_t total_files = 0, total_bytes = 0;
  uint64_t files = 0, bytes_in = 0, bytes_out = 0;
  // With fragments, once the files are done: the packed inode (the fragments gathered from
  // them) is compressed, packed_done of its packed_bytes so far.
  uint64_t packed_bytes = 0, packed_done = 0;
};

struct BuildSettings {
  uint32_t block_size = 4096;
  std::string compression;  // as mkfs's -z: "" (none), "lz4", "lz4hc,12", "lzma,dictsize=1048576", "zstd:lzma"
  uint32_t pcluster_bytes = 0;  // as -C: the largest pcluster (0: one block)
  std::string extended;         // as -E: "ztailpacking,fragments,dedupe", "legacy-compress", ...
  std::string compress_hints;   // as --compress-hints: the path of a hint file
  std::string hot_list;         // as --hot-list: a file of paths whose data goes first, kept out of fragments
  unsigned workers = 0;         // compression threads; 0: one per core. The image is the same for any count.
  uint32_t chunk_size = 0;      // as --chunksize: uncompressed files stored as chunks of this size
  std::optional<int64_t> timestamp;  // as -T: every mtime and the build time
  bool mkfs_time = false;            // as --mkfs-time: with timestamp, only the build time
  std::string uuid;             // as -U: "" (derived from the content), "random", "clear" or a UUID
  std::string label;            // as -L
  bool all_root = false;        // as --all-root: owner 0:0
  std::optional<uint32_t> force_uid, force_gid;  // as --force-uid/--force-gid (they win over all_root)
  std::vector<std::string> exclude_paths, exclude_regexes;  // directory, tar and manifest sources
  bool aufs = false, ovlfs_strip = false;                   // tar sources, as --aufs / --ovlfs-strip
  // As --ignore-unreadable: unreadable inputs are left out (each reported through on_warning and
  // counted in BuildSummary::skipped_inputs) instead of failing the build.
  bool ignore_unreadable = false;
  // As --verify: the finished image is read back and compared with the source, entry by entry;
  // a difference fails the build with an Error naming it (the image stays, for inspection).
  bool verify = false;
  // As --verity[=OPTIONS]: a dm-verity hash tree (format version 1) after the image, with
  // veritysetup's superblock in front of it. "": SHA-256, 4096-byte data and hash blocks;
  // "hash=sha512,data-block=1024,hash-block=4096" (any of them) over those defaults. Setting
  // verity_salt, verity_file or root_hash_file turns it on as well.
  std::optional<std::string> verity;
  std::optional<std::string> verity_salt;  // as --verity-salt: hex, or "none"; unset: derived from the content
  std::string verity_file;                 // as --verity-file: superblock and tree go to this file instead
  std::string root_hash_file;              // as --root-hash-file: the root hash in hex, as veritysetup writes it
  // Called from a separate thread about every progress_interval_ms while building, and once at
  // the end from the building thread.
  std::function<void(const Progress&)> on_progress;
  unsigned progress_interval_ms = 200;
  std::function<void(const std::string&)> on_warning;  // non-fatal problems
};

// The dm-verity tree a build wrote: what veritysetup and the kernel's dm-verity need besides it.
struct VeritySummary {
  std::string root_hash;       // hex
  std::string salt;            // hex; empty for no salt
  std::string hash_algorithm;  // "sha256" or "sha512"
  uint64_t hash_offset = 0;    // the superblock's byte offset: in the image, or 0 in verity_file
  uint32_t data_block_size = 0, hash_block_size = 0;
  uint64_t data_blocks = 0;    // the blocks of the image the tree covers, from its start
  uint64_t tree_bytes = 0;     // superblock block and tree, from hash_offset on
  double seconds = 0;          // of BuildSummary::seconds, the tree's part: reading the image back, hashing, writing
};

struct BuildSummary {
  uint64_t inodes = 0, regular_files = 0, directories = 0, symlinks = 0, special_files = 0, hard_links = 0;
  uint64_t bytes_in = 0, image_bytes = 0;
  uint64_t compressed_files = 0;
  double seconds = 0;
  uint64_t compact_inodes = 0, extended_inodes = 0;
  uint64_t data_blocks = 0, metadata_blocks = 0;
  uint64_t skipped_inputs = 0;  // with ignore_unreadable
  bool verified = false;        // with verify: the image matched the source
  std::optional<VeritySummary> verity;  // with verity
};

// Entry metadata for entries added from code. `mode` holds the permission bits (07777).
struct EntryMeta {
  uint32_t mode = 0644;
  uint32_t uid = 0, gid = 0;
  int64_t mtime = 0;
  uint32_t mtime_nsec = 0;
  std::vector<Xattr> xattrs;
};

// Builds one image. Either add entries one by one and call write(), or use a from_* function.
// The image is written to a temporary file beside the target and renamed when complete; on
// failure nothing is left under the target name.
class EROFS_KIT_API ImageBuilder {
 public:
  explicit ImageBuilder(BuildSettings settings = {});
  ImageBuilder(ImageBuilder&&) noexcept;
  ImageBuilder& operator=(ImageBuilder&&) noexcept;
  ~ImageBuilder();

  // Paths name the entry in the image ("a/b" or "/a/b"); the parent directory must have been
  // added already ("/" always exists). Adding a path twice is an error.
  Result<void> set_root(const EntryMeta& meta);
  Result<void> add_directory(std::string_view path, const EntryMeta& meta);
  // The content is kept in memory until the builder is destroyed; add_file_from suits large files
  // better.
  Result<void> add_file(std::string_view path, const EntryMeta& meta, std::string_view content);
  // The content is read from `source` during write().
  Result<void> add_file_from(std::string_view path, const EntryMeta& meta, const std::string& source);
  Result<void> add_symlink(std::string_view path, const EntryMeta& meta, std::string_view target);
  // type: CharDevice, BlockDevice, Fifo or Socket.
  Result<void> add_special(std::string_view path, const EntryMeta& meta, FileType type, uint32_t rdev_major = 0,
                           uint32_t rdev_minor = 0);
  // Another name for the regular file (or special file) already added at `target`.
  Result<void> add_hard_link(std::string_view path, std::string_view target);
  // Adds (or replaces) one xattr of the entry already added at `path`.
  Result<void> add_xattr(std::string_view path, const Xattr& xattr);
  Result<BuildSummary> write(const std::string& image_path);

  static Result<BuildSummary> from_directory(const std::string& source_dir, const std::string& image_path,
                                             const BuildSettings& settings = {});
  // `archive`: a tar file (plain or compressed), or "-" for standard input.
  static Result<BuildSummary> from_tar(const std::string& archive, const std::string& image_path,
                                       const BuildSettings& settings = {});
  // Contents come from the paths the manifest names, resolved against `content_root` (empty:
  // the manifest's directory).
  static Result<BuildSummary> from_mtree(const std::string& manifest, const std::string& content_root,
                                         const std::string& image_path, const BuildSettings& settings = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace erofs
