#include "writer/data/verity_writer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "format/verity_superblock.h"
#include "verity/derive.h"
#include "verity/layout.h"
#include "verity/tree_builder.h"
#include "writer/align.h"

namespace erofs::writer {
namespace {

// The filesystem's first 4096 bytes hold its superblock at every block size.
constexpr uint64_t kSuperblockSpan = 4096;

// The salt's seed: the hash of everything appended to the image (the padding to the last data
// block included) and the superblock's bytes (the label, the UUID, the counts), known before the
// tree is built and the same for the same input.
std::vector<uint8_t> salt_seed(OutputImage& image, uint64_t fs_bytes) {
  const XXH128_hash_t h = image.content_hash();
  std::vector<uint8_t> seed(16 + std::min(fs_bytes, kSuperblockSpan));
  std::memcpy(seed.data(), &h.low64, 8);
  std::memcpy(seed.data() + 8, &h.high64, 8);
  image.read_back(0, std::span(seed).subspan(16));
  return seed;
}

}  // namespace

VerityWriter::VerityWriter(const VerityOptions& options) : options_(options) {
  if (!options.hash_file.empty()) hash_file_.emplace(options.hash_file);
  if (!options.root_hash_file.empty()) root_hash_file_.emplace(options.root_hash_file);
}

uint64_t VerityWriter::write(OutputImage& image, uint64_t fs_bytes, VerityStats& stats) {
  const auto t0 = std::chrono::steady_clock::now();
  verity::Params params = options_.params;
  // No overflow below: the filesystem has at most 2^32 blocks of 4096 bytes (write_superblock
  // refuses more), and compute_layout checks the tree's size.
  const uint64_t data_blocks = (fs_bytes + params.data_block_size - 1) / params.data_block_size;
  const uint64_t data_end = data_blocks * params.data_block_size;
  image.pad_to(data_end);
  // The seed is read in any case: reading back writes the buffer out, after which the threads
  // that build the tree only read.
  const std::vector<uint8_t> seed = salt_seed(image, fs_bytes);
  if (options_.derive_salt) params.salt = verity::derive_salt(seed);
  const unsigned threads = options_.threads ? options_.threads : std::max(1u, std::thread::hardware_concurrency());
  const verity::Tree tree = verity::build_tree(
      params, data_blocks, [&](uint64_t offset, std::span<uint8_t> out) { image.read_back(offset, out); }, threads);

  // veritysetup's superblock in a hash block of its own, then the tree.
  std::vector<uint8_t> head(verity::tree_offset(0, params.hash_block_size));
  verity::make_superblock(params, data_blocks, verity::derive_uuid(tree.root_hash)).encode(head);
  OutputImage& hash_out = hash_file_ ? *hash_file_ : image;
  const uint64_t hash_offset = hash_file_ ? 0 : align_up(data_end, params.hash_block_size);
  hash_out.pad_to(hash_offset);
  hash_out.append(head);
  hash_out.append(tree.bytes);
  if (root_hash_file_) {
    const std::string hex = verity::to_hex(tree.root_hash);  // no newline, as veritysetup writes it
    root_hash_file_->append({reinterpret_cast<const uint8_t*>(hex.data()), hex.size()});
  }

  stats.params = std::move(params);
  stats.root_hash = tree.root_hash;
  stats.data_blocks = data_blocks;
  stats.hash_offset = hash_offset;
  stats.tree_bytes = head.size() + tree.bytes.size();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return image.offset();
}

void VerityWriter::commit() {
  if (hash_file_) hash_file_->commit(hash_file_->offset());
  if (root_hash_file_) root_hash_file_->commit(root_hash_file_->offset());
}

}  // namespace erofs::writer
