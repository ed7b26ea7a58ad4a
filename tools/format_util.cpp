#include "tools/format_util.h"

#include <sys/stat.h>

#include <fmt/format.h>

namespace erofs::tools {

std::string human_bytes(uint64_t n) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += char(c);
    }
  }
  return out;
}

std::string mode_string(uint32_t mode) {
  std::string s = "?---------";
  switch (mode & S_IFMT) {
    case S_IFREG: s[0] = '-'; break;
    case S_IFDIR: s[0] = 'd'; break;
    case S_IFLNK: s[0] = 'l'; break;
    case S_IFCHR: s[0] = 'c'; break;
    case S_IFBLK: s[0] = 'b'; break;
    case S_IFIFO: s[0] = 'p'; break;
    case S_IFSOCK: s[0] = 's'; break;
  }
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i)
    if (mode & (0400 >> i)) s[1 + i] = rwx[i];
  if (mode & S_ISUID) s[3] = (mode & S_IXUSR) ? 's' : 'S';
  if (mode & S_ISGID) s[6] = (mode & S_IXGRP) ? 's' : 'S';
  if (mode & S_ISVTX) s[9] = (mode & S_IXOTH) ? 't' : 'T';
  return s;
}

}  // namespace erofs::tools
