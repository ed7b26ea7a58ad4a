// writer::scan_mtree: keywords and their defaults, both manifest forms, /set and /unset, contents=
// paths, independence from the current directory, one error per class, images built from the tree.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "writer/build_image.h"
#include "writer/errors.h"
#include "writer/source/scan_mtree.h"
#include "lib/verify.h"

namespace fs = std::filesystem;
using namespace erofs;

namespace {

class MtreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("erofs_mtree_test." + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "stage");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A file under the staging directory, with deliberately different metadata from any manifest.
  void stage(const std::string& rel, const std::string& data) {
    fs::path p = dir_ / "stage" / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << data;
    ::chmod(p.c_str(), 0600);
  }

  std::string manifest(const std::string& text, const std::string& name = "m.mtree") {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  writer::ScanResult scan(const std::string& text, const writer::SourceOptions& o = {}) {
    return writer::scan_mtree(manifest(text), (dir_ / "stage").string(), o, nullptr);
  }

  std::string error_of(const std::string& text, const std::string& root = "") {
    try {
      writer::scan_mtree(manifest(text), root.empty() ? (dir_ / "stage").string() : root, {}, nullptr);
    } catch (const writer::BuildError& e) {
      return e.what();
    }
    return "<no error>";
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

  void build_and_verify(writer::Tree& tree) {
    std::string img = (dir_ / "out.img").string();
    writer::build_image(tree, img, {});
    for (auto& p : lib::verify_image(tree, img, {})) ADD_FAILURE() << p;
  }

  fs::path dir_;
};

TEST_F(MtreeTest, EveryTypeAndKeywordOfTheFullPathForm) {
  stage("d/f", "hello\n");
  auto r = scan(
      "#mtree\n"
      ". type=dir mode=0750 uid=1 gid=2 time=1500000000.000000001\n"
      "./d type=dir mode=755 uid=0 gid=0 time=1600000000.5\n"
      "./d/f type=file mode=0640 uid=12345 gid=54321 time=1700000000.123456789 size=6\n"
      "./d/l type=link mode=0777 link=f time=1\n"
      "./c type=char mode=0620 device=native,1,3\n"
      "./b type=block mode=0660 device=native,7,0 nlink=1\n"
      "./p type=fifo mode=0644\n"
      "./s type=socket mode=0755\n"
      "./sum type=file contents=d/f sha256digest=5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03 "
      "md5digest=b1946ac92492d2347c6235b4d2611184 flags=none tags=x ignore optional nochange inode=99 cksum=1\n");
  auto& t = r.tree;
  EXPECT_EQ(t.root->mode, S_IFDIR | 0750u);
  EXPECT_EQ(t.root->uid, 1u);
  EXPECT_EQ(t.root->gid, 2u);
  EXPECT_EQ(t.root->mtime, 1500000000);
  EXPECT_EQ(t.root->mtime_nsec, 1u);
  const writer::TreeInode* f = find(t, "d/f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->mode, S_IFREG | 0640u);  // the staging file's 0600 does not count
  EXPECT_EQ(f->uid, 12345u);
  EXPECT_EQ(f->gid, 54321u);
  EXPECT_EQ(f->mtime, 1700000000);
  EXPECT_EQ(f->mtime_nsec, 123456789u);
  EXPECT_EQ(f->size, 6u);
  EXPECT_EQ(content(f), "hello\n");
  EXPECT_EQ(f->image_path, "d/f");
  // libarchive reads the fraction as a count of nanoseconds (as mtree(8) once wrote it).
  EXPECT_EQ(find(t, "d")->mtime_nsec, 5u);
  const writer::TreeInode* l = find(t, "d/l");
  EXPECT_EQ(l->mode, S_IFLNK | 0777u);
  EXPECT_EQ(l->symlink_target, "f");
  const writer::TreeInode* c = find(t, "c");
  EXPECT_EQ(c->mode, S_IFCHR | 0620u);
  EXPECT_EQ(c->rdev_major, 1u);
  EXPECT_EQ(c->rdev_minor, 3u);
  EXPECT_EQ(find(t, "b")->mode, S_IFBLK | 0660u);
  EXPECT_EQ(find(t, "b")->rdev_major, 7u);
  EXPECT_EQ(find(t, "p")->mode, S_IFIFO | 0644u);
  EXPECT_EQ(find(t, "s")->mode, S_IFSOCK | 0755u);
  EXPECT_EQ(content(find(t, "sum")), "hello\n");
  EXPECT_NE(find(t, "sum"), f);  // same contents, still two inodes (no hard links from mtree)
  build_and_verify(t);
}

TEST_F(MtreeTest, MissingKeywordsGetTheDocumentedDefaults) {
  stage("f", "12345");
  stage("notype", "x");
  auto r = scan(
      "#mtree\n"
      "./a/b/f type=file contents=f time=1800000000\n"
      "./notype\n"
      "./d type=dir\n"
      "./l type=link link=/abs/target\n"
      "./c type=char\n");
  auto& t = r.tree;
  const writer::TreeInode* f = find(t, "a/b/f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->mode, S_IFREG | 0644u);
  EXPECT_EQ(f->uid, 0u);
  EXPECT_EQ(f->gid, 0u);
  EXPECT_EQ(f->size, 5u);  // no size=: the contents' size
  EXPECT_EQ(find(t, "notype")->mode, S_IFREG | 0644u);
  EXPECT_EQ(find(t, "notype")->mtime, 0);
  EXPECT_EQ(find(t, "d")->mode, S_IFDIR | 0755u);
  EXPECT_EQ(find(t, "l")->mode, S_IFLNK | 0777u);
  EXPECT_EQ(find(t, "c")->rdev_major, 0u);
  // Implicit parents and the root: 0755, owner 0, the newest time in the manifest.
  for (auto* p : {"", "a", "a/b"}) {
    const writer::TreeInode* d = find(t, p);
    ASSERT_NE(d, nullptr) << p;
    EXPECT_EQ(d->mode, S_IFDIR | 0755u) << p;
    EXPECT_EQ(d->mtime, 1800000000) << p;
  }
}

TEST_F(MtreeTest, ClassicFormWithSetUnsetContinuationsAndEscapes) {
  stage("d/a b", "spaced");
  stage("d/sub/x", "xx");
  stage("top", "t");
  auto r = scan(
      "# comment\n"
      "/set type=file uid=5 gid=6 mode=0600\n"
      ".               type=dir mode=0755 time=10.0\n"
      "    top         time=11.0\n"
      "d               type=dir time=12.0\n"
      "    a\\040b     time=13.0 \\\n"
      "                size=6\n"
      "/unset uid mode\n"
      "sub             type=dir\n"
      "    x           time=14.0\n"
      "..\n"
      "..\n"
      "/unset all\n"
      "after           type=fifo\n");
  auto& t = r.tree;
  const writer::TreeInode* top = find(t, "top");
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->mode, S_IFREG | 0600u);
  EXPECT_EQ(top->uid, 5u);
  EXPECT_EQ(top->gid, 6u);
  const writer::TreeInode* ab = find(t, "d/a b");
  ASSERT_NE(ab, nullptr);
  EXPECT_EQ(content(ab), "spaced");
  EXPECT_EQ(ab->mtime, 13);
  const writer::TreeInode* x = find(t, "d/sub/x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->mode, S_IFREG | 0644u);  // mode unset: the default
  EXPECT_EQ(x->uid, 0u);
  EXPECT_EQ(x->gid, 6u);
  EXPECT_EQ(find(t, "d/sub")->mode, S_IFDIR | 0755u);
  const writer::TreeInode* after = find(t, "after");
  ASSERT_NE(after, nullptr);  // ".." went back up to the root
  EXPECT_EQ(after->mode, S_IFIFO | 0644u);
  EXPECT_EQ(after->gid, 0u);
  build_and_verify(t);
}

TEST_F(MtreeTest, FullPathEntriesOnSeveralLinesAndSetContents) {
  stage("one", "1");
  stage("two", "22");
  auto r = scan(
      "#mtree\n"
      "./f type=file mode=0700 uid=3\n"
      "/set contents=one\n"
      "./g type=file\n"
      "./h type=file contents=two\n"
      "/unset contents\n"
      "./f time=99 contents=two\n");
  auto& t = r.tree;
  const writer::TreeInode* f = find(t, "f");
  EXPECT_EQ(f->mode, S_IFREG | 0700u);  // from its first line
  EXPECT_EQ(f->uid, 3u);
  EXPECT_EQ(f->mtime, 99);  // from its second line
  EXPECT_EQ(content(f), "22");
  EXPECT_EQ(content(find(t, "g")), "1");
  EXPECT_EQ(content(find(t, "h")), "22");
}

TEST_F(MtreeTest, ContentsOutsideTheEntryPath) {
  fs::create_directories(dir_ / "elsewhere");
  std::ofstream(dir_ / "elsewhere" / "blob") << "far away";
  std::ofstream(dir_ / "elsewhere" / "with space") << "spaced";
  fs::create_symlink(dir_ / "elsewhere" / "blob", dir_ / "stage" / "link-to-blob");
  std::string abs = (dir_ / "elsewhere" / "blob").string();
  auto r = scan("#mtree\n"
                "./rel type=file contents=../elsewhere/blob\n"
                "./abs type=file contents=" + abs + "\n"
                "./esc type=file contents=../elsewhere/with\\040space\n"
                "./vialink type=file contents=link-to-blob size=8\n");
  EXPECT_EQ(content(find(r.tree, "rel")), "far away");
  EXPECT_EQ(content(find(r.tree, "abs")), "far away");
  EXPECT_EQ(content(find(r.tree, "esc")), "spaced");
  EXPECT_EQ(content(find(r.tree, "vialink")), "far away");
  build_and_verify(r.tree);
}

TEST_F(MtreeTest, DefaultContentRootIsTheManifestDirectory) {
  fs::create_directories(dir_ / "m" / "data");
  std::ofstream(dir_ / "m" / "data" / "f") << "beside the manifest";
  std::string m = (dir_ / "m" / "x.mtree").string();
  std::ofstream(m) << "#mtree\n./data/f type=file\n";
  auto r = writer::scan_mtree(m, "", {}, nullptr);
  EXPECT_EQ(content(find(r.tree, "data/f")), "beside the manifest");
}

TEST_F(MtreeTest, NothingDependsOnTheCurrentDirectory) {
  stage("f", "the real one");
  // A decoy with the same relative names in the current directory: libarchive would open it if it
  // were allowed to look at the file system.
  fs::create_directories(dir_ / "cwd" / "stage");
  std::ofstream(dir_ / "cwd" / "f") << "decoy, longer than the real one";
  std::ofstream(dir_ / "cwd" / "stage" / "f") << "decoy";
  std::string m = manifest("#mtree\n./f type=file mode=0644 uid=0 gid=0\n");
  fs::path old = fs::current_path();
  fs::current_path(dir_ / "cwd");
  writer::ScanResult r;
  try {
    r = writer::scan_mtree(m, (dir_ / "stage").string(), {}, nullptr);
  } catch (...) {
    fs::current_path(old);
    throw;
  }
  fs::current_path(old);
  const writer::TreeInode* f = find(r.tree, "f");
  EXPECT_EQ(f->size, 12u);
  EXPECT_EQ(f->content.kind(), writer::FileContent::Kind::AtPath);
  EXPECT_TRUE(fs::path(f->content.name()).is_absolute());
  EXPECT_EQ(content(f), "the real one");
  build_and_verify(r.tree);
}

TEST_F(MtreeTest, OwnerNamesAreLookedUpOnlyWithoutNumbers) {
  stage("f", "");
  auto r = scan("#mtree\n"
                "./byname type=file contents=f uname=root gname=root\n"
                "./bynumber type=file contents=f uid=7 gid=8 uname=root gname=root\n");
  EXPECT_EQ(find(r.tree, "byname")->uid, 0u);
  EXPECT_EQ(find(r.tree, "bynumber")->uid, 7u);
  EXPECT_EQ(find(r.tree, "bynumber")->gid, 8u);
  EXPECT_NE(error_of("#mtree\n./f type=file contents=f uname=no-such-user-here\n").find("'./f': unknown user"),
            std::string::npos);
}

TEST_F(MtreeTest, OwnerOverridesAndExclusions) {
  stage("f", "f");
  writer::SourceOptions o;
  o.force_uid = 42;
  o.all_root = true;
  o.exclude_paths = {"skip"};
  o.exclude_regexes = {"\\.tmp$"};
  auto r = scan("#mtree\n./f type=file uid=9 gid=9\n./skip type=dir\n./skip/x type=file contents=missing\n"
                "./y.tmp type=file contents=missing\n",
                o);
  EXPECT_EQ(find(r.tree, "f")->uid, 42u);
  EXPECT_EQ(find(r.tree, "f")->gid, 0u);
  EXPECT_EQ(find(r.tree, "skip"), nullptr);
  EXPECT_EQ(find(r.tree, "y.tmp"), nullptr);
}

TEST_F(MtreeTest, MissingContentsCanBeSkippedWhenAsked) {
  writer::SourceOptions o;
  o.ignore_unreadable = true;
  std::string warned;
  auto r = writer::scan_mtree(manifest("#mtree\n./gone type=file\n./d type=dir\n"), (dir_ / "stage").string(), o,
                              [&](const std::string& m) { warned = m; });
  EXPECT_EQ(r.skipped, 1u);
  EXPECT_EQ(find(r.tree, "gone"), nullptr);
  EXPECT_NE(warned.find("'./gone'"), std::string::npos);
}

TEST_F(MtreeTest, ErrorsAreOneLineNamingTheEntryOrLine) {
  stage("f", "12345");
  struct Case {
    std::string text, want;
  };
  const Case cases[] = {
      {"#mtree\n./ok type=dir\n/bogus x\n", "line 3: cannot parse it"},
      {"./ok type=dir\n./x type=dir \\\n  \\\n  colour=red\n", "'./x': Unrecognized key colour=red"},
      {"#mtree\n./x type=dir mode=u+rwx\n", "line 2: 'mode=u+rwx': not an octal mode"},
      {"#mtree\n./x type=dir uid=4294967296\n", "line 2: 'uid=4294967296': not a number"},
      {"#mtree\n./x type=door\n", "'./x': Unrecognized file type \"door\""},
      {"#mtree\n./missing type=file\n", "'./missing': cannot open its contents "},
      {"#mtree\n./f type=file size=4\n", "'./f': size=4 but its contents "},
      {"#mtree\n./a/../../evil type=dir\n", "'./a/../../evil': '..' in the name"},
      {"#mtree\n/etc/passwd type=file\n", "line 2: cannot parse it"},  // '/' starts a command
      {"#mtree\n./x type=dir\n./x/../y type=dir\n", "'./x/../y': '..' in the name"},
      {"#mtree\n./l type=link\n", "'./l': symlink without a target"},
      {"#mtree\n./c type=char device=native,4096,1\n", "'./c': device number 4096,1 does not fit"},
      {"#mtree\n. type=file\n", "'.': the root must be a directory"},
      // (Full-path lines for one name are one entry; classic ones replace.)
      {"#mtree\nf type=dir\nx type=dir\n..\n..\nf type=fifo\n", "'f': replaces a directory that has entries"},
      {"#mtree\n./s type=file contents=.\n", "is not a regular file"},
      {std::string("#mtree\n./x type=dir\0\n", 21), "line 2: a NUL byte"},
  };
  for (auto& c : cases) {
    std::string e = error_of(c.text);
    EXPECT_NE(e.find(c.want), std::string::npos) << "manifest:\n" << c.text << "\nerror: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  // A line cannot start with '/' (a command), but an escaped one makes an absolute name.
  EXPECT_NE(error_of("#mtree\n\\057etc/passwd type=dir\n").find("'/etc/passwd': absolute name"), std::string::npos);
  EXPECT_NE(error_of("#mtree\n./f type=file\n", (dir_ / "nowhere").string()).find("No such file"), std::string::npos);
  try {
    writer::scan_mtree((dir_ / "no-such.mtree").string(), "", {}, nullptr);
    ADD_FAILURE() << "no error for a missing manifest";
  } catch (const writer::BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such.mtree"), std::string::npos);
  }
}

}  // namespace
