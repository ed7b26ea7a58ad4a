// Extraction through the library (C++ and C API) gives back every attribute of an entry: the
// kernel clears setuid/setgid and security.capability on chown and on write, and a directory's
// mtime changes with every entry created in it, so the restore order decides what survives.
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "erofs-kit/erofs.h"
#include "erofs-kit/erofs.hpp"

namespace fs = std::filesystem;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "erofs-kit-attrs.XXXXXX").string();
    path_ = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string le32(uint32_t v) {
  return {char(v), char(v >> 8), char(v >> 16), char(v >> 24)};
}

// vfs_cap_data revision 2, effective: CAP_NET_RAW (13) and CAP_SYS_TIME (25) permitted.
std::string capability() {
  return le32(0x02000000 | 1) + le32((1u << 13) | (1u << 25)) + le32(0) + le32(0) + le32(0);
}

// system.posix_acl_access: user::rwx user:1001:r-x group::r-x mask::r-x other::---, whose
// mask agrees with the group bits of mode 06750.
std::string access_acl() {
  auto entry = [](uint16_t tag, uint16_t perm, uint32_t id) {
    return std::string{char(tag), char(tag >> 8), char(perm), char(perm >> 8)} + le32(id);
  };
  const uint32_t none = 0xFFFFFFFF;
  return le32(2) + entry(0x01, 7, none) + entry(0x02, 5, 1001) + entry(0x04, 5, none) + entry(0x10, 5, none) +
         entry(0x20, 0, none);
}

struct Expected {
  uint32_t mode, uid, gid;
  int64_t mtime;
  uint32_t mtime_nsec;
  std::map<std::string, std::string> xattrs;
};

std::map<std::string, std::string> xattrs_of(const std::string& path) {
  std::map<std::string, std::string> out;
  std::string names(size_t(65536), '\0');
  ssize_t n = ::llistxattr(path.c_str(), names.data(), names.size());
  for (ssize_t i = 0; i < n; i += ssize_t(std::strlen(names.data() + i)) + 1) {
    std::string name(names.data() + i);
    std::string value(size_t(65536), '\0');
    ssize_t len = ::lgetxattr(path.c_str(), name.c_str(), value.data(), value.size());
    value.resize(size_t(len < 0 ? 0 : len));
    out[name] = value;
  }
  return out;
}

void expect_entry(const std::string& path, const Expected& want) {
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0) << path;
  EXPECT_EQ(st.st_mode, want.mode) << path;
  EXPECT_EQ(st.st_uid, want.uid) << path;
  EXPECT_EQ(st.st_gid, want.gid) << path;
  EXPECT_EQ(st.st_mtim.tv_sec, want.mtime) << path;
  EXPECT_EQ(uint32_t(st.st_mtim.tv_nsec), want.mtime_nsec) << path;
  EXPECT_EQ(xattrs_of(path), want.xattrs) << path;
}

const std::string kContent = "a program\n";

const Expected kDir{S_IFDIR | 0750, 1000, 100, 1000000000, 5, {{"user.dir", "d"}}};
const Expected kFile{S_IFREG | 06750, 1000, 100, 1700000000, 123456789,
                     {{"security.capability", capability()},
                      {"system.posix_acl_access", access_acl()},
                      {"user.one", "1"},
                      {"user.two", "2"}}};

// An image of /old (kDir, older than its child) holding /old/prog (kFile).
void build(const std::string& image_path) {
  erofs::ImageBuilder b;
  erofs::EntryMeta dir{kDir.mode & 07777, kDir.uid, kDir.gid, kDir.mtime, kDir.mtime_nsec, {}};
  for (auto& [name, value] : kDir.xattrs) dir.xattrs.push_back({name, value});
  erofs::EntryMeta file{kFile.mode & 07777, kFile.uid, kFile.gid, kFile.mtime, kFile.mtime_nsec, {}};
  for (auto& [name, value] : kFile.xattrs) file.xattrs.push_back({name, value});
  ASSERT_TRUE(b.add_directory("/old", dir));
  ASSERT_TRUE(b.add_file("/old/prog", file, kContent));
  auto r = b.write(image_path);
  ASSERT_TRUE(r) << r.error().message;
}

void expect_extracted(const std::string& root) {
  expect_entry(root + "/old", kDir);
  expect_entry(root + "/old/prog", kFile);
  std::ifstream in(root + "/old/prog", std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), kContent);
}

TEST(LibraryExtract, EveryAttributeSurvivesTheCppApi) {
  if (::geteuid() != 0) GTEST_SKIP() << "owners and file capabilities are restored only as root";
  TempDir tmp;
  build(tmp / "img");
  auto image = erofs::Image::open(tmp / "img");
  ASSERT_TRUE(image) << image.error().message;
  auto r = image.value().extract(tmp / "out");
  ASSERT_TRUE(r) << r.error().message;
  expect_extracted(tmp / "out");
}

TEST(LibraryExtract, EveryAttributeSurvivesTheCApi) {
  if (::geteuid() != 0) GTEST_SKIP() << "owners and file capabilities are restored only as root";
  TempDir tmp;
  build(tmp / "img");
  erofs_error* err = nullptr;
  erofs_image* img = erofs_image_open((tmp / "img").c_str(), &err);
  ASSERT_NE(img, nullptr) << erofs_error_message(err);
  EXPECT_EQ(erofs_image_extract(img, (tmp / "out").c_str(), &err), 0) << (err ? erofs_error_message(err) : "");
  erofs_image_close(img);
  expect_extracted(tmp / "out");
}

}  // namespace
