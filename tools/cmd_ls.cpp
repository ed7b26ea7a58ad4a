// erofs ls / cat / stat: read an image without mounting it.
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "compress/codec.h"
#include "format/superblock.h"
#include "tools/cli.h"
#include "tools/command.h"
#include "tools/format_util.h"
#include "tools/open_image.h"

namespace erofs::tools {
namespace {

std::string time_string(int64_t sec, uint32_t nsec) {
  time_t t = time_t(sec);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:09} UTC", buf, nsec);
}

std::string long_line(const reader::Image& img, const reader::Inode& ino, const std::string& name) {
  std::string size = S_ISCHR(ino.mode) || S_ISBLK(ino.mode) ? fmt::format("{}, {}", ino.rdev_major, ino.rdev_minor)
                                                            : std::to_string(ino.size);
  std::string line = fmt::format("{} {:>3} {:>5} {:>5} {:>10} {} {}", mode_string(ino.mode), ino.nlink, ino.uid,
                                 ino.gid, size, time_string(ino.mtime, ino.mtime_nsec).substr(0, 19), name);
  if (ino.is_symlink()) line += " -> " + img.readlink(ino);
  return line;
}

int run_ls(int argc, char** argv) {
  CLI::App app{"List a directory (or show a file) of an EROFS image.", "erofs ls"};
  std::string image, path = "/";
  bool lng = false, all = false;
  app.add_option("IMAGE", image, "Image to read")->required();
  app.add_option("PATH", path, "Path inside the image (default /)");
  app.add_flag("-l", lng, "Long listing: mode, links, owner, size, mtime");
  app.add_flag("-a", all, "Include '.' and '..'");
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  auto img = open_image(image);
  reader::Inode ino = img->resolve(path, true);
  if (!ino.is_dir()) {
    fmt::print("{}\n", lng ? long_line(*img, ino, path) : path);
    return kExitOk;
  }
  std::string out;
  img->read_dir(ino, [&](const reader::DirEntry& e) {
    if (!all && (e.name == "." || e.name == "..")) return true;
    out += lng ? long_line(*img, img->inode(e.nid), e.name) : e.name;
    out += '\n';
    return true;
  });
  fmt::print("{}", out);
  return kExitOk;
}

int run_cat(int argc, char** argv) {
  CLI::App app{"Write the contents of files in an EROFS image to standard output.", "erofs cat"};
  std::string image;
  std::vector<std::string> paths;
  app.add_option("IMAGE", image, "Image to read")->required();
  app.add_option("PATH", paths, "Files inside the image")->required();
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  auto img = open_image(image);
  std::vector<uint8_t> buf(1 << 20);
  for (auto& p : paths) {
    reader::Inode ino = img->resolve(p, true);
    if (ino.is_dir()) throw std::runtime_error(p + ": is a directory");
    for (uint64_t off = 0; off < ino.size;) {
      size_t n = img->read(ino, off, buf);
      if (n == 0) throw std::runtime_error(p + ": data ends early");
      for (size_t done = 0; done < n;) {
        ssize_t w = ::write(1, buf.data() + done, n - done);
        if (w < 0) throw std::runtime_error("writing standard output: " + std::string(strerror(errno)));
        done += size_t(w);
      }
      off += n;
    }
  }
  return kExitOk;
}

void print_extents(const std::vector<reader::Extent>& extents) {
  static constexpr const char* kKinds[] = {"hole", "plain", "compressed", "inline", "fragment"};
  fmt::print("{:>4} {:>12} {:>10} {:<10} {:>14} {:>9} {}\n", "#", "offset", "length", "kind", "physical",
             "plen", "algorithm");
  for (size_t i = 0; i < extents.size(); ++i) {
    const auto& e = extents[i];
    fmt::print("{:>4} {:>12} {:>10} {:<10} {:>14} {:>9} {}{}\n", i, e.offset, e.length, kKinds[size_t(e.kind)],
               e.physical, e.physical_length,
               e.algorithm < 0 ? "-" : compress::algorithm_name(compress::Algorithm(e.algorithm)),
               e.partial ? " partial" : "");
  }
}

int run_stat(int argc, char** argv) {
  CLI::App app{"Show the inode of a path in an EROFS image.", "erofs stat"};
  std::string image, path;
  bool extents = false;
  app.add_option("IMAGE", image, "Image to read")->required();
  app.add_option("PATH", path, "Path inside the image")->required();
  app.add_flag("-e,--extents", extents, "List where a regular file's bytes are stored");
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  auto img = open_image(image);
  reader::Inode ino = img->resolve(path, false);
  fmt::print("  File: {}{}\n", path, ino.is_symlink() ? " -> " + img->readlink(ino) : "");
  fmt::print("  Size: {:<12} Inode (nid): {:<10} Links: {}\n", ino.size, ino.nid, ino.nlink);
  fmt::print("Layout: {} ({} inode, {} bytes of inline xattrs)\n", format::layout_name(ino.layout()),
             ino.disk.extended ? "extended" : "compact", ino.xattr_size);
  fmt::print("Access: ({:04o}/{})  Uid: {}  Gid: {}\n", ino.mode & 07777, mode_string(ino.mode), ino.uid, ino.gid);
  if (S_ISCHR(ino.mode) || S_ISBLK(ino.mode)) fmt::print("Device: {}, {}\n", ino.rdev_major, ino.rdev_minor);
  fmt::print("Modify: {}\n", time_string(ino.mtime, ino.mtime_nsec));
  for (auto& x : img->xattrs(ino)) fmt::print(" Xattr: {} ({} bytes)\n", x.name, x.value.size());
  if (extents && ino.is_reg()) print_extents(img->extents(ino));
  return kExitOk;
}

RegisterCommand reg_ls("ls", "list a directory of an image", run_ls);
RegisterCommand reg_cat("cat", "print files of an image", run_cat);
RegisterCommand reg_stat("stat", "show the inode of a path in an image", run_stat);

}  // namespace
}  // namespace erofs::tools
