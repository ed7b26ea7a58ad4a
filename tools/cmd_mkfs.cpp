// erofs mkfs: option parsing and the summary; the work is in writer/.
#include <unistd.h>

#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/command.h"
#include "tools/format_util.h"
#include "writer/builder.h"
#include "writer/errors.h"
#include "writer/image_file.h"
#include "writer/source_dir.h"
#include "writer/verify.h"

namespace erofs::tools {
namespace {

using writer::BuildOptions;

std::array<uint8_t, 16> parse_uuid(const std::string& text) {
  std::array<uint8_t, 16> u{};
  std::string hex;
  for (char c : text)
    if (c != '-') hex += c;
  if (hex.size() != 32 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    throw CLI::ValidationError("-U", "invalid UUID '" + text + "' (expected random, clear or xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
  for (int i = 0; i < 16; ++i) u[i] = uint8_t(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return u;
}

void apply_extended_options(const std::string& list, BuildOptions& o) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string opt = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (opt.empty()) continue;
    if (opt == "force-inode-compact") o.inode_form = writer::InodeForm::Compact;
    else if (opt == "force-inode-extended") o.inode_form = writer::InodeForm::Extended;
    else throw CLI::ValidationError("-E", "unknown extended option '" + opt + "'");
  }
}

int run_mkfs(int argc, char** argv) {
  CLI::App app{
      "Build an EROFS image of SOURCE that the Linux kernel mounts as it is.\n"
      "The image is written to a temporary file beside IMAGE and renamed when complete.\n"
      "Options follow mkfs.erofs.",
      "erofs mkfs"};
  std::string image, source, uuid_text, extended, label;
  uint32_t block_size = 4096, chunk_size = 0;
  std::optional<int64_t> timestamp;
  bool mkfs_time = false, all_root = false, verify = false, quiet = false, json = false, verbose = false;
  bool ignore_unreadable = false;
  std::optional<uint32_t> force_uid, force_gid;
  std::vector<std::string> exclude_paths, exclude_regexes;
  app.add_option("IMAGE", image, "Image file to create (replaced if it exists)")->required();
  app.add_option("SOURCE", source, "Directory to build the image from")->required();
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
  app.add_option("-E", extended, "Extended options, comma-separated: force-inode-compact, force-inode-extended");
  app.add_flag("--ignore-unreadable", ignore_unreadable,
               "Skip unreadable files and directories with a warning (exit code 2) instead of failing");
  app.add_flag("--verify", verify, "Read the finished image back and compare every entry with the source");
  app.add_flag("-v,--verbose", verbose, "Print more detail in the summary");
  app.add_flag("-q,--quiet", quiet, "Print nothing but errors and warnings");
  app.add_flag("--json", json, "Print the summary as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  BuildOptions o;
  o.block_size = block_size;
  o.chunk_size = chunk_size;
  o.label = label;
  if (uuid_text == "random") o.uuid_mode = writer::UuidMode::Random;
  else if (uuid_text == "clear") o.uuid_mode = writer::UuidMode::Clear;
  else if (!uuid_text.empty()) {
    try {
      o.uuid = parse_uuid(uuid_text);
    } catch (const CLI::ValidationError& e) {
      fmt::print(stderr, "erofs mkfs: {}\n", e.what());
      return kExitError;
    }
    o.uuid_mode = writer::UuidMode::Fixed;
  }
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
    apply_extended_options(extended, o);
  } catch (const CLI::ValidationError& e) {
    fmt::print(stderr, "erofs mkfs: {}\n", e.what());
    return kExitError;
  }
  o.source = {all_root, force_uid, force_gid, exclude_paths, exclude_regexes, ignore_unreadable};
  o.warn = [](const std::string& m) { fmt::print(stderr, "erofs mkfs: warning: {}\n", m); };

  writer::install_cleanup_signal_handlers();
  writer::BuildStats stats;
  try {
    auto scan = writer::scan_directory(source, o.source, o.warn);
    stats = writer::build_image(scan.tree, image, o);
    stats.skipped_inputs = scan.skipped;
    if (verify) {
      writer::VerifyOptions vo;
      vo.check_mtime = o.inode_form != writer::InodeForm::Compact;
      auto problems = writer::verify_image(scan.tree, image, vo);
      for (auto& p : problems) fmt::print(stderr, "erofs mkfs: verify: {}\n", p);
      if (!problems.empty()) {
        fmt::print(stderr, "erofs mkfs: {} does not match {}\n", image, source);
        return kExitError;
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "erofs mkfs: {}\n", e.what());
    return kExitError;
  }

  if (json) {
    fmt::print(
        "{{\"image\": \"{}\", \"inodes\": {}, \"regular_files\": {}, \"directories\": {}, \"symlinks\": {}, "
        "\"special_files\": {}, \"hard_links\": {}, \"bytes_in\": {}, \"image_bytes\": {}, \"block_size\": {}, "
        "\"compact_inodes\": {}, \"extended_inodes\": {}, \"skipped_inputs\": {}, \"verified\": {}, \"seconds\": {:.3f}}}\n",
        json_escape(image), stats.inodes, stats.regular_files, stats.directories, stats.symlinks, stats.specials,
        stats.hard_links, stats.bytes_in, stats.image_bytes, block_size, stats.compact_inodes, stats.extended_inodes,
        stats.skipped_inputs, verify ? "true" : "false", stats.seconds);
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
