// The reader against the reference images of tests/data/compat: every image must give back exactly
// the source tree (types, modes, owners, sizes, link targets, contents, mtimes, xattrs, hard links).
#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "reader/image.h"
#include "tests/unit/reader_test_support.h"

namespace erofs::test {
namespace {

constexpr int64_t kTreeMtime = 1700000000;

class CompatImage : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<reader::Image> open() const { return reader::Image::open(compat_path("images/" + GetParam())); }
};

char type_letter(uint32_t mode) { return S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : S_ISREG(mode) ? 'f' : '?'; }

uint8_t dirent_type_of(uint32_t mode) { return S_ISDIR(mode) ? 2 : S_ISLNK(mode) ? 7 : S_ISREG(mode) ? 1 : 0; }

TEST_P(CompatImage, ReadsBackTheSourceTree) {
  const auto expected = load_expected_tree();
  ASSERT_EQ(expected.at("docs/text_4097.txt").xattrs.size(), 2u);  // the comparison below has teeth
  const auto image = open();
  const auto walked = walk_image(*image);

  for (const auto& [path, want] : expected) {
    SCOPED_TRACE("path '" + path + "'");
    auto it = walked.find(path);
    ASSERT_NE(it, walked.end()) << "missing from the image";
    const auto& got = it->second;
    const auto& ino = got.inode;
    EXPECT_EQ(type_letter(ino.mode), want.type);
    EXPECT_EQ(ino.mode & 07777, want.perm);
    EXPECT_EQ(ino.uid, want.uid);
    EXPECT_EQ(ino.gid, want.gid);
    EXPECT_EQ(got.dirent_type, dirent_type_of(ino.mode));
    EXPECT_EQ(ino.mtime, kTreeMtime);
    EXPECT_EQ(ino.mtime_nsec, 0u);
    if (want.type != 'd') {
      EXPECT_EQ(ino.size, want.size);
    }
    if (want.type == 'f') {
      EXPECT_EQ(got.sha256, want.sha256);
    }
    if (want.type == 'l') {
      EXPECT_EQ(got.target, want.target);
    }
    EXPECT_EQ(got.xattrs, want.xattrs);
  }
  for (const auto& [path, got] : walked) EXPECT_TRUE(expected.count(path)) << "unexpected entry '" << path << "'";

  const auto& link = walked.at("bin/hardlink_to_text_100").inode;
  const auto& text = walked.at("docs/text_100.txt").inode;
  EXPECT_EQ(link.nid, text.nid);
  EXPECT_EQ(link.nlink, 2u);
  for (const auto& [path, got] : walked) {
    if (!got.inode.is_dir()) continue;
    uint32_t subdirs = 0;
    for (const auto& [other, entry] : walked)
      if (entry.inode.is_dir() && !other.empty() && other.rfind(path.empty() ? "" : path + "/", 0) == 0 &&
          other.find('/', path.empty() ? 0 : path.size() + 1) == std::string::npos)
        ++subdirs;
    EXPECT_EQ(got.inode.nlink, 2 + subdirs) << "directory '" << path << "'";
  }
}

TEST_P(CompatImage, ReadsAtArbitraryOffsets) {
  const auto image = open();
  const auto file = image->resolve("docs/text_300001.txt");
  std::vector<uint8_t> whole(file.size);
  ASSERT_EQ(image->read(file, 0, whole), whole.size());
  // Unaligned pieces that straddle blocks and pclusters must equal the same bytes of the whole.
  for (uint64_t off : {0ull, 1ull, 4095ull, 4096ull, 65535ull, 65536ull, 131071ull, 200000ull, 299999ull}) {
    for (size_t len : {1ul, 7ul, 4096ul, 70000ul}) {
      std::vector<uint8_t> piece(len);
      const size_t n = image->read(file, off, piece);
      ASSERT_EQ(n, std::min<uint64_t>(len, file.size - off)) << off << "+" << len;
      EXPECT_TRUE(std::equal(piece.begin(), piece.begin() + n, whole.begin() + off)) << off << "+" << len;
    }
  }
  std::vector<uint8_t> past(10);
  EXPECT_EQ(image->read(file, file.size, past), 0u);
  EXPECT_EQ(image->read(file, file.size + 100, past), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllImages, CompatImage, ::testing::ValuesIn(compat_images()), image_test_name);

}  // namespace
}  // namespace erofs::test
