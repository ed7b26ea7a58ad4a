// erofs mkfs: option parsing and the summary. The command is a client of the library's builder:
// its options fill an erofs::BuildSettings, the same settings the C++ and C APIs take.
#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "erofs-kit/erofs.hpp"
#include "tools/cli.h"
#include "tools/command.h"
#include "tools/format_util.h"
#include "tools/progress_display.h"
#include "tools/verity_text.h"
#include "writer/temp_files.h"

namespace erofs::tools {
namespace {

// What the command line says beyond the build settings.
struct MkfsCommand {
  std::string image, source, mtree_root;
  bool tar = false, mtree = false;
  bool quiet = false, json = false, verbose = false, no_progress = false;
};

void add_options(CLI::App& app, MkfsCommand& c, BuildSettings& s, bool tar_given) {
  app.add_option("IMAGE", c.image, "Image file to create (replaced if it exists)")->required();
  // SOURCE may be left out only with --tar (standard input); otherwise it stays required, which also
  // keeps repeatable options such as --exclude-path from taking the positional arguments.
  auto* source = app.add_option("SOURCE", c.source,
                                "Directory to build the image from (with --tar: the archive, '-' or none for standard "
                                "input; with --mtree: the manifest)");
  if (!tar_given) source->required();
  app.add_flag("--tar", c.tar,
               "SOURCE is a tar archive (plain, gzip, xz, zstd, ...; ustar, GNU or PAX), read once from front to back; "
               "file contents wait in a temporary file beside IMAGE");
  app.add_flag("--mtree", c.mtree,
               "SOURCE is an mtree manifest (as bsdtar --format=mtree writes): owners, modes, times and layout come "
               "from it; regular files' contents from the paths in their contents= keywords (else their own paths)");
  app.add_option("--mtree-root", c.mtree_root,
                 "With --mtree: the directory relative content paths are resolved against (default: the manifest's)");
  app.add_flag("--aufs", s.aufs,
               "With --tar: .wh.NAME entries become overlayfs whiteouts, .wh..wh..opq makes its directory opaque");
  app.add_flag("--ovlfs-strip", s.ovlfs_strip, "With --tar: leave out the archive's trusted.overlay.* xattrs");
  app.add_option("-b", s.block_size, "Block size in bytes: 512, 1024, 2048 or 4096 (default 4096)")
      ->check(CLI::IsMember({512, 1024, 2048, 4096}));
  app.add_option("--chunksize", s.chunk_size,
                 "Store files as chunks of this many bytes (a power of two >= the block size); holes stay unmapped");
  app.add_option("-U", s.uuid, "Volume UUID: a fixed value, 'random' or 'clear' (default: derived from the content)");
  app.add_option("-L", s.label, "Volume label (at most 15 bytes)");
  app.add_option("-T", s.timestamp, "Set every file's mtime and the image time to this UNIX time (also SOURCE_DATE_EPOCH)");
  app.add_flag("--mkfs-time", s.mkfs_time, "With -T: set only the image time, keep the files' mtimes");
  app.add_flag("--all-root", s.all_root, "Make every file owned by root (uid and gid 0)");
  app.add_option("--force-uid", s.force_uid, "Make every file owned by this uid (wins over --all-root)");
  app.add_option("--force-gid", s.force_gid, "Make every file owned by this gid (wins over --all-root)");
  app.add_option("--exclude-path", s.exclude_paths, "Leave out this path (relative to SOURCE; repeatable)");
  app.add_option("--exclude-regex", s.exclude_regexes, "Leave out paths matching this extended regex (repeatable)");
  app.add_option("-z", s.compression,
                 "Compress files: ALG[,LEVEL] with ALG lz4, lz4hc, lzma, deflate or zstd (e.g. -zlz4hc,12, "
                 "-zlzma,level=6,dictsize=1048576)");
  app.add_option("-C", s.pcluster_bytes, "Largest physical cluster in bytes (a multiple of the block size, <= 1 MiB)");
  app.add_option("--compress-hints", s.compress_hints,
                 "File of 'PCLUSTER_BYTES REGEX [ALGORITHM_INDEX]' lines: files whose path matches use that "
                 "pcluster size and the -z algorithm at that index (0 = first)");
  app.add_option("--hot-list", s.hot_list,
                 "File of paths in the image, one per line: their data is written first, in that order, and kept "
                 "out of fragments, so that reading them decodes only their own pclusters");
  app.add_option("--workers", s.workers, "Compression and --verity hashing threads (default: one per core; the image is the same for any count)");
  app.add_option("-E", s.extended,
                 "Extended options, comma-separated: force-inode-compact, force-inode-extended, legacy-compress "
                 "(full indexes), ztailpacking (small tails inline), fragments (tails in the packed inode), "
                 "all-fragments (whole files in the packed inode), dedupe (equal extents share one pcluster)");
  app.add_flag("--ignore-unreadable", s.ignore_unreadable,
               "Skip unreadable files and directories with a warning (exit code 2) instead of failing");
  app.add_flag("--verify", s.verify, "Read the finished image back and compare every entry with the source");
  app.add_flag("--verity{}", s.verity,
               "Append a dm-verity hash tree (veritysetup's format, version 1) after the image; "
               "--verity=hash=sha256|sha512,data-block=BYTES,hash-block=BYTES (512 to 4096; default sha256, 4096, 4096)");
  app.add_option("--verity-salt", s.verity_salt,
                 "The tree's salt: hex, or 'none' (default: derived from the content, so builds are reproducible)");
  app.add_option("--verity-file", s.verity_file, "Write the verity superblock and tree to this file instead of the image");
  app.add_option("--root-hash-file", s.root_hash_file, "Write the tree's root hash (hex) to this file");
  app.add_flag("-v,--verbose", c.verbose, "Print more detail in the summary");
  app.add_flag("-q,--quiet", c.quiet, "Print nothing but errors and warnings");
  app.add_flag("--no-progress", c.no_progress,
               "No progress display (it goes to stderr: redrawn on a terminal, a line every 5 s otherwise)");
  app.add_flag("--json", c.json, "Print the summary as JSON");
}

// The combinations the options cannot express on their own; an error line, or empty.
std::string check_combinations(MkfsCommand& c, const BuildSettings& s) {
  if (!c.tar && c.source.empty()) return "SOURCE is required (a directory, or a tar archive with --tar)";
  if (c.tar && c.mtree) return "--tar and --mtree exclude each other";
  if (!c.mtree && !c.mtree_root.empty()) return "--mtree-root needs --mtree";
  if (!c.tar && (s.aufs || s.ovlfs_strip)) return "--aufs and --ovlfs-strip need --tar";
  if (c.tar && c.source.empty()) c.source = "-";
  return {};
}

// SOURCE_DATE_EPOCH stands for -T when -T is not given.
std::string read_source_date_epoch(BuildSettings& s) {
  const char* sde = std::getenv("SOURCE_DATE_EPOCH");
  if (s.timestamp || !sde || !*sde) return {};
  char* end = nullptr;
  const long long v = std::strtoll(sde, &end, 10);
  if (*end) return fmt::format("SOURCE_DATE_EPOCH is not a number: {}", sde);
  s.timestamp = v;
  return {};
}

void print_summary(const MkfsCommand& c, const BuildSettings& s, const BuildSummary& b) {
  if (c.json) {
    fmt::print(
        "{{\"image\": \"{}\", \"inodes\": {}, \"regular_files\": {}, \"directories\": {}, \"symlinks\": {}, "
        "\"special_files\": {}, \"hard_links\": {}, \"bytes_in\": {}, \"image_bytes\": {}, \"block_size\": {}, "
        "\"compact_inodes\": {}, \"extended_inodes\": {}, \"compressed_files\": {}, \"skipped_inputs\": {}, "
        "\"verified\": {}, \"verity\": {}, \"seconds\": {:.3f}}}\n",
        json_escape(c.image), b.inodes, b.regular_files, b.directories, b.symlinks, b.special_files, b.hard_links,
        b.bytes_in, b.image_bytes, s.block_size, b.compact_inodes, b.extended_inodes, b.compressed_files,
        b.skipped_inputs, b.verified ? "true" : "false", b.verity ? verity_json(*b.verity) : "null", b.seconds);
    return;
  }
  if (c.quiet) return;
  fmt::print("{}: {} inodes ({} files, {} directories, {} symlinks, {} special, {} extra hard links)\n", c.image,
             b.inodes, b.regular_files, b.directories, b.symlinks, b.special_files, b.hard_links);
  // An appended tree starts at the hash offset, after the filesystem's blocks and their padding.
  const bool appended = b.verity && s.verity_file.empty();
  const uint64_t blocks = (appended ? b.verity->hash_offset : b.image_bytes) / s.block_size;
  fmt::print("  data in {}, image {} ({} blocks of {} bytes{}), {:.2f} s, {}/s{}\n", human_bytes(b.bytes_in),
             human_bytes(b.image_bytes), blocks, s.block_size, appended ? " and the hash tree" : "", b.seconds,
             human_bytes(uint64_t(double(b.bytes_in) / std::max(b.seconds, 1e-6))), b.verified ? ", verified" : "");
  if (b.verity)
    for (const auto& [label, value] : verity_lines(*b.verity, appended ? c.image : s.verity_file))
      fmt::print("  verity {}: {}\n", label, value);
  if (c.verbose)
    fmt::print("  {} compact and {} extended inodes, {} data blocks, {} metadata blocks\n", b.compact_inodes,
               b.extended_inodes, b.data_blocks, b.metadata_blocks);
}

int run_mkfs(int argc, char** argv) {
  // Buffers of a megabyte and more come from mmap and go back to the system when freed. glibc
  // otherwise raises that threshold to the largest buffer freed so far, and then keeps such
  // buffers in each thread's arena: the workers' transient inputs, windows and frames (zstd at
  // 1 MiB pclusters of repetitive text meets 8 MB ones). zstd level 15 on the linux tree at
  // -C131072 with tail packing, fragments and dedupe peaked at 372 MiB without this, 300 MiB with
  // it, in the same time.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  CLI::App app{
      "Build an EROFS image of SOURCE that the Linux kernel mounts as it is.\n"
      "The image is written to a temporary file beside IMAGE and renamed when complete.\n"
      "Options follow mkfs.erofs.",
      "erofs mkfs"};
  MkfsCommand c;
  BuildSettings s;
  bool tar_given = false;
  for (int i = 1; i < argc; ++i) tar_given |= std::strcmp(argv[i], "--tar") == 0;
  add_options(app, c, s, tar_given);
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  for (const std::string& problem : {check_combinations(c, s), read_source_date_epoch(s)})
    if (!problem.empty()) {
      fmt::print(stderr, "erofs mkfs: {}\n", problem);
      return kExitError;
    }
  s.on_warning = [](const std::string& m) { fmt::print(stderr, "erofs mkfs: warning: {}\n", m); };
  std::optional<ProgressDisplay> display;
  if (!c.quiet && !c.json && !c.no_progress) {
    display.emplace();
    s.on_progress = [&display](const Progress& p) { display->show(p); };
  }
  writer::install_cleanup_signal_handlers();
  const Result<BuildSummary> built = c.tar     ? ImageBuilder::from_tar(c.source, c.image, s)
                                     : c.mtree ? ImageBuilder::from_mtree(c.source, c.mtree_root, c.image, s)
                                               : ImageBuilder::from_directory(c.source, c.image, s);
  display.reset();
  if (!built) {
    fmt::print(stderr, "erofs mkfs: {}\n", built.error().message);
    return kExitError;
  }
  print_summary(c, s, built.value());
  if (built.value().skipped_inputs) {
    fmt::print(stderr, "erofs mkfs: {} unreadable inputs were skipped\n", built.value().skipped_inputs);
    return kExitPartial;
  }
  return kExitOk;
}

RegisterCommand reg("mkfs", "build an image from a directory", run_mkfs);

}  // namespace
}  // namespace erofs::tools
