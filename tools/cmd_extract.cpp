// erofs extract: restore an image's tree into a directory.
#include <chrono>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "reader/extract.h"
#include "tools/cli.h"
#include "tools/command.h"
#include "tools/format_util.h"
#include "tools/open_image.h"
#include "tools/progress_display.h"

namespace erofs::tools {
namespace {

struct ExtractCommand {
  std::string image, dest;
  bool quiet = false, json = false, no_progress = false;
};

void print_summary(const ExtractCommand& c, const reader::ExtractStats& s, double seconds) {
  if (c.json) {
    fmt::print("{{\"image\": \"{}\", \"destination\": \"{}\", \"directories\": {}, \"files\": {}, \"symlinks\": {}, "
               "\"special_files\": {}, \"hard_links\": {}, \"bytes\": {}, \"errors\": {}, \"warnings\": {}, "
               "\"workers\": {}, \"seconds\": {:.3f}}}\n",
               json_escape(c.image), json_escape(c.dest), s.directories, s.files, s.symlinks, s.specials, s.hard_links,
               s.bytes, s.errors, s.warnings, s.workers, seconds);
    return;
  }
  if (c.quiet) return;
  fmt::print("{}: extracted {} directories, {} files ({}), {} symlinks, {} special files, {} hard links into {}{}\n",
             c.image, s.directories, s.files, human_bytes(s.bytes), s.symlinks, s.specials, s.hard_links, c.dest,
             s.errors ? fmt::format("; {} entries failed", s.errors) : "");
}

int run_extract(int argc, char** argv) {
  CLI::App app{
      "Extract an EROFS image into DIR (created if missing; existing entries are never overwritten):\n"
      "contents, modes, owners (as root), mtimes with nanoseconds, xattrs, symlinks, hard links,\n"
      "devices, FIFOs and sockets. Links are never followed, so nothing outside DIR is touched.\n"
      "An entry the image has damaged is left out with one line on stderr, and the rest is extracted.\n"
      "Exit status: 0 done, 1 error (damaged entries, or the extraction stopped), 2 done with warnings.",
      "erofs extract"};
  ExtractCommand c;
  reader::ExtractOptions o;
  bool no_owners = false, no_xattrs = false;
  app.add_option("IMAGE", c.image, "Image to read")->required();
  app.add_option("DIR", c.dest, "Destination directory")->required();
  app.add_option("--path", o.subtree, "Extract only this file or directory of the image");
  app.add_flag("--no-owners", no_owners, "Do not restore owners");
  app.add_flag("--no-xattrs", no_xattrs, "Do not restore xattrs");
  app.add_option("--workers", o.workers, "Threads creating files (default: one per core)");
  app.add_flag("-q,--quiet", c.quiet, "Print no summary");
  app.add_flag("--no-progress", c.no_progress,
               "No progress display (it goes to stderr: redrawn on a terminal, a line every 5 s otherwise)");
  app.add_flag("--json", c.json, "Print the summary as JSON");
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  const auto start = std::chrono::steady_clock::now();
  // Extraction decodes whole extents straight into its buffers: the cache holds only what
  // neighbouring files share (fragments), and a small one keeps the memory bounded.
  auto img = open_image(c.image, 16ull << 20, true);
  o.owners = !no_owners;
  o.xattrs = !no_xattrs;
  o.warn = [&](const std::string& m) { fmt::print(stderr, "erofs extract: warning: {}\n", m); };
  o.error = [&](const std::string& m) { fmt::print(stderr, "erofs extract: {}: {}\n", c.image, m); };
  std::optional<ProgressDisplay> display;
  if (!c.quiet && !c.json && !c.no_progress) {
    display.emplace();
    o.progress = [&display](const reader::ExtractProgress& p) {
      display->show([&p](double secs) {
        return fmt::format("entries {}/{}  written {}  {}/s", p.entries, p.total_inodes, human_bytes(p.bytes),
                           human_bytes(uint64_t(secs > 0 ? double(p.bytes) / secs : 0)));
      });
    };
  }
  reader::ExtractStats s;
  try {
    s = reader::extract_image(*img, c.dest, o);
  } catch (const std::exception& e) {
    display.reset();
    fmt::print(stderr, "erofs extract: {}: {}\n", c.image, e.what());
    return kExitError;
  }
  display.reset();
  print_summary(c, s, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return s.errors ? kExitError : s.warnings ? kExitPartial : kExitOk;
}

RegisterCommand reg("extract", "extract an image into a directory", run_extract);

}  // namespace
}  // namespace erofs::tools
