// The C API, called as a C program would (through erofs-kit/erofs.h only).
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "erofs-kit/erofs.h"

namespace fs = std::filesystem;

namespace {

struct Dir {
  fs::path path;
  Dir() {
    std::string t = (fs::temp_directory_path() / "erofs-kit-c.XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~Dir() { fs::remove_all(path); }
  std::string operator/(const char* name) const { return (path / name).string(); }
};

int collect(void* ctx, const char* name, uint64_t, uint32_t type_mode) {
  static_cast<std::vector<std::string>*>(ctx)->push_back(std::string(name) + (S_ISDIR(type_mode) ? "/" : ""));
  return 0;
}

void count_progress(void* ctx, const erofs_progress* p) {
  if (p->scanned && p->files == p->total_files) ++*static_cast<int*>(ctx);
}

TEST(LibraryC, BuildReadAndCheck) {
  Dir tmp;
  erofs_error* err = nullptr;
  erofs_builder* b = erofs_builder_new(&err);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(erofs_builder_set(b, "z", "lzma", &err), 0);
  ASSERT_EQ(erofs_builder_set(b, "C", "65536", &err), 0);
  ASSERT_EQ(erofs_builder_set(b, "E", "ztailpacking", &err), 0);
  ASSERT_EQ(erofs_builder_set(b, "T", "1700000000", &err), 0);
  int finals = 0;
  erofs_builder_on_progress(b, count_progress, &finals, 10);
  std::string content(200000, 'a');
  for (size_t i = 0; i < content.size(); i += 7) content[i] = char('a' + i % 26);
  erofs_entry_meta meta = {0640, 10, 20, 0, 0};
  ASSERT_EQ(erofs_builder_add_directory(b, "/d", nullptr, &err), 0);
  ASSERT_EQ(erofs_builder_add_file(b, "/d/f", &meta, content.data(), content.size(), &err), 0);
  ASSERT_EQ(erofs_builder_add_symlink(b, "/l", nullptr, "d/f", &err), 0);
  ASSERT_EQ(erofs_builder_add_special(b, "/dev0", nullptr, S_IFBLK, 8, 1, &err), 0);
  ASSERT_EQ(erofs_builder_add_hard_link(b, "/d/g", "/d/f", &err), 0);
  ASSERT_EQ(erofs_builder_add_xattr(b, "/d/f", "user.k", "v\0w", 3, &err), 0);
  // Settings are fixed once entries exist.
  EXPECT_EQ(erofs_builder_set(b, "z", "lz4", &err), -1);
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(erofs_error_code(err), EROFS_ERR_INVALID_ARGUMENT);
  erofs_error_free(err);
  err = nullptr;
  erofs_build_summary summary;
  ASSERT_EQ(erofs_builder_write(b, (tmp / "img").c_str(), &summary, &err), 0) << erofs_error_message(err);
  EXPECT_EQ(summary.regular_files, 1u);
  EXPECT_EQ(summary.compressed_files, 1u);
  EXPECT_GE(finals, 1);
  erofs_builder_free(b);

  erofs_image* img = erofs_image_open((tmp / "img").c_str(), &err);
  ASSERT_NE(img, nullptr);
  EXPECT_EQ(erofs_image_block_size(img), 4096u);
  erofs_stat st;
  ASSERT_EQ(erofs_image_stat(img, "/d/g", &st, &err), 0);
  EXPECT_EQ(st.size, content.size());
  EXPECT_EQ(st.mode, uint32_t(S_IFREG | 0640));
  EXPECT_EQ(st.uid, 10u);
  EXPECT_EQ(st.nlink, 2u);
  EXPECT_EQ(st.mtime, 1700000000);
  std::string back(content.size(), '\0');
  size_t done = 0;
  ASSERT_EQ(erofs_image_read(img, st.ino, 0, back.data(), back.size(), &done, &err), 0);
  EXPECT_EQ(done, content.size());
  EXPECT_EQ(back, content);
  std::vector<std::string> names;
  ASSERT_EQ(erofs_image_list(img, "/", collect, &names, &err), 0);
  EXPECT_EQ(names, (std::vector<std::string>{"d/", "dev0", "l"}));
  char* target = nullptr;
  ASSERT_EQ(erofs_image_readlink(img, "l", &target, &err), 0);
  EXPECT_STREQ(target, "d/f");
  erofs_free(target);
  ASSERT_EQ(erofs_image_stat(img, "dev0", &st, &err), 0);
  EXPECT_TRUE(S_ISBLK(st.mode));
  EXPECT_EQ(st.rdev_major, 8u);
  size_t problems = 99;
  ASSERT_EQ(erofs_image_check(img, 1, &problems, nullptr, nullptr, &err), 0);
  EXPECT_EQ(problems, 0u);
  ASSERT_EQ(erofs_image_extract(img, (tmp / "out").c_str(), &err), 0) << erofs_error_message(err);
  std::ifstream in(tmp / "out/d/g", std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), content);
  EXPECT_EQ(erofs_image_stat(img, "/missing", &st, &err), -1);
  EXPECT_EQ(erofs_error_code(err), EROFS_ERR_NOT_FOUND);
  erofs_error_free(err);
  erofs_image_close(img);
}

TEST(LibraryC, WholeSourceBuildsAndErrors) {
  Dir tmp;
  fs::create_directories(tmp / "src/sub");
  std::ofstream(tmp / "src/sub/file") << "from the manifest root\n";
  std::ofstream(tmp / "manifest") << "#mtree\n"
                                     "./sub type=dir mode=0700 uid=5 gid=6 time=1234.500000000\n"
                                     "./sub/renamed type=file mode=0444 uid=7 gid=8 time=99 size=23 contents=src/sub/file\n";
  erofs_error* err = nullptr;
  erofs_builder* b = erofs_builder_new(nullptr);
  ASSERT_EQ(erofs_builder_set(b, "no-such-setting", "1", &err), -1);
  EXPECT_EQ(erofs_error_code(err), EROFS_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(erofs_error_message(err)).find("no-such-setting"), std::string::npos);
  erofs_error_free(err);
  err = nullptr;
  EXPECT_EQ(erofs_builder_set(b, "C", "lots", nullptr), -1);  // the error is optional

  ASSERT_EQ(erofs_build_mtree(b, (tmp / "manifest").c_str(), nullptr, (tmp / "m.img").c_str(), nullptr, &err), 0)
      << erofs_error_message(err);
  erofs_image* img = erofs_image_open((tmp / "m.img").c_str(), nullptr);
  ASSERT_NE(img, nullptr);
  erofs_stat st;
  ASSERT_EQ(erofs_image_stat(img, "sub/renamed", &st, nullptr), 0);
  EXPECT_EQ(st.mode, uint32_t(S_IFREG | 0444));
  EXPECT_EQ(st.uid, 7u);
  EXPECT_EQ(st.mtime, 99);
  ASSERT_EQ(erofs_image_stat(img, "sub", &st, nullptr), 0);
  EXPECT_EQ(st.mtime_nsec, 500000000u);
  erofs_image_close(img);

  ASSERT_EQ(erofs_build_directory(b, (tmp / "src").c_str(), (tmp / "d.img").c_str(), nullptr, &err), 0);
  EXPECT_EQ(erofs_build_directory(b, (tmp / "nothing").c_str(), (tmp / "e.img").c_str(), nullptr, &err), -1);
  EXPECT_EQ(erofs_error_code(err), EROFS_ERR_BUILD);
  erofs_error_free(err);
  err = nullptr;
  EXPECT_FALSE(fs::exists(tmp / "e.img"));
  std::ofstream(tmp / "bad.tar") << std::string(1024, 'x');
  EXPECT_EQ(erofs_build_tar(b, (tmp / "bad.tar").c_str(), (tmp / "t.img").c_str(), nullptr, &err), -1);
  EXPECT_EQ(erofs_error_code(err), EROFS_ERR_BUILD);
  erofs_error_free(err);
  EXPECT_FALSE(fs::exists(tmp / "t.img"));
  erofs_builder_free(b);

  err = nullptr;
  EXPECT_EQ(erofs_image_open((tmp / "manifest").c_str(), &err), nullptr);
  EXPECT_EQ(erofs_error_code(err), EROFS_ERR_CORRUPT);
  erofs_error_free(err);
}

// The dm-verity settings and what the summary says about the tree; a tree the summary describes
// is where it says (veritysetup's signature at the hash offset) and its root hash is in the file.
TEST(LibraryC, VerityTreeInTheSummary) {
  Dir tmp;
  fs::create_directories(tmp / "src");
  std::ofstream(tmp / "src/file") << std::string(100000, 'v');
  erofs_error* err = nullptr;
  erofs_builder* b = erofs_builder_new(nullptr);
  ASSERT_EQ(erofs_builder_set(b, "verity", "hash=sha512,data-block=1024", &err), 0);
  ASSERT_EQ(erofs_builder_set(b, "verity-salt", "a1b2", &err), 0);
  ASSERT_EQ(erofs_builder_set(b, "root-hash-file", (tmp / "img.roothash").c_str(), &err), 0);
  erofs_build_summary s;
  ASSERT_EQ(erofs_build_directory(b, (tmp / "src").c_str(), (tmp / "img").c_str(), &s, &err), 0)
      << erofs_error_message(err);
  EXPECT_EQ(s.verity, 1);
  EXPECT_EQ(std::string(s.verity_salt), "a1b2");
  EXPECT_EQ(std::string(s.verity_hash_algorithm), "sha512");
  EXPECT_EQ(std::string(s.verity_root_hash).size(), 128u);
  EXPECT_EQ(s.verity_data_block_size, 1024u);
  EXPECT_EQ(s.verity_hash_block_size, 4096u);
  EXPECT_EQ(s.verity_data_blocks * 1024, s.verity_hash_offset);  // 4096-byte aligned already
  EXPECT_EQ(s.verity_hash_offset + s.verity_tree_bytes, s.image_bytes);
  EXPECT_EQ(fs::file_size(tmp / "img"), s.image_bytes);
  std::ifstream image(tmp / "img", std::ios::binary), root(tmp / "img.roothash");
  std::string signature(8, '\0');
  image.seekg(std::streamoff(s.verity_hash_offset));
  image.read(signature.data(), 8);
  EXPECT_EQ(signature, std::string("verity\0\0", 8));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(root), {}), s.verity_root_hash);

  ASSERT_EQ(erofs_builder_set(b, "verity", "hash=md5", &err), 0);
  EXPECT_EQ(erofs_build_directory(b, (tmp / "src").c_str(), (tmp / "bad").c_str(), &s, &err), -1);
  EXPECT_EQ(erofs_error_code(err), EROFS_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(erofs_error_message(err)).find("md5"), std::string::npos);
  erofs_error_free(err);
  erofs_builder_free(b);

  // Without verity the fields are zero.
  b = erofs_builder_new(nullptr);
  ASSERT_EQ(erofs_build_directory(b, (tmp / "src").c_str(), (tmp / "plain").c_str(), &s, nullptr), 0);
  EXPECT_EQ(s.verity, 0);
  EXPECT_EQ(s.verity_root_hash[0], 0);
  erofs_builder_free(b);
}

}  // namespace
