#include "writer/build_image.h"

#include <chrono>
#include <optional>

#include "format/superblock.h"
#include "writer/data/data_writer.h"
#include "writer/data/metadata_writer.h"
#include "writer/data/output_image.h"
#include "writer/data/verity_writer.h"
#include "writer/errors.h"
#include "writer/layout/inode_planner.h"
#include "writer/layout/xattr_plan.h"
#include "writer/progress.h"
#include "writer/source/scan_dir.h"
#include "writer/spill_file.h"

namespace erofs::writer {
namespace {

void check_options(const BuildOptions& o) {
  const uint32_t bs = o.block_size;
  if (bs < 512 || bs > 4096 || (bs & (bs - 1)))
    throw BuildError("block size must be 512, 1024, 2048 or 4096, not " + std::to_string(bs));
  if (o.chunk_size && (o.chunk_size < bs || (o.chunk_size & (o.chunk_size - 1))))
    throw BuildError("chunk size must be a power of two of at least the block size");
  if (o.label.size() > 15) throw BuildError("volume label longer than 15 bytes: " + o.label);
}

}  // namespace

// The phases in order: layout decisions that need no data (layout/inode_planner), the data
// (data/data_writer), the inode area and the superblock (data/metadata_writer), with --verity the
// hash tree over all of it (data/verity_writer); then the side files and the image are renamed.
BuildStats build_image(Tree& tree, const std::string& image_path, const BuildOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_options(o);
  BuildStats stats;
  const XattrPlan xattrs(tree, o.warn);
  InodePlans plans = plan_inodes(tree, xattrs, o, stats);
  if (o.progress) {
    for (auto& p : plans.plans)
      if (p.src->is_reg()) {
        ++o.progress->total_files;
        o.progress->total_bytes += p.src->size;
      }
    o.progress->scanned = true;
  }
  OutputImage out(image_path);
  std::optional<VerityWriter> verity;
  if (o.verity) verity.emplace(*o.verity);
  SpillFile tails(image_path);
  out.pad_to((format::kSuperblockOffset / o.block_size + 1) * o.block_size);  // the superblock's block
  const DataArea data = write_data(out, tails, tree, plans, o, image_path, stats);
  uint64_t end = write_metadata(out, tails, plans, xattrs, data, o, stats);
  if (verity) {
    end = verity->write(out, end, stats.verity.emplace());
    verity->commit();
  }
  out.commit(end);
  stats.image_bytes = end;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

BuildStats build_image(const std::string& source_dir, const std::string& image_path, const BuildOptions& options) {
  auto scan = scan_directory(source_dir, options.source, options.warn);
  BuildStats stats = build_image(scan.tree, image_path, options);
  stats.skipped_inputs = scan.skipped;
  return stats;
}

}  // namespace erofs::writer
