// writer::scan_tar on archives written in process with libarchive: names, replacement, implicit
// directories, ACLs as kernel xattrs, sparse entries, and images built from the tree.
#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "reader/image.h"
#include "writer/build_image.h"
#include "writer/errors.h"
#include "writer/source/scan_tar.h"
#include "lib/verify.h"

// Entries are written with designated initializers that leave the other fields at their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace fs = std::filesystem;
using namespace erofs;

namespace {

struct Entry {
  std::string name;
  unsigned type = AE_IFREG;
  std::string data;
  unsigned perm = 0644;
  int64_t mtime = 1600000000;
  long nsec = 0;
  int64_t uid = 0;
  std::string link;  // symlink target or hard link target
  bool hardlink = false;
  std::vector<std::tuple<int, int, int, int>> acl;  // (type, perm, tag, id)
  std::map<std::string, std::string> xattrs;
  std::vector<std::pair<int64_t, int64_t>> sparse;  // (offset, length) of data; data holds those bytes
  int64_t size = -1;                                // logical size for sparse entries
};

class TarTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("erofs_tar_test." + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_tar(const std::vector<Entry>& entries) {
    std::string path = (dir_ / "in.tar").string();
    archive* a = archive_write_new();
    archive_write_set_format_pax(a);
    EXPECT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
    for (auto& en : entries) {
      archive_entry* e = archive_entry_new();
      archive_entry_copy_pathname(e, en.name.c_str());
      archive_entry_set_filetype(e, en.type);
      archive_entry_set_perm(e, en.perm);
      archive_entry_set_mtime(e, en.mtime, en.nsec);
      archive_entry_set_uid(e, en.uid);
      archive_entry_set_gid(e, en.uid);
      if (en.hardlink) archive_entry_copy_hardlink(e, en.link.c_str());
      else if (en.type == AE_IFLNK) archive_entry_copy_symlink(e, en.link.c_str());
      for (auto& [t, p, tag, id] : en.acl) archive_entry_acl_add_entry(e, t, p, tag, id, nullptr);
      for (auto& [n, v] : en.xattrs) archive_entry_xattr_add_entry(e, n.c_str(), v.data(), v.size());
      archive_entry_set_size(e, en.type == AE_IFREG && !en.hardlink ? (en.size >= 0 ? en.size : int64_t(en.data.size())) : 0);
      for (auto& [o, l] : en.sparse) archive_entry_sparse_add_entry(e, o, l);  // checked against the size
      EXPECT_EQ(archive_write_header(a, e), ARCHIVE_OK) << archive_error_string(a);
      if (!en.data.empty()) {
        if (en.sparse.empty()) {
          archive_write_data(a, en.data.data(), en.data.size());
        } else {  // libarchive's pax writer takes the whole logical content and keeps the listed ranges
          std::string full(size_t(en.size), '\0');
          size_t pos = 0;
          for (auto& [o, l] : en.sparse) {
            full.replace(size_t(o), size_t(l), en.data.substr(pos, size_t(l)));
            pos += size_t(l);
          }
          archive_write_data(a, full.data(), full.size());
        }
      }
      archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    return path;
  }

  writer::ScanResult scan(const std::string& tar, const writer::TarOptions& t = {}) {
    return writer::scan_tar(tar, (dir_ / "out.img").string(), {}, t, nullptr);
  }

  static const writer::TreeInode* find(const writer::Tree& tree, const std::string& path) {
    const writer::TreeInode* ino = tree.root;
    size_t pos = 0;
    while (ino && pos < path.size()) {
      size_t slash = path.find('/', pos);
      if (slash == std::string::npos) slash = path.size();
      std::string part = path.substr(pos, slash - pos);
      const writer::TreeInode* next = nullptr;
      for (auto& d : ino->children)
        if (d.name == part) next = d.inode;
      ino = next;
      pos = slash + 1;
    }
    return ino;
  }

  static std::string content(const writer::TreeInode* ino) {
    std::string s(size_t(ino->size), '\0');
    writer::ContentOpener opener;
    opener.open(ino->content, ino->size).read(0, {reinterpret_cast<uint8_t*>(s.data()), s.size()});
    return s;
  }

  static std::string xattr(const writer::TreeInode* ino, const std::string& name) {
    for (auto& [n, v] : ino->xattrs)
      if (n == name) return v;
    return "<missing>";
  }

  std::string error_of(const std::vector<Entry>& entries) {
    try {
      scan(write_tar(entries));
    } catch (const writer::BuildError& e) {
      return e.what();
    }
    return "<no error>";
  }

  fs::path dir_;
};

TEST_F(TarTest, PosixAclXattrIsSortedLittleEndianVersion2) {
  std::string v = writer::posix_acl_xattr({{0x20, 4, 0xFFFFFFFF}, {2, 7, 1000}, {1, 6, 0xFFFFFFFF}});
  std::string want("\x02\0\0\0"                 // version
                   "\x01\0\x06\0\xff\xff\xff\xff"  // user::rw-
                   "\x02\0\x07\0\xe8\x03\0\0"      // user:1000:rwx
                   "\x20\0\x04\0\xff\xff\xff\xff",  // other::r--
                   28);
  EXPECT_EQ(v, want);
}

TEST_F(TarTest, NamesAreNormalisedAndTheLastEntryWins) {
  auto r = scan(write_tar({
      {.name = "./a//b/", .type = AE_IFDIR, .perm = 0750, .uid = 7},
      {.name = "a/./b/c", .data = "first"},
      {.name = "a/b/c", .data = "second", .mtime = 1700000000, .nsec = 123456789},
      {.name = "a/b", .type = AE_IFDIR, .perm = 0700, .uid = 9},
      {.name = "x/y/z", .data = "deep", .mtime = 1800000000},
      {.name = "a/hl", .link = "./a/b/c", .hardlink = true},
  }));
  auto& t = r.tree;
  const writer::TreeInode* c = find(t, "a/b/c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(content(c), "second");
  EXPECT_EQ(c->mtime, 1700000000);
  EXPECT_EQ(c->mtime_nsec, 123456789u);
  EXPECT_EQ(c->nlink, 2u);
  EXPECT_EQ(find(t, "a/hl"), c);
  const writer::TreeInode* b = find(t, "a/b");
  EXPECT_EQ(b->mode, S_IFDIR | 0700u);
  EXPECT_EQ(b->uid, 9u);
  // Implicit directories: 0755, owner 0, the newest mtime in the archive.
  for (auto* p : {"a", "x", "x/y"}) {
    const writer::TreeInode* d = find(t, p);
    ASSERT_NE(d, nullptr) << p;
    EXPECT_EQ(d->mode, S_IFDIR | 0755u) << p;
    EXPECT_EQ(d->uid, 0u) << p;
    EXPECT_EQ(d->mtime, 1800000000) << p;
  }
  // The replaced "first" is gone from the tree, not only from its directory.
  size_t regular = 0;
  for (auto& i : t.inodes) regular += i->is_reg();
  EXPECT_EQ(regular, 2u);
}

TEST_F(TarTest, HostileAndConflictingNamesAreErrorsNamingTheEntry) {
  EXPECT_NE(error_of({{.name = "ok"}, {.name = "a/../../evil"}}).find("'a/../../evil'"), std::string::npos);
  EXPECT_NE(error_of({{.name = "/etc/passwd"}}).find("'/etc/passwd': absolute"), std::string::npos);
  EXPECT_NE(error_of({{.name = "d/child"}, {.name = "d"}}).find("'d': replaces a directory"), std::string::npos);
  EXPECT_NE(error_of({{.name = "f"}, {.name = "f/x"}}).find("'f' is not a directory"), std::string::npos);
  EXPECT_NE(error_of({{.name = "h", .link = "nowhere", .hardlink = true}}).find("'h': hard link"), std::string::npos);
  // An empty directory may be replaced by a file.
  auto r = scan(write_tar({{.name = "d", .type = AE_IFDIR}, {.name = "d", .data = "file now"}}));
  EXPECT_TRUE(find(r.tree, "d")->is_reg());
}

TEST_F(TarTest, AclsBecomeKernelXattrsAndTheMaskIsTheGroupClass) {
  const int A = ARCHIVE_ENTRY_ACL_TYPE_ACCESS, D = ARCHIVE_ENTRY_ACL_TYPE_DEFAULT;
  auto r = scan(write_tar({
      {.name = "f",
       .perm = 0640,
       .acl = {{A, 6, ARCHIVE_ENTRY_ACL_USER_OBJ, -1}, {A, 4, ARCHIVE_ENTRY_ACL_GROUP_OBJ, -1},
               {A, 7, ARCHIVE_ENTRY_ACL_USER, 100000}, {A, 5, ARCHIVE_ENTRY_ACL_MASK, -1},
               {A, 0, ARCHIVE_ENTRY_ACL_OTHER, -1}}},
      {.name = "d",
       .type = AE_IFDIR,
       .perm = 0755,
       .acl = {{D, 7, ARCHIVE_ENTRY_ACL_USER_OBJ, -1}, {D, 5, ARCHIVE_ENTRY_ACL_GROUP_OBJ, -1},
               {D, 6, ARCHIVE_ENTRY_ACL_GROUP, 2000}, {D, 7, ARCHIVE_ENTRY_ACL_MASK, -1},
               {D, 1, ARCHIVE_ENTRY_ACL_OTHER, -1}}},
  }));
  const writer::TreeInode* f = find(r.tree, "f");
  EXPECT_EQ(xattr(f, "system.posix_acl_access"),
            writer::posix_acl_xattr({{1, 6, 0xFFFFFFFF}, {2, 7, 100000}, {4, 4, 0xFFFFFFFF}, {0x10, 5, 0xFFFFFFFF},
                                     {0x20, 0, 0xFFFFFFFF}}));
  EXPECT_EQ(f->mode & 0777, 0650u);  // group class = mask
  const writer::TreeInode* d = find(r.tree, "d");
  EXPECT_EQ(xattr(d, "system.posix_acl_default"),
            writer::posix_acl_xattr({{1, 7, 0xFFFFFFFF}, {4, 5, 0xFFFFFFFF}, {8, 6, 2000}, {0x10, 7, 0xFFFFFFFF},
                                     {0x20, 1, 0xFFFFFFFF}}));
  EXPECT_EQ(xattr(d, "system.posix_acl_access"), "<missing>");
  EXPECT_EQ(d->mode & 0777, 0755u);
}

TEST_F(TarTest, AufsWhiteoutsAndOverlayStrip) {
  std::string tar = write_tar({
      {.name = "d/.wh.gone"},
      {.name = "o/.wh..wh..opq"},
      {.name = ".wh..wh.plnk/x"},
      {.name = "x", .xattrs = {{"trusted.overlay.origin", "o"}, {"user.keep", "k"}}},
  });
  auto r = scan(tar, {.aufs = true, .ovlfs_strip = true});
  const writer::TreeInode* w = find(r.tree, "d/gone");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(S_ISCHR(w->mode));
  EXPECT_EQ(w->rdev_major, 0u);
  EXPECT_EQ(w->rdev_minor, 0u);
  EXPECT_EQ(xattr(find(r.tree, "o"), "trusted.overlay.opaque"), "y");
  EXPECT_EQ(find(r.tree, "o")->children.size(), 0u);
  EXPECT_EQ(find(r.tree, ".wh..wh.plnk"), nullptr);
  EXPECT_EQ(xattr(find(r.tree, "x"), "trusted.overlay.origin"), "<missing>");
  EXPECT_EQ(xattr(find(r.tree, "x"), "user.keep"), "k");
  auto plain = scan(tar);
  EXPECT_NE(find(plain.tree, "d/.wh.gone"), nullptr);
  EXPECT_EQ(xattr(find(plain.tree, "x"), "trusted.overlay.origin"), "o");
}

// Sparse entries keep their holes in the data file, and chunked images leave them unmapped;
// every layout reads the data from the data file (verify compares with it).
TEST_F(TarTest, ImagesFromATarVerifyInEveryLayout) {
  const int64_t big = 8 << 20;
  std::string island(70000, 'i');
  std::string tar = write_tar({
      {.name = "sparse", .data = "head" + island, .sparse = {{0, 4}, {big / 2, 70000}}, .size = big},
      {.name = "text", .data = std::string(300000, 'x') + "tail"},
      {.name = "small", .data = "small file"},
      {.name = "link", .type = AE_IFLNK, .link = "text"},
      {.name = "fifo", .type = AE_IFIFO},
  });
  for (int variant = 0; variant < 4; ++variant) {
    auto r = scan(tar);
    const writer::TreeInode* s = find(r.tree, "sparse");
    ASSERT_EQ(s->size, uint64_t(big));
    std::string c = content(s);
    EXPECT_EQ(c.substr(0, 4), "head");
    EXPECT_EQ(c.substr(size_t(big / 2), 70000), island);
    EXPECT_EQ(c.find_first_not_of('\0', 4), size_t(big / 2));
    writer::BuildOptions o;
    if (variant == 1) o.chunk_size = 65536;
    if (variant >= 2) {
      o.compression.emplace();
      o.compression->algorithms.push_back(compress::parse_spec("lz4hc"));
      o.compression->workers = 2;
      if (variant == 3) o.compression->fragments = o.compression->all_fragments = true;
    }
    std::string img = (dir_ / "out.img").string();
    writer::build_image(r.tree, img, o);
    for (auto& p : lib::verify_image(r.tree, img, {})) ADD_FAILURE() << "variant " << variant << ": " << p;
    if (variant == 1) {
      EXPECT_LT(fs::file_size(img), uint64_t(1) << 20) << "holes were stored";
    }
  }
}

}  // namespace
