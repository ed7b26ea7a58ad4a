#include "writer/source/file_content.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "writer/errors.h"

namespace fs = std::filesystem;

namespace erofs::writer {
namespace {

struct TempDir {
  fs::path dir = fs::current_path() / (std::string("content.") + testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  // rm walks with openat, so it removes trees deeper than a path can name.
  ~TempDir() { (void)std::system(("rm -rf '" + dir.string() + "'").c_str()); }
};

std::string read_all(ContentOpener& opener, const FileContent& c, uint64_t size) {
  std::string s(size, '\0');
  opener.open(c, size).read(0, {reinterpret_cast<uint8_t*>(s.data()), s.size()});
  return s;
}

// A file of a scanned directory is opened relative to its directory, so its path may be longer
// than any one system call accepts.
TEST(FileContent, DirectoryFilesOpenWhateverTheirPathLength) {
  TempDir t;
  std::shared_ptr<const SourceDir> dir = SourceDir::root(t.dir.string());
  const std::string name(200, 'd');
  for (int depth = 0; depth < 30; ++depth) dir = SourceDir::child(dir, name);  // 30 * 201 bytes: past PATH_MAX
  ASSERT_GT(dir->path().size(), size_t(PATH_MAX));
  // Create the file through a chain of openat calls, as no single path reaches it.
  const int dfd = ::open(t.dir.c_str(), O_RDONLY | O_DIRECTORY);
  int fd = dfd;
  for (int depth = 0; depth < 30; ++depth) {
    ASSERT_EQ(::mkdirat(fd, name.c_str(), 0755), 0) << depth;
    const int next = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd != dfd) ::close(fd);
    fd = next;
    ASSERT_GE(fd, 0);
  }
  const int file = ::openat(fd, "f", O_WRONLY | O_CREAT, 0644);
  ASSERT_EQ(::write(file, "deep", 4), 4);
  ::close(file);
  ::close(fd);
  ::close(dfd);

  ContentOpener opener;
  EXPECT_EQ(read_all(opener, FileContent::in_directory(dir, "f"), 4), "deep");
  // Again, through the directories the opener keeps open.
  EXPECT_EQ(read_all(opener, FileContent::in_directory(dir, "f"), 4), "deep");
}

TEST(FileContent, ReadsCheckTheSizeTheSourceGave) {
  TempDir t;
  const std::string path = (t.dir / "f").string();
  std::ofstream(path) << "0123456789";
  ContentOpener opener;
  const FileContent c = FileContent::at_path(path);
  EXPECT_EQ(read_all(opener, c, 10), "0123456789");
  try {
    read_all(opener, c, 9);
    ADD_FAILURE() << "a file longer than the scan said was read";
  } catch (const BuildError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": file grew while the image was being built");
  }
  try {
    read_all(opener, c, 11);
    ADD_FAILURE() << "a file shorter than the scan said was read";
  } catch (const BuildError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": file shrank while the image was being built");
  }
  try {
    read_all(opener, FileContent::at_path(path + ".missing"), 1);
    ADD_FAILURE() << "a missing file was opened";
  } catch (const BuildError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read " + path + ".missing: No such file or directory");
  }
}

TEST(FileContent, RegionsOfASharedFileAndMemory) {
  TempDir t;
  const std::string path = (t.dir / "shared").string();
  std::ofstream(path) << "headerPAYLOADtrailer";
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ContentOpener opener;
  // A region ends where the source says, whatever follows it in the shared file.
  EXPECT_EQ(read_all(opener, FileContent::in_shared_file(fd, 6, "entry"), 7), "PAYLOAD");
  ::close(fd);
  EXPECT_EQ(read_all(opener, FileContent::in_memory(std::make_shared<const std::string>("bytes"), "m"), 5), "bytes");
}

// Every range of `r`, of every length, reads as that range of `whole`.
void expect_every_range(const ContentReader& r, const std::string& whole) {
  for (size_t off = 0; off < whole.size(); ++off)
    for (size_t n = 0; off + n <= whole.size(); ++n) {
      std::string got(n, '\0');
      r.read(off, {reinterpret_cast<uint8_t*>(got.data()), n});
      ASSERT_EQ(got, whole.substr(off, n)) << off << "+" << n;
    }
}

// A concatenation reads its pieces one after the other, across their boundaries, and a piece
// that is not as long as it was said to be fails the read with its own name.
TEST(FileContent, ConcatenationReadsAcrossPieces) {
  TempDir t;
  const std::string path = (t.dir / "f").string(), shared = (t.dir / "shared").string();
  std::ofstream(path) << "0123456789";
  std::ofstream(shared) << "xxABCDEyy";
  const int fd = ::open(shared.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const FileContent all = FileContent::concatenation(
      {{FileContent::in_memory(std::make_shared<const std::string>("mem"), "m"), 3},
       {FileContent::at_path(path), 10},
       {FileContent::in_shared_file(fd, 2, "entry"), 5}},
      {{0, 0, 3}, {1, 0, 10}, {2, 0, 5}}, "all");
  const std::string whole = "mem0123456789ABCDE";
  ContentOpener opener;
  EXPECT_EQ(read_all(opener, all, whole.size()), whole);
  expect_every_range(opener.open(all, whole.size()), whole);
  EXPECT_THROW(opener.open(all, whole.size() + 1), BuildError);
  const FileContent wrong = FileContent::concatenation({{FileContent::at_path(path), 11}}, {{0, 0, 11}}, "all");
  try {
    read_all(opener, wrong, 11);
    ADD_FAILURE() << "a piece shorter than it was said to be was read";
  } catch (const BuildError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": file shrank while the image was being built");
  }
  ::close(fd);
}

// Slices of a few sources, in any order, read as one file; a slice past its source's end is
// refused when the concatenation is made.
TEST(FileContent, SlicesOfSourcesReadInTheirOrder) {
  TempDir t;
  const std::string path = (t.dir / "f").string();
  std::ofstream(path) << "0123456789";
  const std::vector<ContentPiece> sources = {
      {FileContent::in_memory(std::make_shared<const std::string>("abcdefgh"), "m"), 8},
      {FileContent::at_path(path), 10}};
  const FileContent all = FileContent::concatenation(sources, {{0, 5, 3}, {1, 0, 10}, {0, 0, 2}, {0, 2, 0}}, "all");
  const std::string whole = "fgh0123456789ab";
  ContentOpener opener;
  expect_every_range(opener.open(all, whole.size()), whole);
  EXPECT_THROW(FileContent::concatenation(sources, {{0, 6, 3}}, "all"), BuildError);
  EXPECT_THROW(FileContent::concatenation(sources, {{2, 0, 1}}, "all"), BuildError);
}

}  // namespace
}  // namespace erofs::writer
