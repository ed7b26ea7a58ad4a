// The directory scan reads every xattr whole: lists and values longer than its first guess, on
// files, directories and the root.
#include <sys/xattr.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "writer/source/scan_dir.h"

namespace erofs::test {
namespace {

namespace fs = std::filesystem;

const writer::TreeInode* child(const writer::TreeInode* dir, const std::string& name) {
  for (const auto& d : dir->children)
    if (d.name == name) return d.inode;
  return nullptr;
}

TEST(SourceDirXattrs, LongListsAndValuesAreReadWhole) {
  const fs::path root = fs::current_path() / "source_dir_xattrs";
  fs::remove_all(root);
  fs::create_directories(root / "dir");
  std::ofstream(root / "file") << "data";
  const std::string long_value(3000, 'v');
  writer::XattrList many;  // 40 names of ~60 bytes: a list of about 2.4 KiB
  for (int i = 0; i < 40; ++i) {
    std::string name = "user." + std::string(50, char('a' + i % 26)) + std::to_string(100 + i);
    many.emplace_back(name, "value" + std::to_string(i));
  }
  std::sort(many.begin(), many.end());
  auto set = [](const fs::path& p, const std::string& name, const std::string& value) {
    return ::setxattr(p.c_str(), name.c_str(), value.data(), value.size(), 0) == 0;
  };
  if (!set(root / "file", "user.long", long_value)) GTEST_SKIP() << "no user xattrs on " << root;
  for (const auto& [name, value] : many) ASSERT_TRUE(set(root / "dir", name, value));
  ASSERT_TRUE(set(root, "user.short", "s"));

  const auto scan = writer::scan_directory(root.string(), {}, nullptr);
  const writer::TreeInode* top = scan.tree.root;
  EXPECT_EQ(top->xattrs, (writer::XattrList{{"user.short", "s"}}));
  ASSERT_TRUE(child(top, "file"));
  EXPECT_EQ(child(top, "file")->xattrs, (writer::XattrList{{"user.long", long_value}}));
  ASSERT_TRUE(child(top, "dir"));
  EXPECT_EQ(child(top, "dir")->xattrs, many);
  fs::remove_all(root);
}

}  // namespace
}  // namespace erofs::test
