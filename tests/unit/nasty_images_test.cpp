// The hostile images of tests/nasty, generated in-process: the reader walks each one completely
// (every inode, directory, lookup, xattr, symlink and byte of data) and may raise only its own
// errors; fsck reports every corrupt image and names the check that caught it; extraction never
// creates or changes anything outside its destination, also when the destination holds symlinks.
// The sanitizer build of the unit tests (scripts/test) runs all of this under ASan and UBSan.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reader/extract.h"
#include "reader/fsck.h"
#include "reader/image.h"
#include "tests/nasty/nasty.h"

namespace erofs::test {
namespace {

namespace fs = std::filesystem;
using nasty::Expect;
using nasty::NastyImage;

// What fsck must say about each corrupt image (a regular expression searched in its problems):
// the check meant to stop that class, not just any complaint.
const std::map<std::string, std::string>& fsck_expectations() {
  static const std::map<std::string, std::string> m = {
      {"name_slash", "containing '/' or NUL"},
      {"name_dotdot_regular", "'\\.\\.' points to inode"},
      {"name_dot_duplicate", "not in ascending order"},
      {"name_nul", "containing '/' or NUL"},
      {"name_empty", "bad nameoff"},
      {"name_too_long", "name of 300 bytes"},
      {"dirent_duplicate", "not in ascending order"},
      {"dirent_unsorted", "not in ascending order"},
      {"dirent_nameoff_past_block", "bad nameoff"},
      {"dirent_first_nameoff", "bad first nameoff 13"},
      {"dirent_file_type", "file type 127"},
      {"dirent_type_mismatch", "directory entry type 2 does not match"},
      {"dot_elsewhere", "'\\.' points to"},
      {"dotdot_elsewhere", "'\\.\\.' points to inode"},
      {"loop_ancestor", "directory loop"},
      {"loop_self", "directory loop"},
      {"bomb_dir_dag", "linked from more than one place"},
      {"nid_outside", "outside the image"},
      {"nid_past_end", "outside the image"},
      {"nid_metabox_bit", "metabox"},
      {"nid_root_outside", "outside the image"},
      {"nid_root_not_dir", "root inode .* is not a directory"},
      {"size_negative", "negative size"},
      {"size_2p63", "data blocks 1\\+2251799813685247 are outside the image"},
      {"nid_overflow", "offset arithmetic overflows"},
      {"mtime_overflow", "mtime overflows"},
      {"size_past_image", "outside the image"},
      {"blkaddr_near_2p48", "outside the image"},
      {"dir_size_huge", "directory of 1099511627776 bytes"},
      {"inline_file_cross_block", "crosses a block boundary"},
      {"inline_dir_cross_block", "crosses a block boundary"},
      {"xattr_shared_count", "shared xattr ids do not fit"},
      {"xattr_name_len", "runs past the xattr area"},
      {"xattr_value_size", "runs past the xattr area"},
      {"xattr_icount", "xattr area of .* runs past the image"},
      {"xattr_shared_id", "shared xattr .* outside the image"},
      {"xattr_long_prefix", "long prefix 3 of 0"},
      {"symlink_longer_than_block", "symlink of 8192 bytes"},
      {"symlink_size_4096", "symlink of 4096 bytes"},
      {"symlink_empty", "symlink of 0 bytes"},
      {"symlink_nul", "symlink target contains NUL"},
      {"extract_symlink_then_file", "not in ascending order"},
      {"extract_symlink_then_dir", "not in ascending order"},
      {"zfull_cblkcnt_zero", "block count of 0"},
      {"zfull_cblkcnt_past_limit", "exceeds 1 MiB"},
      {"zfull_cblkcnt_past_image", "beyond the end of the image"},
      {"zfull_lookback_zero", "bogus lookback distance 0"},
      {"zfull_lookback_before_start", "bogus lookback distance 2047"},
      {"zfull_extent_past_limit", "past 12 MiB"},
      {"zbomb_lcluster_bits", "past 12 MiB"},
      {"zbomb_size", "indexes run past the image"},
      {"zheader_algorithm_unknown", "unknown compression algorithm 15"},
      {"zheader_algorithm_absent", "algorithm 1, which the superblock does not list"},
      {"zcompact_lookback_zero", "lookback distance 0"},
      {"zcompact_cblkcnt_past_limit", "exceeds 1 MiB"},
      {"zinline_cross_block", "inline pcluster of 4096 bytes crosses a block boundary"},
  };
  return m;
}

class NastyImages : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(::testing::TempDir() + "/nasty-" + std::to_string(::getpid()));
    fs::remove_all(*dir_);
    images_ = new std::vector<NastyImage>(nasty::generate(*dir_ + "/base"));
    for (auto& img : *images_) {
      const std::string path = *dir_ + "/" + img.name + ".img";
      std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(img.bytes.data()), std::streamsize(img.bytes.size()));
      paths_[img.name] = path;
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete images_;
    delete dir_;
  }
  static const std::vector<NastyImage>& images() { return *images_; }
  static const std::string& path(const NastyImage& img) { return paths_.at(img.name); }
  static const std::string& dir() { return *dir_; }

 private:
  static inline std::string* dir_ = nullptr;
  static inline std::vector<NastyImage>* images_ = nullptr;
  static inline std::map<std::string, std::string> paths_;
};

// --- the walk -------------------------------------------------------------------------------------

struct Walk {
  const reader::Image& image;
  std::vector<std::string> errors;  // reader errors met on the way (the walk goes on)
  std::set<uint64_t> dirs_seen;
  uint64_t inodes = 0, bytes = 0;

  // Runs `fn`; a reader error is noted, anything else fails the test.
  template <class F>
  bool guard(const std::string& where, F&& fn) {
    try {
      fn();
      return true;
    } catch (const reader::CorruptError& e) {
      errors.push_back(where + ": " + e.what());
    } catch (const reader::UnsupportedError& e) {
      errors.push_back(where + ": " + e.what());
    } catch (const reader::IoError& e) {
      errors.push_back(where + ": " + e.what());
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": an exception that is not a reader error: " << e.what();
    }
    return false;
  }

  void data(const reader::Inode& ino, const std::string& path) {
    std::vector<uint8_t> buf(256 * 1024);
    std::vector<reader::Extent> extents;
    if (!guard(path + " (extents)", [&] { extents = image.extents(ino); })) {
      // Still read what the mapping would not tell: the first bytes.
      guard(path + " (read)", [&] { image.read(ino, 0, buf); });
      return;
    }
    uint64_t expected = 0;
    for (auto& e : extents) {
      EXPECT_EQ(e.offset, expected) << path << ": extents leave a gap";
      expected = e.offset + e.length;
      // Holes read as zeros; read a little of each (a hostile size can declare exabytes of them).
      const uint64_t end = e.kind == reader::Extent::Kind::Hole ? e.offset + std::min<uint64_t>(e.length, 8192) : e.offset + e.length;
      guard(path + " (read)", [&] {
        for (uint64_t off = e.offset; off < end;) {
          const size_t want = size_t(std::min<uint64_t>(buf.size(), end - off));
          const size_t n = image.read(ino, off, std::span(buf).first(want));
          ASSERT_EQ(n, want) << path << ": short read at " << off;
          if (e.kind == reader::Extent::Kind::Hole) {
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(buf[i], 0) << path << ": a hole does not read as zeros";
          }
          off += n;
          bytes += n;
        }
      });
      guard(path + " (stored_run)", [&] { image.stored_run(ino, e.offset); });
    }
    if (!extents.empty()) {
      EXPECT_EQ(expected, ino.size) << path << ": extents do not cover the file";
    }
  }

  void visit(uint64_t nid, const std::string& path, int depth) {
    reader::Inode ino;
    if (!guard(path + " (inode)", [&] { ino = image.inode(nid); })) return;
    ++inodes;
    guard(path + " (xattrs)", [&] { image.xattrs(ino); });
    if (ino.is_symlink()) {
      guard(path + " (readlink)", [&] { image.readlink(ino); });
      guard(path + " (resolve through the link)", [&] {
        try {
          image.resolve(path, true);
        } catch (const reader::IoError&) {  // a dangling link, or a loop of links: not damage
        }
      });
      return;
    }
    if (ino.is_reg()) return data(ino, path);
    if (!ino.is_dir()) return;
    // A directory reached again (a loop, or a directory under two names) is not walked twice.
    if (!dirs_seen.insert(nid).second || depth > 64) return;
    std::vector<reader::DirEntry> entries;
    guard(path + " (read_dir)", [&] {
      image.read_dir(ino, [&](const reader::DirEntry& e) {
        entries.push_back(e);
        return true;
      });
    });
    for (auto& e : entries) {
      guard(path + " (lookup " + e.name + ")", [&] {
        const auto found = image.lookup(ino, e.name);
        EXPECT_TRUE(found.has_value()) << path << ": lookup does not find " << e.name;
      });
      if (e.name == "." || e.name == "..") continue;
      const std::string child = path == "/" ? "/" + e.name : path + "/" + e.name;
      guard(child + " (resolve)", [&] { image.resolve(child); });
      visit(e.nid, child, depth + 1);
    }
  }
};

TEST_F(NastyImages, TheGeneratorMakesEveryClass) {
  std::set<std::string> classes;
  for (auto& img : images()) {
    classes.insert(img.bug_class);
    EXPECT_GT(img.bytes.size(), 4096u) << img.name;
  }
  for (const char* c : {"base", "names", "dirents", "dots", "loops", "nids", "sizes", "inline", "compressed", "bomb", "xattrs",
                        "symlinks", "extract"})
    EXPECT_TRUE(classes.count(c)) << "no image of class " << c;
  // Every corrupt image has its expected fsck message, and every message belongs to an image.
  std::set<std::string> corrupt;
  for (auto& img : images())
    if (img.expect == Expect::Corrupt) corrupt.insert(img.name);
  for (auto& name : corrupt) EXPECT_TRUE(fsck_expectations().count(name)) << name << " has no fsck expectation";
  for (auto& [name, re] : fsck_expectations()) EXPECT_TRUE(corrupt.count(name)) << name << " is not generated";
  // The same bytes twice: the corpus is reproducible.
  const auto again = nasty::generate(dir() + "/again");
  ASSERT_EQ(again.size(), images().size());
  for (size_t i = 0; i < again.size(); ++i) EXPECT_TRUE(again[i].bytes == images()[i].bytes) << again[i].name;
  fs::remove_all(dir() + "/again");
}

TEST_F(NastyImages, TheReaderRaisesOnlyItsOwnErrors) {
  for (auto& img : images()) {
    SCOPED_TRACE(img.name);
    std::unique_ptr<reader::Image> image;
    try {
      image = reader::Image::open(path(img));
    } catch (const reader::CorruptError&) {
    } catch (const reader::UnsupportedError&) {
    } catch (const reader::IoError&) {
    }
    if (!image) {
      EXPECT_EQ(img.expect, Expect::Corrupt) << "a valid image does not open";
      continue;
    }
    Walk w{*image, {}, {}};
    w.visit(image->root_nid(), "/", 0);
    if (img.expect == Expect::Valid) {
      EXPECT_TRUE(w.errors.empty()) << "a valid image fails to read: " << w.errors.front();
      EXPECT_GT(w.inodes, 3u);
    }
  }
}

TEST_F(NastyImages, FsckReportsEveryCorruptImageWithTheRightCheck) {
  for (auto& img : images()) {
    SCOPED_TRACE(img.name);
    const auto start = std::chrono::steady_clock::now();
    reader::FsckReport report;
    try {
      report = reader::fsck_image(path(img), {});
    } catch (const reader::UnsupportedError& e) {
      report.problems.push_back(e.what());  // cmd_fsck prints these as its one line too
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 30.0) << "fsck took too long";
    for (auto& p : report.problems) EXPECT_EQ(p.find('\n'), std::string::npos) << "a problem of several lines: " << p;
    if (img.expect == Expect::Valid) {
      EXPECT_TRUE(report.clean()) << report.problems.front();
      continue;
    }
    ASSERT_FALSE(report.clean()) << "fsck calls a corrupt image clean";
    const auto it = fsck_expectations().find(img.name);
    if (it == fsck_expectations().end()) continue;  // reported by TheGeneratorMakesEveryClass
    const std::regex re(it->second);
    bool found = false;
    for (auto& p : report.problems) found |= std::regex_search(p, re);
    std::string all;
    for (auto& p : report.problems) all += "\n  " + p;
    EXPECT_TRUE(found) << "no problem matches /" << it->second << "/:" << all;
  }
}

// --- extraction -----------------------------------------------------------------------------------

// A scratch area: AREA/dest (the destination) and AREA/canary/victim; nothing else may appear.
struct Area {
  std::string root, dest, canary, victim, outside;
  explicit Area(const std::string& r) : root(r), dest(r + "/dest"), canary(r + "/" + nasty::kCanaryDir),
                                         victim(canary + "/" + nasty::kCanaryFile), outside(r + "/outside") {
    fs::remove_all(root);
    fs::create_directories(canary);
    fs::create_directories(outside);
    std::ofstream(victim) << "canary\n";
  }
  ~Area() { fs::remove_all(root); }

  // Everything outside `dest`, as "path type size" lines.
  std::vector<std::string> outside_dest() const {
    std::vector<std::string> out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
      if (it->path() == dest) {
        it.disable_recursion_pending();
        continue;
      }
      struct stat st {};
      ::lstat(it->path().c_str(), &st);
      out.push_back(it->path().string() + " " + std::to_string(st.st_mode) + " " + std::to_string(st.st_size));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string victim_content() const {
    std::ifstream in(victim);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

// Extracts; returns the error message, or "" on success.
std::string try_extract(const reader::Image& image, const std::string& dest, const reader::ExtractOptions& o = {}) {
  try {
    reader::extract_image(image, dest, o);
    return "";
  } catch (const reader::CorruptError& e) {
    return e.what();
  } catch (const reader::UnsupportedError& e) {
    return e.what();
  } catch (const reader::IoError& e) {
    return e.what();
  } catch (const std::runtime_error& e) {  // the extractor's own refusals and failed system calls
    return e.what();
  }
}

// Files written by this process are limited to `bytes` while it lives (writes past it fail with
// EFBIG instead of raising SIGXFSZ), so that an extraction that writes out a declared size cannot
// fill the disk.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(uint64_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit lim = old_;
    lim.rlim_cur = std::min<rlim_t>(bytes, old_.rlim_max);
    ::setrlimit(RLIMIT_FSIZE, &lim);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_;
};

TEST_F(NastyImages, ExtractionStaysInsideItsDestination) {
  const FileSizeLimit limit(64 << 20);  // the base images hold less; the sparse bomb declares 4 EiB
  for (auto& img : images()) {
    SCOPED_TRACE(img.name);
    Area area(dir() + "/x-" + img.name);
    const auto before = area.outside_dest();
    std::unique_ptr<reader::Image> image;
    try {
      image = reader::Image::open(path(img));
    } catch (const std::runtime_error&) {
      EXPECT_EQ(img.expect, Expect::Corrupt);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    const std::string error = try_extract(*image, area.dest);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 30.0) << "extraction took too long";
    EXPECT_EQ(area.outside_dest(), before) << "extraction changed something outside the destination";
    EXPECT_EQ(area.victim_content(), "canary\n");
    if (img.bug_class == "base") {
      EXPECT_EQ(error, "") << "a valid image does not extract";
    }
    if (img.bug_class == "extract" || img.name.rfind("loop_", 0) == 0 || img.name == "bomb_dir_dag") {
      EXPECT_NE(error, "") << "extraction of a hostile tree succeeded";
    }
    if (img.name == "bomb_sparse_exabytes") {
      // The hole is not written out: the file is sized (past the limit here, so that fails) but
      // holds no data blocks, whatever size it claims.
      struct stat st {};
      ASSERT_EQ(::stat((area.dest + "/empty").c_str(), &st), 0) << error;
      EXPECT_LT(uint64_t(st.st_blocks) * 512, 1u << 20) << error;
      if (error.empty()) {
        EXPECT_EQ(uint64_t(st.st_size), 1ull << 62);
      }
    }
  }
}

// Destinations that already hold symlinks leading out, or that are a symlink themselves.
TEST_F(NastyImages, ExtractionNeverFollowsSymlinksInTheDestination) {
  const NastyImage* base = nullptr;
  for (auto& img : images())
    if (img.name == "base_plain") base = &img;
  ASSERT_NE(base, nullptr);
  const auto image = reader::Image::open(path(*base));

  {
    SCOPED_TRACE("DEST/dir is a symlink to a directory outside");
    Area area(dir() + "/sym-dir");
    fs::create_directories(area.dest);
    fs::create_directory_symlink(area.outside, area.dest + "/dir");
    const auto before = area.outside_dest();
    EXPECT_NE(try_extract(*image, area.dest), "");
    EXPECT_EQ(area.outside_dest(), before);
    EXPECT_TRUE(fs::is_empty(area.outside));
  }
  {
    SCOPED_TRACE("DEST/big.bin is a symlink to a file outside");
    Area area(dir() + "/sym-file");
    fs::create_directories(area.dest);
    fs::create_symlink(area.victim, area.dest + "/big.bin");
    const auto before = area.outside_dest();
    EXPECT_NE(try_extract(*image, area.dest), "");
    EXPECT_EQ(area.outside_dest(), before);
    EXPECT_EQ(area.victim_content(), "canary\n");
  }
  {
    SCOPED_TRACE("DEST/x/u is a symlink to a directory outside, DEST/x a real directory");
    Area area(dir() + "/sym-deep");
    fs::create_directories(area.dest + "/x");
    fs::create_directory_symlink(area.outside, area.dest + "/x/u");
    const auto before = area.outside_dest();
    EXPECT_NE(try_extract(*image, area.dest), "");
    EXPECT_EQ(area.outside_dest(), before);
    EXPECT_TRUE(fs::is_empty(area.outside));
  }
  {
    SCOPED_TRACE("DEST itself is a symlink to a directory outside");
    Area area(dir() + "/sym-root");
    fs::create_directory_symlink(area.outside, area.dest);
    const auto before = area.outside_dest();
    const std::string error = try_extract(*image, area.dest);
    EXPECT_NE(error.find("symlinks are not followed"), std::string::npos) << error;
    EXPECT_EQ(area.outside_dest(), before);
    EXPECT_TRUE(fs::is_empty(area.outside));
  }
  {
    SCOPED_TRACE("a pristine destination: the symlinks of x/ are created, never followed");
    Area area(dir() + "/sym-none");
    const auto before = area.outside_dest();
    EXPECT_EQ(try_extract(*image, area.dest), "");
    EXPECT_EQ(area.outside_dest(), before);
    EXPECT_TRUE(fs::is_symlink(area.dest + "/x/s"));
    EXPECT_EQ(fs::read_symlink(area.dest + "/x/s").string(), std::string("../../") + nasty::kCanaryDir + "/" + nasty::kCanaryFile);
    EXPECT_EQ(area.victim_content(), "canary\n");
  }
}

}  // namespace
}  // namespace erofs::test
