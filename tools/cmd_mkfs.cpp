// erofs mkfs: option parsing and the summary; the work is in writer/.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/cli.h"
#include "tools/command.h"
#include "tools/format_util.h"
#include "tools/progress_display.h"
#include "writer/build_image.h"
#include "writer/errors.h"
#include "writer/data/output_image.h"
#include "writer/temp_files.h"
#include "writer/option_text.h"
#include "writer/source/scan_dir.h"
#include "writer/source/scan_mtree.h"
#include "writer/source/scan_tar.h"
#include "lib/verify.h"

namespace erofs::tools {
namespace {

using writer::BuildOptions;

int run_mkfs(int argc, char** argv) {
  CLI::App app{
      "Build an EROFS image of SOURCE that the Linux kernel mounts as it is.\n"
      "The image is written to a temporary file beside IMAGE and renamed when complete.\n"
      "Options follow mkfs.erofs.",
      "erofs mkfs"};
  std::string image, source, uuid_text, extended, label;
  uint32_t block_size = 4096, chunk_size = 0, pcluster_bytes = 0;
  unsigned workers = 0;
  std::string algorithms, hints_file;
  std::optional<int64_t> timestamp;
  bool mkfs_time = false, all_root = false, verify = false, quiet = false, json = false, verbose = false;
  bool ignore_unreadable = false, no_progress = false, tar = false, aufs = false, ovlfs_strip = false, mtree = false;
  std::string mtree_root;
  std::optional<uint32_t> force_uid, force_gid;
  std::vector<std::string> exclude_paths, exclude_regexes;
  app.add_option("IMAGE", image, "Image file to create (replaced if it exists)")->required();
  // SOURCE may be left out only with --tar (standard input); otherwise it stays required, which also
  // keeps repeatable options such as --exclude-path from taking the positional arguments.
  bool tar_given = false;
  for (int i = 1; i < argc; ++i) tar_given |= std::strcmp(argv[i], "--tar") == 0;
  auto* source_opt =
      app.add_option("SOURCE", source,
                     "Directory to build the image from (with --tar: the archive, '-' or none for standard input; "
                     "with --mtree: the manifest)");
  if (!tar_given) source_opt->required();
  app.add_flag("--tar", tar,
               "SOURCE is a tar archive (plain, gzip, xz, zstd, ...; ustar, GNU or PAX), read once from front to back; "
               "file contents wait in a temporary file beside IMAGE");
  app.add_flag("--mtree", mtree,
               "SOURCE is an mtree manifest (as bsdtar --format=mtree writes): owners, modes, times and layout come "
               "from it; regular files' contents from the paths in their contents= keywords (else their own paths)");
  app.add_option("--mtree-root", mtree_root,
                 "With --mtree: the directory relative content paths are resolved against (default: the manifest's)");
  app.add_flag("--aufs", aufs,
               "With --tar: .wh.NAME entries become overlayfs whiteouts, .wh..wh..opq makes its directory opaque");
  app.add_flag("--ovlfs-strip", ovlfs_strip, "With --tar: leave out the archive's trusted.overlay.* xattrs");
  app.add_option("-b", block_size, "Block size in bytes: 512, 1024, 2048 or 4096 (default 4096)")
      ->check(CLI::IsMember({512, 1024, 2048, 4096}));
  app.add_option("--chunksize", chunk_size,
                 "Store files as chunks of this many bytes (a power of two >= the block size); holes stay unmapped");
  app.add_option("-U", uuid_text, "Volume UUID: a fixed value, 'random' or 'clear' (default: derived from the content)");
  app.add_option("-L", label, "Volume label (at most 15 bytes)");
  app.add_option("-T", timestamp, "Set every file's mtime and the image time to this UNIX time (also SOURCE_DATE_EPOCH)");
  app.add_flag("--mkfs-time", mkfs_time, "With -T: set only the image time, keep the files' mtimes");
  app.add_flag("--all-root", all_root, "Make every file owned by root (uid and gid 0)");
  app.add_option("--force-uid", force_uid, "Make every file owned by this uid");
  app.add_option("--force-gid", force_gid, "Make every file owned by this gid");
  app.add_option("--exclude-path", exclude_paths, "Leave out this path (relative to SOURCE; repeatable)");
  app.add_option("--exclude-regex", exclude_regexes, "Leave out paths matching this extended regex (repeatable)");
  app.add_option("-z", algorithms,
                 "Compress files: ALG[,LEVEL] with ALG lz4, lz4hc, lzma, deflate or zstd (e.g. -zlz4hc,12, "
                 "-zlzma,level=6,dictsize=1048576)");
  app.add_option("-C", pcluster_bytes, "Largest physical cluster in bytes (a multiple of the block size, <= 1 MiB)");
  app.add_option("--compress-hints", hints_file,
                 "File of 'PCLUSTER_BYTES REGEX [ALGORITHM_INDEX]' lines: files whose path matches use that "
                 "pcluster size and the -z algorithm at that index (0 = first)");
  app.add_option("--workers", workers, "Compression threads (default: one per core; the image is the same for any count)");
  app.add_option("-E", extended,
                 "Extended options, comma-separated: force-inode-compact, force-inode-extended, legacy-compress "
                 "(full indexes), ztailpacking (small tails inline), fragments (tails in the packed inode), "
                 "all-fragments (whole files in the packed inode), dedupe (equal extents share one pcluster)");
  app.add_flag("--ignore-unreadable", ignore_unreadable,
               "Skip unreadable files and directories with a warning (exit code 2) instead of failing");
  app.add_flag("--verify", verify, "Read the finished image back and compare every entry with the source");
  app.add_flag("-v,--verbose", verbose, "Print more detail in the summary");
  app.add_flag("-q,--quiet", quiet, "Print nothing but errors and warnings");
  app.add_flag("--no-progress", no_progress, "No progress display (it goes to stderr: redrawn on a terminal, a line every 5 s otherwise)");
  app.add_flag("--json", json, "Print the summary as JSON");
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  if (!tar && source.empty()) {
    fmt::print(stderr, "erofs mkfs: SOURCE is required (a directory, or a tar archive with --tar)\n");
    return kExitError;
  }
  if (tar && mtree) {
    fmt::print(stderr, "erofs mkfs: --tar and --mtree exclude each other\n");
    return kExitError;
  }
  if (!mtree && !mtree_root.empty()) {
    fmt::print(stderr, "erofs mkfs: --mtree-root needs --mtree\n");
    return kExitError;
  }
  if (!tar && (aufs || ovlfs_strip)) {
    fmt::print(stderr, "erofs mkfs: --aufs and --ovlfs-strip need --tar\n");
    return kExitError;
  }
  if (tar && source.empty()) source = "-";

  BuildOptions o;
  o.block_size = block_size;
  o.chunk_size = chunk_size;
  o.label = label;
  if (!timestamp)
    if (const char* sde = std::getenv("SOURCE_DATE_EPOCH"); sde && *sde) {
      char* end = nullptr;
      long long v = std::strtoll(sde, &end, 10);
      if (*end) {
        fmt::print(stderr, "erofs mkfs: SOURCE_DATE_EPOCH is not a number: {}\n", sde);
        return kExitError;
      }
      timestamp = v;
    }
  o.fixed_time = timestamp;
  o.mkfs_time_only = mkfs_time;
  try {
    writer::apply_uuid(uuid_text, o);
    writer::apply_extended_options(extended, o);
    writer::apply_algorithms(algorithms, o);
    writer::finish_compression_options(
        o, pcluster_bytes, workers,
        hints_file.empty() ? std::vector<writer::CompressHint>{} : writer::read_compress_hints(hints_file));
  } catch (const writer::OptionError& e) {
    fmt::print(stderr, "erofs mkfs: {}\n", e.what());
    return kExitError;
  }
  o.source = {all_root, force_uid, force_gid, exclude_paths, exclude_regexes, ignore_unreadable};
  o.warn = [](const std::string& m) { fmt::print(stderr, "erofs mkfs: warning: {}\n", m); };

  writer::install_cleanup_signal_handlers();
  writer::BuildStats stats;
  writer::Progress progress;
  std::optional<ProgressDisplay> display;
  if (!quiet && !json && !no_progress) {
    o.progress = &progress;
    display.emplace(progress);
  }
  try {
    auto scan = tar     ? writer::scan_tar(source, image, o.source, {aufs, ovlfs_strip}, o.warn)
                : mtree ? writer::scan_mtree(source, mtree_root, o.source, o.warn)
                        : writer::scan_directory(source, o.source, o.warn);
    stats = writer::build_image(scan.tree, image, o);
    stats.skipped_inputs = scan.skipped;
    display.reset();
    if (verify) {
      lib::VerifyOptions vo;
      vo.check_mtime = o.inode_form != writer::InodeForm::Compact;
      auto problems = lib::verify_image(scan.tree, image, vo);
      for (auto& p : problems) fmt::print(stderr, "erofs mkfs: verify: {}\n", p);
      if (!problems.empty()) {
        fmt::print(stderr, "erofs mkfs: {} does not match {}\n", image, source);
        return kExitError;
      }
    }
  } catch (const std::exception& e) {
    display.reset();
    fmt::print(stderr, "erofs mkfs: {}\n", e.what());
    return kExitError;
  }

  if (json) {
    fmt::print(
        "{{\"image\": \"{}\", \"inodes\": {}, \"regular_files\": {}, \"directories\": {}, \"symlinks\": {}, "
        "\"special_files\": {}, \"hard_links\": {}, \"bytes_in\": {}, \"image_bytes\": {}, \"block_size\": {}, "
        "\"compact_inodes\": {}, \"extended_inodes\": {}, \"compressed_files\": {}, \"skipped_inputs\": {}, "
        "\"verified\": {}, \"seconds\": {:.3f}}}\n",
        json_escape(image), stats.inodes, stats.regular_files, stats.directories, stats.symlinks, stats.specials,
        stats.hard_links, stats.bytes_in, stats.image_bytes, block_size, stats.compact_inodes, stats.extended_inodes,
        stats.compressed_files, stats.skipped_inputs, verify ? "true" : "false", stats.seconds);
  } else if (!quiet) {
    fmt::print("{}: {} inodes ({} files, {} directories, {} symlinks, {} special, {} extra hard links)\n", image,
               stats.inodes, stats.regular_files, stats.directories, stats.symlinks, stats.specials, stats.hard_links);
    fmt::print("  data in {}, image {} ({} blocks of {} bytes), {:.2f} s, {}/s{}\n", human_bytes(stats.bytes_in),
               human_bytes(stats.image_bytes), stats.image_bytes / block_size, block_size, stats.seconds,
               human_bytes(uint64_t(double(stats.bytes_in) / std::max(stats.seconds, 1e-6))),
               verify ? ", verified" : "");
    if (verbose)
      fmt::print("  {} compact and {} extended inodes, {} data blocks, {} metadata blocks\n", stats.compact_inodes,
                 stats.extended_inodes, stats.data_blocks, stats.meta_blocks);
  }
  if (stats.skipped_inputs) {
    fmt::print(stderr, "erofs mkfs: {} unreadable inputs were skipped\n", stats.skipped_inputs);
    return kExitPartial;
  }
  return kExitOk;
}

RegisterCommand reg("mkfs", "build an image from a directory", run_mkfs);

}  // namespace
}  // namespace erofs::tools
