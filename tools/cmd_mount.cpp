// erofs mount / umount: the FUSE driver's command line.
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fuse/fuse_driver.h"
#include "tools/cli.h"
#include "tools/command.h"

namespace erofs::tools {
namespace {

// A byte count with an optional K, M or G suffix, at most `max`.
uint64_t parse_size(const std::string& name, const std::string& v, uint64_t max, bool suffixes = true) {
  auto bad = [&] { return std::runtime_error(fmt::format("-o {}: '{}' is not a number from 0 to {}", name, v, max)); };
  if (v.empty() || v.find_first_not_of("0123456789") == 0) throw bad();
  errno = 0;
  char* end = nullptr;
  uint64_t n = std::strtoull(v.c_str(), &end, 10);
  if (errno == ERANGE) throw bad();
  unsigned shift = 0;
  if (suffixes && *end) {
    switch (*end) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: throw bad();
    }
    ++end;
  }
  if (*end || n > (max >> shift)) throw bad();
  return n << shift;
}

int run_mount(int argc, char** argv) {
  CLI::App app{
      "Mount an EROFS image with FUSE (no root or kernel module needed). Read-only: every write gets EROFS.\n"
      "Unmount with 'erofs umount MOUNTPOINT' or 'fusermount3 -u MOUNTPOINT'.\n\n"
      "-o options of erofs-kit:\n"
      "  cache_size=BYTES        decoded pclusters kept in memory (default 256M; suffixes K, M, G)\n"
      "  meta_cache_size=BYTES   metadata blocks kept in memory (inodes, directories, indexes, small\n"
      "                          files stored inline; default 64M)\n"
      "  readahead=BYTES         also decode this far ahead of sequential readers on a thread pool\n"
      "                          (default 0: the kernel's readahead requests, served in parallel,\n"
      "                          measured faster; may help with many cores and a 128K window)\n"
      "  readahead_threads=N     threads decoding ahead (default: one per core)\n"
      "  kernel_readahead=BYTES  the kernel's readahead window for this mount, so sequential reads\n"
      "                          come in large requests (default 1M; needs root to raise it, else\n"
      "                          the kernel's 128K stays)\n"
      "  max_read=BYTES          the largest read the kernel sends (default 1M; suffixes K, M)\n"
      "  poll=MICROSECONDS       after each request, poll this long for the next before sleeping\n"
      "                          (default 100; 0 sleeps at once, spending no CPU time waiting)\n"
      "Other -o options go to FUSE (allow_other, allow_root, ...).",
      "erofs mount"};
  fuse::MountOptions o;
  std::vector<std::string> opts;
  app.add_option("IMAGE", o.image, "Image to mount")->required();
  app.add_option("MOUNTPOINT", o.mountpoint, "Directory to mount on")->required();
  app.add_flag("-f,--foreground", o.foreground, "Stay in the foreground");
  app.add_flag("-d,--debug", o.debug, "Print FUSE requests (implies -f)");
  app.add_option("-o", opts, "Comma-separated options (see above)")->delimiter(',');
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  if (o.debug) o.foreground = true;
  try {
    for (auto& opt : opts) {
      auto eq = opt.find('=');
      std::string key = opt.substr(0, eq), value = eq == std::string::npos ? "" : opt.substr(eq + 1);
      if (key == "cache_size") o.cache_bytes = parse_size(key, value, 1ull << 40);
      else if (key == "meta_cache_size") o.meta_cache_bytes = parse_size(key, value, 1ull << 40);
      else if (key == "readahead") o.readahead_bytes = parse_size(key, value, 1ull << 30);
      else if (key == "kernel_readahead") o.kernel_readahead_bytes = parse_size(key, value, 1ull << 30);
      else if (key == "readahead_threads") o.readahead_threads = unsigned(parse_size(key, value, 256, false));
      else if (key == "poll") o.poll_us = uint32_t(parse_size(key, value, 1000000, false));
      else if (key == "max_read") {
        o.max_read = uint32_t(parse_size(key, value, 1u << 30));
        o.fuse_options.push_back(fmt::format("max_read={}", o.max_read));  // libfuse reads digits only
      }
      else if (key == "ro") continue;
      else if (key == "rw") throw std::runtime_error("-o rw: EROFS images are read-only");
      else o.fuse_options.push_back(opt);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "erofs mount: {}\n", e.what());
    return kExitError;
  }
  return fuse::mount_and_serve(o);
}

int run_umount(int argc, char** argv) {
  CLI::App app{"Unmount an image mounted with 'erofs mount'.", "erofs umount"};
  std::string mountpoint;
  bool lazy = false;
  app.add_option("MOUNTPOINT", mountpoint, "Where the image is mounted")->required();
  app.add_flag("-z,--lazy", lazy, "Detach now even if files are in use; the driver exits when they are closed");
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  if (::geteuid() == 0) {
    if (::umount2(mountpoint.c_str(), lazy ? MNT_DETACH : 0) == 0) return kExitOk;
    fmt::print(stderr, "erofs umount: {}: {}\n", mountpoint, std::strerror(errno));
    return kExitError;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    if (lazy) ::execlp("fusermount3", "fusermount3", "-u", "-z", mountpoint.c_str(), nullptr);
    else ::execlp("fusermount3", "fusermount3", "-u", mountpoint.c_str(), nullptr);
    fmt::print(stderr, "erofs umount: cannot run fusermount3: {}\n", std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? kExitOk : kExitError;
}

RegisterCommand reg_mount("mount", "mount an image with FUSE", run_mount);
RegisterCommand reg_umount("umount", "unmount an image mounted with 'erofs mount'", run_umount);

}  // namespace
}  // namespace erofs::tools
