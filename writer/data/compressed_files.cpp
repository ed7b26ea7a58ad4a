#include "writer/data/compressed_files.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "format/constants.h"
#include "util/free_memory.h"
#include "writer/align.h"
#include "writer/errors.h"
#include "writer/layout/inode_record.h"
#include "writer/progress.h"
#include "writer/source/file_content.h"

namespace erofs::writer {

using compress::kMaxPclusterBytes;


CompressedFiles::CompressedFiles(OutputImage& out, SpillFile& tails, const BuildOptions& o, const std::string& target)
    : out_(out), tails_(tails), opt_(o), copt_(*o.compression), bs_(o.block_size), bits_(unsigned(__builtin_ctz(o.block_size))) {
  pcluster_ = copt_.pcluster_bytes ? copt_.pcluster_bytes : bs_;
  if (pcluster_ % bs_ || pcluster_ > kMaxPclusterBytes)
    throw BuildError("pcluster size (-C) must be a multiple of the block size and at most 1 MiB");
  uint32_t& largest = largest_pcluster_;
  largest = pcluster_;
  for (auto& h : copt_.hints) {
    if (h.pcluster_bytes % bs_ || h.pcluster_bytes == 0 || h.pcluster_bytes > kMaxPclusterBytes)
      throw BuildError("compress hint '" + h.pattern + "': pcluster size must be a multiple of the block size, at most 1 MiB");
    if (h.algorithm >= copt_.algorithms.size())
      throw BuildError("compress hint '" + h.pattern + "': no algorithm #" + std::to_string(h.algorithm) + " given with -z");
    try {
      hint_patterns_.emplace_back(h.pattern, std::regex::extended | std::regex::nosubs);
    } catch (const std::regex_error& e) {
      throw BuildError("compress hint '" + h.pattern + "': " + e.what());
    }
    largest = std::max(largest, h.pcluster_bytes);
  }
  if (copt_.algorithms.empty()) throw BuildError("no compression algorithm given");
  for (auto& spec : copt_.algorithms) {
    algorithms_ |= uint16_t(1u << unsigned(spec.algorithm));
    auto enc = compress::make_encoder(spec, largest);
    switch (spec.algorithm) {
      case compress::Algorithm::Lz4:
        configs_.lz4_max_distance = 65535;
        configs_.lz4_max_pclusterblks = uint16_t(largest / bs_);
        break;
      case compress::Algorithm::Lzma: configs_.lzma_dict_size = enc->lzma_dict_size(); break;
      case compress::Algorithm::Deflate: configs_.deflate_window_bits = enc->deflate_window_bits(); break;
      case compress::Algorithm::Zstd: configs_.zstd_window_log = enc->zstd_window_log(); break;
    }
  }
  if (copt_.fragments || copt_.all_fragments) {
    packed_ = std::make_unique<PackedStream>(target);
  }
}

CompressedFiles::~CompressedFiles() = default;

// Files of the hot list keep their tails out of the packed inode: reading them decodes only
// their own data.
TailMode CompressedFiles::tail_mode(const Plan& p) const {
  if (copt_.fragments && !p.hot) return TailMode::Fragment;
  return copt_.ztailpacking ? TailMode::Inline : TailMode::None;
}

CompressedFiles::Job CompressedFiles::job_for(Plan* p) {
  Job j{p, &p->src->content, p->src->size, tail_mode(*p)};
  for (size_t i = 0; i < hint_patterns_.size(); ++i)
    if (std::regex_search(p->src->image_path, hint_patterns_[i])) {
      j.algorithm = copt_.hints[i].algorithm;
      j.pcluster = copt_.hints[i].pcluster_bytes;
      if (j.algorithm) file_algorithm_[p] = j.algorithm;
      break;
    }
  return j;
}

void CompressedFiles::write_files(const std::vector<Plan*>& files, BuildStats& stats) {
  std::vector<Job> jobs;
  for (Plan* p : files) {
    if (p->src->size == 0) {
      if (Progress* pr = opt_.progress) ++pr->files;  // nothing to compress, but done
      continue;
    }
    if (copt_.all_fragments && !p->hot) whole_file_fragment(*p, stats);
    else jobs.push_back(job_for(p));
  }
  compress_all(jobs, true, stats);
}

bool CompressedFiles::write_packed(Plan& packed, BuildStats& stats) {
  if (!packed_ || packed_->size() == 0) return false;
  for (const auto& [user, length] : fragment_users_) {
    user->z.fragment_off = packed_->placed(user->z.fragment_off, length);
    if (user->z.compact && !compact_possible(user->z)) user->z.compact = false;  // now past 4 GiB
  }
  // The files' inputs in flight are freed, but held in the arenas of the threads that read
  // them. zstd level 15 on the linux tree with fragments, RSS sampled every 0.2 s: the highest
  // sample was 245 MiB without this, while the packed inode was compressed, and 224 MiB with
  // it, at the end of the files.
  util::release_free_memory();
  packed.data_size = packed.src->size = packed_->size();
  packed.src->content = packed_->content();
  if (Progress* pr = opt_.progress) pr->packed_bytes = packed_->size();
  compress_all({{&packed, &packed.src->content, packed_->size(), TailMode::None}}, false, stats);
  return true;
}

void CompressedFiles::compress_all(const std::vector<Job>& jobs, bool from_source, BuildStats& stats) {
  if (jobs.empty()) return;
  PipelineOptions po;
  po.specs = copt_.algorithms;
  po.segment.block_size = bs_;
  po.segment.pcluster_bytes = pcluster_;
  // Extents stay within the lookback distance the 11-bit index deltas can express (2047
  // lclusters; 2000 as mkfs.erofs keeps). A lower cap left the 1 MiB pclusters of text that
  // compresses more than 4:1 part empty: capped at 4 MiB, the 10^9-byte file's -C1048576
  // -Eall-fragments image took 50 blocks more than mkfs.erofs 1.9.3's.
  po.segment.max_extent = std::min<uint64_t>(format::kMaxExtentBytes, 2000ull * bs_);
  po.segment.digests = copt_.dedupe;
  po.segment_bytes = std::max<uint64_t>(copt_.segment_bytes, pcluster_);
  po.workers = copt_.workers ? copt_.workers : std::max(1u, std::thread::hardware_concurrency());
  po.keep_input = true;
  std::vector<PipelineFile> files;
  for (auto& j : jobs) files.push_back({j.content, j.size, j.algorithm, j.pcluster, j.tail});
  run_compress_pipeline(files, po, [&](SegmentResult&& r) {
    Plan& p = *jobs[r.file].plan;
    const uint64_t n = r.size;
    bool last = r.last;
    add_segment(p, std::move(r));
    Progress* pr = opt_.progress;
    if (pr) pr->bytes_out = out_.offset();
    if (!from_source) {  // the packed inode: its bytes were counted as fragments
      if (pr) pr->packed_done += n;
      return;
    }
    stats.bytes_in += n;
    if (last && p.compressed) ++stats.compressed_files;
    if (pr) {
      pr->bytes_in += n;
      pr->files += last;
    }
  });
}

void CompressedFiles::add_segment(Plan& p, SegmentResult&& r) {
  if (r.offset == 0) {
    p.compressed = true;
    p.z = ZIndexSpec{};
    p.z.size = p.src->size;
    p.z.block_bits = bits_;
    p.z.compact = !copt_.full_indexes;
    auto alg = file_algorithm_.find(&p);
    p.z.algorithm_type = uint8_t(copt_.algorithms.at(alg == file_algorithm_.end() ? 0 : alg->second).algorithm);
    p.zblocks = 0;
    if (r.last && flat_is_smaller(p, r.z)) {
      write_flat(p, source_bytes(p, r, 0, r.size));
      return;
    }
  }
  const size_t n = r.z.extents.size() - (r.z.has_tail ? 1 : 0);
  if (copt_.dedupe) {
    for (size_t i = 0; i < n; ++i) add_deduped(p, r, i);
  } else {
    uint64_t base = out_.offset() / bs_;
    out_.append(r.z.blocks);
    for (size_t i = 0; i < n; ++i) {
      PlannedExtent e = r.z.extents[i];
      e.pblk += base;
      p.z.extents.push_back(e);
      p.zblocks += e.nblocks;
    }
  }
  // Decided before the tail is placed too: an inline tail's room depends on the index size.
  if (r.last && p.z.compact && !compact_possible(p.z)) p.z.compact = false;
  if (r.z.has_tail) place_tail(p, r.z.tail, r.z.extents.back());
  if (r.last && p.z.compact && !compact_possible(p.z)) p.z.compact = false;
}

// An extent whose decoded bytes equal an earlier one's points at that pcluster, and one that starts
// like an earlier pcluster's decoded bytes points at it with a partial reference. Only new
// pclusters are written. The digests were computed by the workers.
void CompressedFiles::add_deduped(Plan& p, const SegmentResult& r, size_t i) {
  PlannedExtent e = r.z.extents[i];
  auto chosen = file_algorithm_.find(&p);
  const unsigned alg = chosen == file_algorithm_.end() ? 0 : chosen->second;
  auto key = std::make_tuple(r.z.digests[i].lo, r.z.digests[i].hi, e.length, e.plain, alg);
  if (auto it = pclusters_.find(key); it != pclusters_.end()) {
    used_dedupe_ = true;
    e.pblk = it->second.first;
    e.nblocks = it->second.second;
    p.z.extents.push_back(e);
    return;
  }
  if (add_partial_ref(p, r, i, alg)) return;
  const uint64_t pblk = out_.offset() / bs_;
  out_.append(std::span(r.z.blocks).subspan(size_t(e.pblk) * bs_, size_t(e.nblocks) * bs_));
  p.zblocks += e.nblocks;
  pclusters_.emplace(key, std::make_pair(pblk, e.nblocks));
  const auto& prefixes = r.z.prefix_digests[i];
  if (!prefixes.empty() && shared_by_first_block_.try_emplace(prefixes[0].lo, shared_.size()).second)
    shared_.push_back({pblk, e.nblocks, alg, prefixes});
  e.pblk = pblk;
  p.z.extents.push_back(e);
}

// Splits extent `i` into a partial reference to an earlier pcluster that decodes to the same first
// blocks, and the rest compressed anew, when that takes fewer blocks than its own pcluster. Every
// piece stays at least a block long, so no two extents start in one lcluster.
bool CompressedFiles::add_partial_ref(Plan& p, const SegmentResult& r, size_t i, unsigned alg) {
  const PlannedExtent& e = r.z.extents[i];
  const auto& mine = r.z.prefix_digests[i];
  if (mine.empty()) return false;
  auto found = shared_by_first_block_.find(mine[0].lo);
  if (found == shared_by_first_block_.end()) return false;
  const SharedPcluster& s = shared_[found->second];
  if (s.algorithm != alg) return false;

  size_t k = 0;
  while (k < mine.size() && k < s.prefixes.size() && mine[k] == s.prefixes[k]) ++k;
  uint64_t shared = uint64_t(k) * bs_;
  if (shared != e.length && e.length - shared < bs_) shared -= bs_;
  if (shared == 0) return false;
  const uint64_t rest = e.length - shared;

  // A pcluster of several blocks needs a NONHEAD lcluster to hold its block count, and the last
  // lcluster of a file whose size is not block-aligned holds the EOF entry instead.
  const bool ends_file = rest == 0 && e.lstart + e.length == p.z.size;
  if (s.nblocks > 1 && shared < (ends_file ? 3u : 2u) * uint64_t(bs_)) return false;

  PlannedExtent tail{e.lstart + shared, rest, out_.offset() / bs_, 0, false, e.head2, false};
  std::vector<uint8_t> blocks;
  if (rest) {
    const auto in = source_bytes(p, r, e.lstart + shared, rest);
    auto& enc = remainder_encoders_[alg];
    if (!enc) enc = compress::make_encoder(copt_.algorithms.at(alg), largest_pcluster_);
    std::vector<uint8_t> out(size_t(e.nblocks - 1) * bs_);
    enc->start_input();
    compress::FillResult f = out.empty() ? compress::FillResult{} : enc->fill(in, out);
    tail.nblocks = uint32_t((f.produced + bs_ - 1) / bs_);
    if (f.consumed == rest && uint64_t(tail.nblocks) * bs_ < rest) {
      blocks.resize(size_t(tail.nblocks) * bs_, 0);
      std::memcpy(blocks.data() + blocks.size() - f.produced, out.data(), f.produced);
    } else if (rest == bs_ && e.nblocks > 1) {
      tail.plain = true;
      tail.nblocks = 1;
      blocks.assign(in.begin(), in.end());
    } else {
      return false;
    }
  }
  used_dedupe_ = true;
  p.z.extents.push_back({e.lstart, shared, s.pblk, s.nblocks, false, e.head2, true});
  if (rest) {
    out_.append(blocks);
    p.zblocks += tail.nblocks;
    p.z.extents.push_back(tail);
  }
  return true;
}

void CompressedFiles::place_tail(Plan& p, const ZTailPiece& t, PlannedExtent e) {
  if (tail_mode(p) == TailMode::Fragment) {
    uint64_t off = add_fragment(t.raw);
    if (t.lstart == 0) {
      p.whole_fragment = true;
      p.z.extents.clear();
    } else {
      // A fragment extent is typed HEAD: the kernel checks PLAIN extents against a pcluster
      // length, which fragments do not have.
      e.plain = false;
      p.z.tail = ZTail::Fragment;
      p.z.extents.push_back(e);
    }
    p.z.fragment_off = off;
    fragment_users_.push_back({&p, t.raw.size()});
    return;
  }
  if (copt_.ztailpacking) {
    p.z.tail = ZTail::Inline;
    const auto stored = t.stored();
    p.z.inline_size = uint16_t(stored.size());
    p.inline_bytes.size = uint32_t(stored.size());
    p.z.extents.push_back(e);
    if (stored.size() < bs_ && layout_record(p, 0).size <= bs_) {
      p.inline_bytes = tails_.append(stored);
      used_inline_ = true;
      return;
    }
    p.z.tail = ZTail::Normal;
    p.z.inline_size = 0;
    p.inline_bytes = {};
    p.z.extents.pop_back();
  }
  write_block_tail(p, t, e);
}

// A tail that did not go inline takes a block: as it is when it fits one (no decoding to read
// it), else its compressed stream.
void CompressedFiles::write_block_tail(Plan& p, const ZTailPiece& t, PlannedExtent e) {
  std::vector<uint8_t> block(bs_, 0);
  e.plain = t.length <= bs_;
  if (e.plain) std::memcpy(block.data(), t.raw.data(), t.raw.size());
  else std::memcpy(block.data() + bs_ - t.compressed.size(), t.compressed.data(), t.compressed.size());
  e.pblk = out_.offset() / bs_;
  e.nblocks = 1;
  out_.append(block);
  p.z.extents.push_back(e);
  p.zblocks += 1;
}

// Compression must save something: compare the pclusters, the tail and the index with the file.
bool CompressedFiles::flat_is_smaller(const Plan& p, const ZSegment& z) const {
  uint64_t cost = z.blocks.size() + 8 + 4 * ((p.src->size + bs_ - 1) / bs_);
  if (z.has_tail && tail_mode(p) != TailMode::Fragment) cost += copt_.ztailpacking ? z.tail.stored().size() : bs_;
  return cost >= p.src->size;
}

void CompressedFiles::write_flat(Plan& p, std::span<const uint8_t> input) {
  p.compressed = false;
  uint64_t size = input.size();
  uint32_t tail = uint32_t(size % bs_);
  p.inline_tail = tail && p.inode_size() + p.xattr_size + tail <= bs_;
  p.tail_size = p.inline_tail ? tail : 0;
  uint64_t full = p.inline_tail ? size - tail : size;
  p.data.layout = p.inline_tail ? format::Layout::FlatInline : format::Layout::FlatPlain;
  if (full) {
    p.data.startblk = out_.offset() / bs_;
    out_.append({input.data(), size_t(full)});
    out_.pad_to(align_up(out_.offset(), bs_));
    p.data.blocks = (full + bs_ - 1) / bs_;
  }
  if (p.inline_tail) p.inline_bytes = tails_.append(std::span(input).subspan(size_t(full)));
}

// The pipeline keeps the raw bytes of segments of a window or less; those of a longer one are read
// again (they are needed only when the file is stored flat or a partial reference leaves a rest).
std::span<const uint8_t> CompressedFiles::source_bytes(const Plan& p, const SegmentResult& r, uint64_t offset,
                                                       uint64_t length) {
  if (!r.input.empty()) return std::span<const uint8_t>(r.input).subspan(size_t(offset - r.offset), size_t(length));
  reread_.resize(size_t(length));
  opener_.open(p.src->content, p.src->size).read(offset, reread_);
  return reread_;
}

// Whole files up to this size are copied beside the image; larger ones are referenced in the
// source and read again when the packed inode is compressed, so -Eall-fragments of a large file
// does not write it to disk twice.
constexpr uint64_t kCopiedFragmentBytes = 1 << 20;

// Read through once to find an equal file stored before.
void CompressedFiles::whole_file_fragment(Plan& p, BuildStats& stats) {
  const ContentReader in = opener_.open(p.src->content, p.src->size);
  const uint64_t size = p.src->size;
  uint64_t offset = 0;
  if (size <= kCopiedFragmentBytes) {
    reread_.resize(size_t(size));
    in.read(0, reread_);
    offset = add_fragment(reread_);
  } else {
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    reread_.resize(size_t(kCopiedFragmentBytes));
    try {
      for (uint64_t done = 0; done < size;) {
        const auto piece = std::span(reread_).first(size_t(std::min<uint64_t>(reread_.size(), size - done)));
        in.read(done, piece);
        XXH3_128bits_update(state, piece.data(), piece.size());
        done += piece.size();
      }
    } catch (...) {
      XXH3_freeState(state);
      throw;
    }
    const XXH128_hash_t h = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    auto [it, fresh] = fragment_offsets_.try_emplace({h.low64, h.high64, size}, packed_->size());
    if (fresh) packed_->append_source(p.src->content, size);
    offset = it->second;
  }
  p.compressed = true;
  p.whole_fragment = true;
  p.z = ZIndexSpec{};
  p.z.size = size;
  p.z.block_bits = bits_;
  p.z.compact = false;
  p.z.fragment_off = offset;
  fragment_users_.push_back({&p, size});
  stats.bytes_in += size;
  ++stats.compressed_files;
  if (Progress* pr = opt_.progress) {
    pr->bytes_in += size;
    ++pr->files;
  }
}

uint64_t CompressedFiles::add_fragment(std::span<const uint8_t> raw) {
  XXH128_hash_t h = XXH3_128bits(raw.data(), raw.size());
  auto [it, fresh] = fragment_offsets_.try_emplace({h.low64, h.high64, uint64_t(raw.size())}, packed_->size());
  if (fresh) packed_->append(raw);
  return it->second;
}

}  // namespace erofs::writer
