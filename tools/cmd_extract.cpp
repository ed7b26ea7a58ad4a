// erofs extract: restore an image's tree into a directory.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "reader/extract.h"
#include "tools/cli.h"
#include "tools/command.h"
#include "tools/format_util.h"
#include "tools/open_image.h"

namespace erofs::tools {
namespace {

int run_extract(int argc, char** argv) {
  CLI::App app{
      "Extract an EROFS image into DIR (created if missing; existing entries are never overwritten):\n"
      "contents, modes, owners (as root), mtimes with nanoseconds, xattrs, symlinks, hard links,\n"
      "devices, FIFOs and sockets. Links are never followed, so nothing outside DIR is touched.",
      "erofs extract"};
  std::string image, dest, subtree = "/";
  bool no_owners = false, no_xattrs = false, quiet = false;
  app.add_option("IMAGE", image, "Image to read")->required();
  app.add_option("DIR", dest, "Destination directory")->required();
  app.add_option("--path", subtree, "Extract only this file or directory of the image");
  app.add_flag("--no-owners", no_owners, "Do not restore owners");
  app.add_flag("--no-xattrs", no_xattrs, "Do not restore xattrs");
  app.add_flag("-q,--quiet", quiet, "Print no summary");
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  auto img = open_image(image);
  reader::ExtractOptions o;
  o.owners = !no_owners;
  o.xattrs = !no_xattrs;
  o.subtree = subtree;
  uint64_t warnings = 0;
  o.warn = [&](const std::string& m) {
    ++warnings;
    fmt::print(stderr, "erofs extract: warning: {}\n", m);
  };
  reader::ExtractStats s;
  try {
    s = reader::extract_image(*img, dest, o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "erofs extract: {}: {}\n", image, e.what());
    return kExitError;
  }
  if (!quiet)
    fmt::print("{}: extracted {} directories, {} files ({}), {} symlinks, {} special files, {} hard links into {}\n",
               image, s.directories, s.files, human_bytes(s.bytes), s.symlinks, s.specials, s.hard_links, dest);
  return warnings ? kExitPartial : kExitOk;
}

RegisterCommand reg("extract", "extract an image into a directory", run_extract);

}  // namespace
}  // namespace erofs::tools
