// Directory lookup and path resolution on the reference images.
#include <cerrno>

#include <gtest/gtest.h>

#include "format/endian.h"
#include "format/superblock.h"
#include "reader/image.h"
#include "tests/unit/reader_test_support.h"

namespace erofs::test {
namespace {

using reader::Image;
using reader::IoError;

std::unique_ptr<Image> open_compat(const std::string& name) {
  return Image::open(compat_path("images/" + name));
}

int resolve_errno(const Image& image, std::string_view path, bool follow = false) {
  try {
    image.resolve(path, follow);
  } catch (const IoError& e) {
    return e.error;
  }
  return 0;
}

class Lookup : public ::testing::TestWithParam<std::string> {};

TEST_P(Lookup, FindsEveryEntryAndNothingElse) {
  const auto image = open_compat(GetParam());
  std::vector<uint64_t> dirs = {image->root_nid()};
  while (!dirs.empty()) {
    const auto dir = image->inode(dirs.back());
    dirs.pop_back();
    std::vector<reader::DirEntry> entries;
    image->read_dir(dir, [&](const reader::DirEntry& e) {
      entries.push_back(e);
      return true;
    });
    ASSERT_GE(entries.size(), 2u);
    for (const auto& e : entries) {
      const auto found = image->lookup(dir, e.name);
      ASSERT_TRUE(found) << e.name;
      EXPECT_EQ(found->nid, e.nid);
      EXPECT_EQ(found->file_type, e.file_type);
      // Names just around each entry must not be found.
      EXPECT_FALSE(image->lookup(dir, e.name + "\x01"));
      std::string before = e.name;
      before.back() = char(before.back() - 1);
      if (before != "." && std::none_of(entries.begin(), entries.end(), [&](auto& x) { return x.name == before; })) {
        EXPECT_FALSE(image->lookup(dir, before));
      }
      if (e.file_type == 2 && e.name != "." && e.name != "..") dirs.push_back(e.nid);
    }
    EXPECT_FALSE(image->lookup(dir, ""));
    EXPECT_FALSE(image->lookup(dir, std::string(256, 'a')));
    EXPECT_FALSE(image->lookup(dir, "\x01"));
    EXPECT_FALSE(image->lookup(dir, "\xff\xff"));
  }
}

TEST_P(Lookup, ResolvesPaths) {
  const auto image = open_compat(GetParam());
  const auto root = image->inode(image->root_nid());
  EXPECT_EQ(image->resolve("").nid, root.nid);
  EXPECT_EQ(image->resolve("/").nid, root.nid);
  EXPECT_EQ(image->resolve("..").nid, root.nid);
  EXPECT_EQ(image->resolve("/docs/deep/er/../../deep/./er//file").size, 5000u);
  const auto text = image->resolve("docs/text_100.txt");
  EXPECT_EQ(image->resolve("/bin/hardlink_to_text_100").nid, text.nid);

  const auto link = image->resolve("bin/symlink");
  EXPECT_TRUE(link.is_symlink());
  EXPECT_EQ(image->readlink(link), "../docs/text_100.txt");
  EXPECT_EQ(image->resolve("bin/symlink", true).nid, text.nid);
  EXPECT_EQ(image->resolve("docs/deep/").nid, image->resolve("docs/deep").nid);
  EXPECT_EQ(resolve_errno(*image, "bin/symlink/"), ENOTDIR);  // a trailing '/' follows the link to a file

  EXPECT_EQ(resolve_errno(*image, "nope"), ENOENT);
  EXPECT_EQ(resolve_errno(*image, "docs/nope/file"), ENOENT);
  EXPECT_EQ(resolve_errno(*image, "docs/text_100.txt/x"), ENOTDIR);
  EXPECT_EQ(resolve_errno(*image, "docs/text_100.txt/"), ENOTDIR);
  EXPECT_EQ(resolve_errno(*image, "bin/symlink/x"), ENOTDIR);
  EXPECT_EQ(resolve_errno(*image, std::string(300, 'a')), ENAMETOOLONG);
  EXPECT_THROW(image->readlink(text), IoError);
  EXPECT_THROW(image->read_dir(text, [](const reader::DirEntry&) { return true; }), IoError);
}

INSTANTIATE_TEST_SUITE_P(Uncompressed, Lookup, ::testing::Values("plain.img", "plain-b512.img", "chunked.img"),
                         image_test_name);

// A symlink whose target names itself must end in ELOOP, not recursion.
TEST(Resolve, SymlinkLoopIsEloop) {
  std::string bytes = compat_image_bytes("plain.img");
  uint64_t tail;
  {
    const auto image = open_compat("plain.img");
    const auto link = image->resolve("bin/symlink");
    ASSERT_EQ(link.layout(), format::Layout::FlatInline);
    tail = link.meta_end();
  }
  const std::string loop = "../bin/./././symlink";  // as long as the original target
  ASSERT_EQ(loop.size(), 20u);
  bytes.replace(tail, loop.size(), loop);
  const auto image = Image::open(write_scratch_image("symlink-loop.img", bytes), {.verify_checksum = false});
  EXPECT_EQ(image->readlink(image->resolve("bin/symlink")), loop);
  EXPECT_EQ(resolve_errno(*image, "bin/symlink", true), ELOOP);
  EXPECT_EQ(resolve_errno(*image, "bin/symlink/x"), ELOOP);
  EXPECT_EQ(resolve_errno(*image, "bin/symlink", false), 0);
}

}  // namespace
}  // namespace erofs::test
