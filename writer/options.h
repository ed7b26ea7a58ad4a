// Everything that shapes an image build, independent of how the options were spelled.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "verity/params.h"

namespace erofs::writer {

struct Progress;  // writer/progress.h

enum class UuidMode { Derived, Random, Clear, Fixed };
enum class InodeForm { Auto, Compact, Extended };

struct SourceOptions {
  bool all_root = false;
  std::optional<uint32_t> force_uid, force_gid;
  std::vector<std::string> exclude_paths;    // relative to the source root
  std::vector<std::string> exclude_regexes;  // matched against the relative path
  bool ignore_unreadable = false;            // warn and skip instead of failing
};

// --compress-hints: files whose image path matches `pattern` use this pcluster size and algorithm.
struct CompressHint {
  uint32_t pcluster_bytes = 0;
  std::string pattern;     // extended regex, searched in the path without its leading '/'
  unsigned algorithm = 0;  // index into CompressionOptions::algorithms
};

struct CompressionOptions {
  std::vector<compress::Spec> algorithms;  // -z ALG[:ALG2]; the first one unless a hint says otherwise
  std::vector<CompressHint> hints;         // the first matching hint applies
  uint32_t pcluster_bytes = 0;             // -C: the largest pcluster (0: one block)
  bool full_indexes = false;               // -E legacy-compress
  bool ztailpacking = false;               // -E ztailpacking: small last pieces inline
  bool fragments = false;                  // -E fragments: small last pieces in the packed inode
  bool all_fragments = false;              // -E all-fragments: every file in the packed inode
  bool dedupe = false;                     // -E dedupe: equal extents share one pcluster
  unsigned workers = 0;                    // 0: one per core
  uint64_t segment_bytes = 32 << 20;       // input per compression job (fixes extent boundaries)
};

// --verity: a dm-verity hash tree over the finished image (writer/data/verity_writer.h).
struct VerityOptions {
  verity::Params params;        // its salt is used as it is unless derive_salt
  bool derive_salt = true;      // from the image's content, so equal inputs give equal trees
  std::string hash_file;        // --verity-file: superblock and tree go there instead of after the image
  std::string root_hash_file;   // --root-hash-file: the root hash in hex, as veritysetup writes it
  unsigned threads = 0;         // hashing threads; 0: one per core. The tree is the same for any count.
};

struct BuildOptions {
  uint32_t block_size = 4096;
  UuidMode uuid_mode = UuidMode::Derived;
  std::array<uint8_t, 16> uuid{};
  std::string label;
  // -T / SOURCE_DATE_EPOCH: the image time; unless mkfs_time_only, also every inode's mtime.
  std::optional<int64_t> fixed_time;
  bool mkfs_time_only = false;
  InodeForm inode_form = InodeForm::Auto;
  // Non-zero: regular files are CHUNK_BASED with chunks of this many bytes (a power of two, at
  // least the block size); chunks that are holes in the source stay unmapped.
  uint32_t chunk_size = 0;
  std::optional<CompressionOptions> compression;
  // --hot-list: regular files (paths in the image, without a leading '/') whose data is written
  // first, in this order, and kept out of fragments, so that reading them decodes only their own
  // pclusters (files read at boot, say).
  std::vector<std::string> hot_files;
  std::optional<VerityOptions> verity;
  SourceOptions source;
  std::function<void(const std::string&)> warn;  // non-fatal problems (skipped inputs)
  Progress* progress = nullptr;                   // updated while building, when set
};

// What --verity wrote: what veritysetup and the kernel need besides the tree itself.
struct VerityStats {
  verity::Params params;
  std::vector<uint8_t> root_hash;
  uint64_t data_blocks = 0;
  uint64_t hash_offset = 0;  // the superblock's offset: in the image, or 0 in the hash file
  uint64_t tree_bytes = 0;   // superblock block and tree, from hash_offset on
  double seconds = 0;        // reading the image back, hashing it, writing the tree
};

struct BuildStats {
  uint64_t inodes = 0, regular_files = 0, directories = 0, symlinks = 0, specials = 0;
  uint64_t hard_links = 0;      // extra dentries naming an already counted inode
  uint64_t bytes_in = 0;        // file content read from the source
  uint64_t image_bytes = 0;     // the image file, with an appended hash tree
  uint64_t data_blocks = 0, meta_blocks = 0;
  uint64_t compact_inodes = 0, extended_inodes = 0;
  uint64_t compressed_files = 0;
  uint64_t skipped_inputs = 0;  // with ignore_unreadable
  std::optional<VerityStats> verity;
  double seconds = 0;
};

}  // namespace erofs::writer
