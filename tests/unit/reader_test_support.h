// Test support for the reader: the reference tree of tests/data/compat (listing, digests, xattrs
// from tree.tar), a full walk of an image that reads every inode, directory, link and byte, and
// scratch copies of images for tests that damage them.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reader/image.h"
#include "tests/unit/sha256.h"

namespace erofs::test {

// A file of tests/data/compat, the reference images and their source tree.
inline std::string compat_path(const std::string& rel) { return std::string(EROFS_COMPAT_DIR) + "/" + rel; }

struct ExpectedEntry {
  char type = 0;  // d, f, l
  uint32_t perm = 0;
  uint32_t uid = 0, gid = 0;
  uint64_t size = 0;
  std::string target;
  std::string sha256;
  std::map<std::string, std::string> xattrs;
};

// "./a/b" and "." as written by the listing -> "a/b" and "".
inline std::string normalize_listing_path(std::string p) {
  if (p == ".") return "";
  if (p.rfind("./", 0) == 0) p = p.substr(2);
  return p;
}

inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// xattrs per entry, from the PAX "SCHILY.xattr." records of a tar archive whose members all sit
// under one top directory ("tree/..."), keyed by the path below it.
inline std::map<std::string, std::map<std::string, std::string>> tar_xattrs(const std::string& tar) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::map<std::string, std::string> pending;
  auto octal = [&](size_t off, size_t len) {
    uint64_t v = 0;
    for (size_t i = off; i < off + len && tar[i] >= '0' && tar[i] <= '7'; ++i) v = v * 8 + uint64_t(tar[i] - '0');
    return v;
  };
  for (size_t pos = 0; pos + 512 <= tar.size();) {
    if (tar[pos] == '\0') break;
    const uint64_t size = octal(pos + 124, 12);
    const char type = tar[pos + 156];
    std::string name(tar.data() + pos, strnlen(tar.data() + pos, 100));
    std::string prefix(tar.data() + pos + 345, strnlen(tar.data() + pos + 345, 155));
    if (!prefix.empty()) name = prefix + "/" + name;
    const size_t data = pos + 512;
    if (type == 'x') {
      for (size_t r = data; r < data + size;) {
        const size_t space = tar.find(' ', r);
        const size_t len = std::stoul(tar.substr(r, space - r));
        const std::string record = tar.substr(space + 1, len - (space + 1 - r) - 1);
        const size_t eq = record.find('=');
        const std::string key = record.substr(0, eq);
        if (key.rfind("SCHILY.xattr.", 0) == 0) pending[key.substr(13)] = record.substr(eq + 1);
        r += len;
      }
    } else {
      while (!name.empty() && name.back() == '/') name.pop_back();
      const size_t slash = name.find('/');
      const std::string rel = slash == std::string::npos ? "" : name.substr(slash + 1);
      if (!pending.empty()) out[rel] = std::move(pending);
      pending.clear();
    }
    pos = data + (size + 511) / 512 * 512;
  }
  return out;
}

inline std::map<std::string, ExpectedEntry> load_expected_tree() {
  std::map<std::string, ExpectedEntry> tree;
  std::istringstream listing(read_whole_file(compat_path("tree-listing.txt")));
  for (std::string line; std::getline(listing, line);) {
    std::istringstream f(line);
    ExpectedEntry e;
    std::string perm, path, arrow;
    f >> e.type >> perm >> e.uid >> e.gid >> e.size >> path >> arrow;
    std::getline(f >> std::ws, e.target);
    e.perm = uint32_t(std::stoul(perm, nullptr, 8));
    tree[normalize_listing_path(path)] = e;
  }
  std::istringstream sums(read_whole_file(compat_path("tree-sha256.txt")));
  for (std::string line; std::getline(sums, line);) {
    std::istringstream f(line);
    std::string digest, path;
    f >> digest >> path;
    tree.at(normalize_listing_path(path)).sha256 = digest;
  }
  for (auto& [path, attrs] : tar_xattrs(read_whole_file(compat_path("tree.tar")))) tree.at(path).xattrs = attrs;
  return tree;
}

struct WalkedEntry {
  reader::Inode inode;
  uint8_t dirent_type = 0;
  std::string sha256;  // regular files (of the bytes read, see walk_image)
  std::string target;  // symlinks
  std::map<std::string, std::string> xattrs;
};

// Reads everything reachable from the root, checking "." and "..", and refusing directory loops.
// Reads at most max_file_bytes of each file (corrupted images may declare huge sparse files).
inline std::map<std::string, WalkedEntry> walk_image(const reader::Image& image,
                                                     uint64_t max_file_bytes = UINT64_MAX) {
  std::map<std::string, WalkedEntry> out;
  std::set<uint64_t> visited_dirs;
  std::vector<uint8_t> buf(64 * 1024);

  auto visit = [&](auto& self, const std::string& path, const reader::Inode& ino, uint64_t parent_nid,
                   uint8_t dirent_type) -> void {
    WalkedEntry w;
    w.inode = ino;
    w.dirent_type = dirent_type;
    for (auto& x : image.xattrs(ino)) w.xattrs[x.name] = x.value;
    if (ino.is_reg()) {
      Sha256 h;
      const uint64_t limit = std::min(ino.size, max_file_bytes);
      for (uint64_t off = 0; off < limit;) {
        const size_t n = image.read(ino, off, std::span(buf).first(size_t(std::min<uint64_t>(buf.size(), limit - off))));
        if (n == 0) throw std::logic_error("read returned 0 before the end of " + path);
        h.update(std::span(buf).first(n));
        off += n;
      }
      w.sha256 = h.hex();
    } else if (ino.is_symlink()) {
      w.target = image.readlink(ino);
    }
    out[path] = w;
    if (!ino.is_dir()) return;
    if (!visited_dirs.insert(ino.nid).second) throw reader::CorruptError("directory loop at " + path);
    std::vector<reader::DirEntry> entries;
    image.read_dir(ino, [&](const reader::DirEntry& e) {
      entries.push_back(e);
      return true;
    });
    for (const auto& e : entries) {
      if (e.name == ".") continue;
      if (e.name == "..") {
        if (e.nid != parent_nid) throw reader::CorruptError("'..' of " + path + " is not its parent");
        continue;
      }
      self(self, path.empty() ? e.name : path + "/" + e.name, image.inode(e.nid), ino.nid, e.file_type);
    }
  };
  const reader::Inode root = image.inode(image.root_nid());
  visit(visit, "", root, root.nid, 2);
  return out;
}

// Writes `bytes` to a fresh file in the test temp directory and returns its path.
inline std::string write_scratch_image(const std::string& name, const std::string& bytes) {
  // The pid keeps test processes that CTest runs in parallel off each other's files.
  const std::string path = ::testing::TempDir() + "/" + std::to_string(::getpid()) + "-" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
  return path;
}

// The image names listed in tests/data/compat/images.txt.
inline std::vector<std::string> compat_images() {
  std::vector<std::string> names;
  std::istringstream in(read_whole_file(compat_path("images.txt")));
  for (std::string line; std::getline(in, line);)
    if (auto colon = line.find(':'); colon != std::string::npos) names.push_back(line.substr(0, colon));
  return names;
}

// GoogleTest parameter name for an image file name: "plain-b512.img" -> "plain_b512".
inline std::string image_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.find('.'));
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

inline std::string compat_image_bytes(const std::string& name) {
  return read_whole_file(compat_path("images/" + name));
}

}  // namespace erofs::test
