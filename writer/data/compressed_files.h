// The data phase of a compressed build: compresses the regular files in order, appends their
// pclusters, decides where each file's small last piece goes (inline next to the inode, into the
// packed inode, or its own block), and stores a file flat when compression saves nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <regex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "format/zmap.h"
#include "writer/data/compress_pipeline.h"
#include "writer/data/packed_stream.h"
#include "writer/data/output_image.h"
#include "writer/options.h"
#include "writer/layout/plan.h"
#include "writer/spill_file.h"

namespace erofs::writer {

class CompressedFiles {
 public:
  CompressedFiles(OutputImage& out, SpillFile& tails, const BuildOptions& options, const std::string& target);
  ~CompressedFiles();
  CompressedFiles(const CompressedFiles&) = delete;
  CompressedFiles& operator=(const CompressedFiles&) = delete;

  // `files`: regular files in the order their data goes into the image.
  void write_files(const std::vector<Plan*>& files, BuildStats& stats);
  // Writes the packed inode's data (the fragments) and fills `packed`; false when there is none.
  bool write_packed(Plan& packed, BuildStats& stats);

  uint16_t algorithm_bitmap() const { return algorithms_; }
  format::ComprConfigs configs() const { return configs_; }
  bool used_inline() const { return used_inline_; }
  bool used_dedupe() const { return used_dedupe_; }

 private:
  struct Job {
    Plan* plan;
    const FileContent* content;
    uint64_t size;
    TailMode tail;
    unsigned algorithm = 0;
    uint32_t pcluster = 0;
  };
  Job job_for(Plan* p);
  TailMode tail_mode(const Plan& p) const;
  void compress_all(const std::vector<Job>& jobs, bool from_source, BuildStats& stats);
  void add_segment(Plan& p, SegmentResult&& r);
  void add_deduped(Plan& p, const SegmentResult& r, size_t i);
  bool add_partial_ref(Plan& p, const SegmentResult& r, size_t i, unsigned algorithm);
  void place_tail(Plan& p, const ZTailPiece& t, PlannedExtent e);
  void write_block_tail(Plan& p, const ZTailPiece& t, PlannedExtent e);
  bool flat_is_smaller(const Plan& p, const ZSegment& z) const;
  void write_flat(Plan& p, std::span<const uint8_t> input);
  void whole_file_fragment(Plan& p, BuildStats& stats);
  std::span<const uint8_t> source_bytes(const Plan& p, const SegmentResult& r, uint64_t offset, uint64_t length);
  uint64_t add_fragment(std::span<const uint8_t> raw);

  OutputImage& out_;
  SpillFile& tails_;
  const BuildOptions& opt_;
  const CompressionOptions& copt_;
  uint32_t bs_;
  unsigned bits_;
  uint32_t pcluster_;
  uint16_t algorithms_ = 0;
  format::ComprConfigs configs_;
  bool used_inline_ = false;
  bool used_dedupe_ = false;
  uint32_t largest_pcluster_ = 0;
  // dedupe: (digest, decoded length, plain, algorithm) of every pcluster written -> (block, block count)
  std::map<std::tuple<uint64_t, uint64_t, uint64_t, bool, unsigned>, std::pair<uint64_t, uint32_t>> pclusters_;
  // dedupe with partial references: compressed pclusters by the digest of their first block
  struct SharedPcluster {
    uint64_t pblk;
    uint32_t nblocks;
    unsigned algorithm;
    std::vector<ZDigest> prefixes;  // digest of the first k decoded blocks at [k - 1]
  };
  std::vector<SharedPcluster> shared_;
  std::unordered_map<uint64_t, size_t> shared_by_first_block_;
  std::map<unsigned, std::unique_ptr<compress::Encoder>> remainder_encoders_;
  std::vector<std::regex> hint_patterns_;
  std::map<const Plan*, unsigned> file_algorithm_;  // files whose hint picked another algorithm
  // The packed inode's content (fragments), when used; equal fragments are stored once.
  std::unique_ptr<PackedStream> packed_;
  ContentOpener opener_;         // whole-file fragments and bytes read again, on the calling thread
  std::vector<uint8_t> reread_;  // what they were read into
  std::map<std::tuple<uint64_t, uint64_t, uint64_t>, uint64_t> fragment_offsets_;  // (hash, length) -> offset
  // Files whose data ends in a fragment, and its length: their offsets count in the order the
  // fragments were appended until the packed inode is written (PackedStream::placed).
  std::vector<std::pair<Plan*, uint64_t>> fragment_users_;
};

}  // namespace erofs::writer
