#include "reader/verity_check.h"

#include <thread>

#include <fmt/format.h>

#include "reader/block_owners.h"
#include "reader/checked.h"
#include "reader/verity_tree.h"
#include "verity/check.h"
#include "verity/layout.h"
#include "verity/tree_builder.h"

namespace erofs::reader {
namespace {

// Files named in one problem line; the rest are counted.
constexpr size_t kPathsPerBlock = 3;

class VerityChecker {
 public:
  VerityChecker(const Image& image, const VerityCheckOptions& o, VerityCheckReport& r)
      : image_(image), opt_(o), report_(r), fs_bytes_(filesystem_bytes(image)) {}

  void run() {
    std::optional<HashDevice> device;
    std::optional<StoredSuperblock> stored;
    if (opt_.hash_file.empty()) {
      stored = find_appended_superblock(image_);
      if (!stored && !opt_.root_hash.empty())
        problem(fmt::format("no dm-verity superblock after the filesystem's end (byte {})", fs_bytes_));
      if (!stored) return;
      device.emplace(image_);
    } else {
      device.emplace(opt_.hash_file);
      stored = read_superblock(*device);
    }
    report_.found = true;
    report_.hash_offset = stored->offset;
    report_.superblock = stored->superblock;
    where_ = device->separate() ? opt_.hash_file : "the image";
    if (!stored->superblock) return problem(fmt::format("at byte {} of {}: {}", stored->offset, where_, stored->damage));
    try {
      check(*device, *stored);
    } catch (const verity::ParamError& e) {
      problem(fmt::format("superblock at byte {} of {}: {}", stored->offset, where_, e.what()));
    }
  }

 private:
  void problem(std::string line) {
    if (report_.problems.size() < opt_.max_problems) report_.problems.push_back("verity: " + std::move(line));
  }

  // Throws verity::ParamError for numbers dm-verity refuses.
  void check(const HashDevice& device, const StoredSuperblock& stored) {
    const format::VeritySuperblock& sb = *stored.superblock;
    const verity::Params params = verity::params_of(sb);
    const verity::Layout layout = verity::compute_layout(params, sb.data_blocks);
    const uint64_t data_end = sb.data_blocks * params.data_block_size;  // compute_layout checked it
    const uint64_t data_limit = device.separate() ? image_.image_size() : stored.offset;
    if (data_end > data_limit)
      return problem(fmt::format("{} data blocks of {} bytes end at byte {}, past {} (byte {})", sb.data_blocks,
                                 params.data_block_size, data_end,
                                 device.separate() ? "the end of the image" : "the superblock", data_limit));
    if (data_end < fs_bytes_)
      problem(fmt::format("the tree covers {} bytes of the image, the filesystem has {}", data_end, fs_bytes_));
    const uint64_t tree_start = verity::tree_offset(stored.offset, params.hash_block_size);
    const uint64_t tree_end = checked::add(tree_start, layout.tree_bytes);
    if (tree_end > device.size())
      return problem(fmt::format("the tree (bytes {} to {}) runs past the end of {} ({} bytes)", tree_start, tree_end,
                                 where_, device.size()));
    if (!opt_.root_hash.empty() && opt_.root_hash.size() != layout.digest_size)
      return problem(fmt::format("the given root hash has {} bytes, a {} hash has {}", opt_.root_hash.size(),
                                 verity::algorithm_name(params.algorithm), layout.digest_size));

    std::vector<uint8_t> stored_tree(layout.tree_bytes);
    device.read(tree_start, stored_tree);
    const unsigned threads = opt_.threads ? opt_.threads : std::max(1u, std::thread::hardware_concurrency());
    const verity::Tree expected = verity::build_tree(
        params, sb.data_blocks, [&](uint64_t offset, std::span<uint8_t> out) { image_.read_raw(offset, out); },
        threads);
    report_.root_hash = expected.root_hash;
    report(verity::check(expected, stored_tree, opt_.root_hash), layout);
  }

  // A whole level that fails, more than one block of it, is one line: then nothing in that level
  // is right, and what is wrong lies above it or in how every block is hashed.
  static constexpr const char* kAllWrong =
      "the salt, the parameters or the whole tree are wrong, or the data is not what the tree was made for";

  void report(const verity::Report& r, const verity::Layout& layout) {
    if (r.root_mismatch)
      problem(fmt::format("the tree's root hash is {}, not the given {}", verity::to_hex(report_.root_hash),
                          verity::to_hex(opt_.root_hash)));
    std::vector<uint64_t> bad_per_level(layout.levels.size());
    for (const verity::BadHashBlock& h : r.bad_hash_blocks) ++bad_per_level[h.level];
    for (size_t level = layout.levels.size(); level-- > 0;)
      if (bad_per_level[level] > 1 && bad_per_level[level] == layout.levels[level].blocks)
        problem(fmt::format("none of the {} hash blocks of level {} matches its hash: {}", bad_per_level[level], level,
                            kAllWrong));
    for (const verity::BadHashBlock& h : r.bad_hash_blocks)
      if (bad_per_level[h.level] != layout.levels[h.level].blocks || bad_per_level[h.level] == 1)
        problem(fmt::format("hash block {} of level {} (block {} of the tree) does not match: data blocks {} to {} "
                            "cannot be checked",
                            h.index, h.level, h.tree_block, h.first_data_block, h.first_data_block + h.data_blocks - 1));
    const auto& bad = r.bad_data_blocks;
    if (bad.size() > 1 && bad.size() == layout.data_blocks)
      return problem(fmt::format("none of the {} data blocks matches its hash: {}", bad.size(), kAllWrong));
    const uint32_t data_block_size = layout.data_block_size;
    const size_t named = std::min(bad.size(), opt_.max_problems);
    const auto owners = block_owners(image_, std::span(bad).first(named), data_block_size, kPathsPerBlock);
    for (size_t i = 0; i < named; ++i) {
      const uint64_t begin = bad[i] * data_block_size;
      const auto o = owners.find(bad[i]);
      problem(fmt::format("data block {} (bytes {} to {}) does not match its hash: {}", bad[i], begin,
                          begin + data_block_size - 1, o != owners.end() ? files_text(o->second) : place_text(begin)));
    }
    if (bad.size() > named) problem(fmt::format("{} more data blocks do not match", bad.size() - named));
  }

  static std::string files_text(const BlockOwners& o) {
    std::string s = fmt::format("{} {}", o.files == 1 ? "file" : "files", fmt::join(o.paths, ", "));
    if (o.files > o.paths.size()) s += fmt::format(" and {} more", o.files - o.paths.size());
    return s;
  }

  std::string place_text(uint64_t begin) const {
    return begin < fs_bytes_ ? "filesystem metadata or free space" : "padding after the filesystem's end";
  }

  const Image& image_;
  const VerityCheckOptions& opt_;
  VerityCheckReport& report_;
  const uint64_t fs_bytes_;
  std::string where_;
};

}  // namespace

VerityCheckReport check_verity(const Image& image, const VerityCheckOptions& options) {
  VerityCheckReport r;
  VerityChecker(image, options, r).run();
  return r;
}

VerityCheckReport check_verity(const std::string& path, const VerityCheckOptions& options) {
  std::unique_ptr<Image> image;
  try {
    image = Image::open(path);
  } catch (const CorruptError&) {
    return {};
  }
  return check_verity(*image, options);
}

}  // namespace erofs::reader
