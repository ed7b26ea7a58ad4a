// erofs fsck: check an image; exit 0 when clean, 1 when corrupt.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "reader/fsck.h"
#include "reader/verity_check.h"
#include "tools/cli.h"
#include "tools/command.h"
#include "tools/format_util.h"
#include "tools/verity_text.h"
#include "verity/params.h"

namespace erofs::tools {
namespace {

int run_fsck(int argc, char** argv) {
  CLI::App app{
      "Check every structure of an EROFS image: superblock and checksum, inodes, directories (names,\n"
      "order, '.' and '..'), link counts, directory loops, xattrs, symlinks, and all file data.\n"
      "A dm-verity hash tree after the filesystem (erofs mkfs --verity) is checked against the data too.\n"
      "Prints one line per problem. Exit status: 0 clean, 1 corrupt or unreadable.",
      "erofs fsck"};
  std::string image;
  bool metadata_only = false, quiet = false, json = false;
  reader::FsckOptions o;
  app.add_option("IMAGE", image, "Image to check")->required();
  app.add_flag("--metadata-only", metadata_only, "Skip reading (and decompressing) file data");
  app.add_flag("-q,--quiet", quiet, "Print only problems");
  app.add_flag("--json", json, "Print the result as JSON");
  app.add_option("--workers", o.workers, "Threads checking file data (default: two per core; the report is the same for any count)");
  std::string root_hash;
  reader::VerityCheckOptions vo;
  app.add_option("--root-hash", root_hash, "Check the dm-verity tree against this root hash (hex); a tree must be there");
  app.add_option("--verity-file", vo.hash_file, "The dm-verity superblock and tree are in this file, not after the image");
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  o.check_data = !metadata_only;
  reader::FsckReport r;
  reader::VerityCheckReport v;
  try {
    vo.root_hash = verity::parse_hex(root_hash, "root hash");
    r = reader::fsck_image(image, o);
    v = reader::check_verity(image, vo);
    r.problems.insert(r.problems.end(), v.problems.begin(), v.problems.end());
  } catch (const std::exception& e) {
    fmt::print(stderr, "erofs fsck: {}: {}\n", image, e.what());
    return kExitError;
  }
  if (json) {
    fmt::print("{{\"image\": \"{}\", \"clean\": {}, \"inodes\": {}, \"directories\": {}, \"files\": {}, "
               "\"data_bytes\": {}, \"verity\": {}, \"problems\": [",
               json_escape(image), r.clean() ? "true" : "false", r.inodes, r.directories, r.files, r.data_bytes,
               v.clean() && v.found ? verity_json(verity_summary(*v.superblock, v.hash_offset, v.root_hash)) : "null");
    for (size_t i = 0; i < r.problems.size(); ++i)
      fmt::print("{}\"{}\"", i ? ", " : "", json_escape(r.problems[i]));
    fmt::print("]}}\n");
  } else {
    for (auto& p : r.problems) fmt::print("{}: {}\n", image, p);
    if (!quiet)
      fmt::print("{}: {}: {} inodes, {} directories, {} files, {} of data checked\n", image,
                 r.clean() ? "clean" : fmt::format("{} problems", r.problems.size()), r.inodes, r.directories,
                 r.files, human_bytes(r.data_bytes));
    if (!quiet && v.clean() && v.found)
      fmt::print("{}: dm-verity tree clean: root hash {}{}\n", image, verity::to_hex(v.root_hash),
                 vo.root_hash.empty() ? " (no root hash given to check it against)" : ", as given");
  }
  return r.clean() ? kExitOk : kExitError;
}

RegisterCommand reg("fsck", "check an image for corruption", run_fsck);

}  // namespace
}  // namespace erofs::tools
