// The public C++ API, linked against liberofs-kit.so only (no internal headers).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "erofs-kit/erofs.hpp"

namespace fs = std::filesystem;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "erofs-kit-lib.XXXXXX").string();
    path_ = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

std::string text(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  static const char* words[] = {"erofs ", "image ", "block ", "cluster ", "kernel ", "mount ", "\n"};
  std::string s;
  while (s.size() < n) s += words[rng() % 7];
  s.resize(n);
  return s;
}

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = char(rng());
  return s;
}

// A small source tree: text, random data, an empty file, a nested directory, a symlink.
void make_tree(const fs::path& root, unsigned seed) {
  write_file(root / "a.txt", text(100000 + seed, seed));
  write_file(root / "dir/b.bin", random_bytes(70000, seed + 1));
  write_file(root / "dir/sub/c.txt", text(5000, seed + 2));
  write_file(root / "empty", "");
  fs::create_symlink("dir/sub/c.txt", root / "link");
}

erofs::BuildSettings compressed(const std::string& z, const std::string& e = "", uint32_t pcluster = 0) {
  erofs::BuildSettings s;
  s.compression = z;
  s.extended = e;
  s.pcluster_bytes = pcluster;
  return s;
}

// Every regular file of `root` reads back the same from the image.
void expect_same_files(const erofs::Image& image, const fs::path& root) {
  for (auto& e : fs::recursive_directory_iterator(root)) {
    auto rel = e.path().lexically_relative(root).string();
    auto st = image.stat(rel);
    ASSERT_TRUE(st) << rel << ": " << st.error().message;
    if (e.is_symlink()) {
      auto target = image.readlink(rel);
      ASSERT_TRUE(target) << target.error().message;
      EXPECT_EQ(target.value(), fs::read_symlink(e.path()).string());
    } else if (e.is_regular_file()) {
      std::ifstream in(e.path(), std::ios::binary);
      std::string want((std::istreambuf_iterator<char>(in)), {});
      auto got = image.read_file(rel);
      ASSERT_TRUE(got) << got.error().message;
      EXPECT_EQ(got.value(), want) << rel;
    }
  }
}

TEST(LibraryCpp, EntriesAddedFromCodeReadBack) {
  TempDir tmp;
  write_file(tmp / "outside.txt", text(300000, 7));
  erofs::BuildSettings settings;
  settings.compression = "lz4hc,9";
  settings.pcluster_bytes = 16384;
  settings.extended = "ztailpacking";
  erofs::ImageBuilder b(settings);
  erofs::EntryMeta dir{0750, 1000, 1000, 1700000000, 5, {}};
  ASSERT_TRUE(b.set_root({0755, 0, 0, 1600000000, 0, {}}));
  ASSERT_TRUE(b.add_directory("/etc", dir));
  ASSERT_TRUE(b.add_file("etc/hosts", {0644, 1, 2, 1700000001, 123456789, {{"user.origin", "code"}}}, "127.0.0.1 localhost\n"));
  ASSERT_TRUE(b.add_file_from("/big.txt", {0600, 0, 0, 0, 0, {}}, (tmp / "outside.txt").string()));
  ASSERT_TRUE(b.add_symlink("etc/link", {0777, 0, 0, 0, 0, {}}, "hosts"));
  ASSERT_TRUE(b.add_special("fifo", {0600, 0, 0, 0, 0, {}}, erofs::FileType::Fifo));
  ASSERT_TRUE(b.add_special("null", {0666, 0, 0, 0, 0, {}}, erofs::FileType::CharDevice, 1, 3));
  ASSERT_TRUE(b.add_hard_link("hosts-again", "/etc/hosts"));
  ASSERT_TRUE(b.add_xattr("etc", {"trusted.note", "dir"}));
  auto summary = b.write((tmp / "img").string());
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary.value().regular_files, 2u);
  EXPECT_EQ(summary.value().hard_links, 1u);
  EXPECT_EQ(summary.value().image_bytes, fs::file_size(tmp / "img"));

  auto opened = erofs::Image::open((tmp / "img").string());
  ASSERT_TRUE(opened) << opened.error().message;
  const erofs::Image& image = opened.value();
  EXPECT_EQ(image.info().block_size, 4096u);
  auto root = image.stat("/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root.value().mtime, 1600000000);
  auto etc = image.stat("etc");
  ASSERT_TRUE(etc);
  EXPECT_EQ(etc.value().type, erofs::FileType::Directory);
  EXPECT_EQ(etc.value().mode & 07777, 0750u);
  EXPECT_EQ(etc.value().uid, 1000u);
  auto hosts = image.stat("/etc/hosts");
  ASSERT_TRUE(hosts);
  EXPECT_EQ(hosts.value().nlink, 2u);
  EXPECT_EQ(hosts.value().mtime_nsec, 123456789u);
  EXPECT_EQ(hosts.value().gid, 2u);
  EXPECT_EQ(image.stat("hosts-again").value().ino, hosts.value().ino);
  EXPECT_EQ(image.read_file("etc/hosts").value(), "127.0.0.1 localhost\n");
  EXPECT_EQ(image.read_file("big.txt").value(), text(300000, 7));
  EXPECT_EQ(image.readlink("etc/link").value(), "hosts");
  auto null = image.stat("null").value();
  EXPECT_EQ(null.type, erofs::FileType::CharDevice);
  EXPECT_EQ(null.rdev_major, 1u);
  EXPECT_EQ(null.rdev_minor, 3u);
  EXPECT_EQ(image.stat("fifo").value().type, erofs::FileType::Fifo);
  auto xattrs = image.xattrs("etc/hosts");
  ASSERT_TRUE(xattrs);
  ASSERT_EQ(xattrs.value().size(), 1u);
  EXPECT_EQ(xattrs.value()[0].name, "user.origin");
  EXPECT_EQ(xattrs.value()[0].value, "code");
  EXPECT_EQ(image.xattrs("etc").value().at(0).value, "dir");
  auto names = image.list("/");
  ASSERT_TRUE(names);
  std::vector<std::string> got;
  for (auto& e : names.value()) got.push_back(e.name);
  EXPECT_EQ(got, (std::vector<std::string>{"big.txt", "etc", "fifo", "hosts-again", "null"}));
  // Partial reads by inode number.
  char buf[10];
  auto n = image.read(image.stat("big.txt").value().ino, 299995, buf, sizeof buf);
  ASSERT_TRUE(n);
  EXPECT_EQ(n.value(), 5u);
  EXPECT_EQ(std::string(buf, 5), text(300000, 7).substr(299995));
  auto report = image.check(true);
  ASSERT_TRUE(report);
  EXPECT_TRUE(report.value().problems.empty()) << report.value().problems.front();
  EXPECT_EQ(report.value().files, 2u);
}

TEST(LibraryCpp, TwoImagesBuiltAtOnceInOneProcess) {
  TempDir tmp;
  make_tree(tmp / "src1", 1);
  make_tree(tmp / "src2", 2);
  std::atomic<int> final_reports{0};
  auto build = [&](const std::string& src, const std::string& img, const std::string& z, const std::string& e,
                   erofs::Result<erofs::BuildSummary>* out) {
    erofs::BuildSettings s;
    s.compression = z;
    s.extended = e;
    s.pcluster_bytes = 65536;
    s.workers = 2;
    s.progress_interval_ms = 1;
    erofs::Progress last;
    s.on_progress = [&](const erofs::Progress& p) {
      if (p.scanned && p.files == p.total_files && p.bytes_in == p.total_bytes) ++final_reports;
      last = p;
    };
    *out = erofs::ImageBuilder::from_directory(src, img, s);
    // With fragments, the last report has the packed inode compressed whole; without, no such phase.
    if (e.find("fragments") != std::string::npos) {
      EXPECT_GT(last.packed_bytes, 0u);
      EXPECT_EQ(last.packed_done, last.packed_bytes);
    } else {
      EXPECT_EQ(last.packed_bytes, 0u);
    }
  };
  erofs::Result<erofs::BuildSummary> r1{erofs::Error{}}, r2{erofs::Error{}};
  std::thread t1(build, (tmp / "src1").string(), (tmp / "one").string(), "lz4hc", "dedupe,fragments", &r1);
  std::thread t2(build, (tmp / "src2").string(), (tmp / "two").string(), "lzma", "ztailpacking", &r2);
  t1.join();
  t2.join();
  ASSERT_TRUE(r1) << r1.error().message;
  ASSERT_TRUE(r2) << r2.error().message;
  EXPECT_GE(final_reports.load(), 2);
  auto one = erofs::Image::open((tmp / "one").string());
  auto two = erofs::Image::open((tmp / "two").string());
  ASSERT_TRUE(one && two);
  expect_same_files(one.value(), tmp / "src1");
  expect_same_files(two.value(), tmp / "src2");
  EXPECT_NE(one.value().read_file("a.txt").value(), two.value().read_file("a.txt").value());
  // The same settings give the same bytes whichever thread built them.
  erofs::Result<erofs::BuildSummary> r3{erofs::Error{}};
  build((tmp / "src1").string(), (tmp / "three").string(), "lz4hc", "dedupe,fragments", &r3);
  ASSERT_TRUE(r3);
  std::ifstream a(tmp / "one", std::ios::binary), b(tmp / "three", std::ios::binary);
  EXPECT_TRUE(std::equal(std::istreambuf_iterator<char>(a), {}, std::istreambuf_iterator<char>(b)));
}

TEST(LibraryCpp, OneImageReadFromManyThreads) {
  TempDir tmp;
  make_tree(tmp / "src", 3);
  ASSERT_TRUE(erofs::ImageBuilder::from_directory((tmp / "src").string(), (tmp / "img").string(),
                                                  compressed("lz4", "", 16384)));
  auto image = erofs::Image::open((tmp / "img").string());
  ASSERT_TRUE(image);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i)
        if (image.value().read_file("a.txt").value() != text(100003, 3)) ++mismatches;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(LibraryCpp, TarStreamsAndDirectoriesGiveTheSameTree) {
  TempDir tmp;
  make_tree(tmp / "src", 4);
  std::string cmd = "tar -C " + (tmp / "src").string() + " -czf " + (tmp / "src.tgz").string() + " .";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  erofs::BuildSettings s;
  s.compression = "zstd";
  auto r = erofs::ImageBuilder::from_tar((tmp / "src.tgz").string(), (tmp / "img").string(), s);
  ASSERT_TRUE(r) << r.error().message;
  auto image = erofs::Image::open((tmp / "img").string());
  ASSERT_TRUE(image);
  expect_same_files(image.value(), tmp / "src");
  ASSERT_TRUE(image.value().extract((tmp / "out").string(), "/dir", false));
  std::ifstream in(tmp / "out/sub/c.txt");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), text(5000, 6));
}

TEST(LibraryCpp, ErrorsComeBackAsValuesAndNothingIsPrinted) {
  TempDir tmp;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();

  auto missing = erofs::Image::open((tmp / "nope").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
  EXPECT_NE(missing.error().message.find("nope"), std::string::npos);

  write_file(tmp / "garbage", std::string(8192, 'x'));
  auto garbage = erofs::Image::open((tmp / "garbage").string());
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code, erofs::ErrorCode::Corrupt);

  auto no_source = erofs::ImageBuilder::from_directory((tmp / "none").string(), (tmp / "img").string());
  ASSERT_FALSE(no_source);
  EXPECT_EQ(no_source.error().code, erofs::ErrorCode::Build);
  EXPECT_NE(no_source.error().message.find("none"), std::string::npos);
  EXPECT_FALSE(fs::exists(tmp / "img"));

  make_tree(tmp / "src", 5);
  auto bad_alg = erofs::ImageBuilder::from_directory((tmp / "src").string(), (tmp / "img").string(),
                                                     compressed("lz5"));
  ASSERT_FALSE(bad_alg);
  EXPECT_EQ(bad_alg.error().code, erofs::ErrorCode::InvalidArgument);
  auto bad_e = erofs::ImageBuilder::from_directory((tmp / "src").string(), (tmp / "img").string(),
                                                   compressed("lz4", "turbo"));
  ASSERT_FALSE(bad_e);
  EXPECT_NE(bad_e.error().message.find("turbo"), std::string::npos);
  EXPECT_FALSE(fs::exists(tmp / "img"));

  erofs::ImageBuilder b;
  auto orphan = b.add_file("no/parent", {}, "x");
  ASSERT_FALSE(orphan);
  EXPECT_EQ(orphan.error().code, erofs::ErrorCode::NotFound);
  ASSERT_TRUE(b.add_file("x", {}, "x"));
  EXPECT_EQ(b.add_file("/x", {}, "y").error().code, erofs::ErrorCode::InvalidArgument);
  EXPECT_FALSE(b.add_directory("a/../b", {}));
  erofs::EntryMeta with_type;
  with_type.mode = 0100644;
  EXPECT_FALSE(b.add_file("y", with_type, ""));
  EXPECT_FALSE(b.add_hard_link("z", "/"));
  EXPECT_EQ(b.add_special("dev", {}, erofs::FileType::CharDevice, 4096, 0).error().code,
            erofs::ErrorCode::InvalidArgument);
  EXPECT_FALSE(b.add_special("reg", {}, erofs::FileType::Regular));
  auto unwritable = b.write((tmp / "no-such-dir/img").string());
  ASSERT_FALSE(unwritable);
  EXPECT_NE(unwritable.error().message.find("no-such-dir"), std::string::npos);

  ASSERT_TRUE(b.write((tmp / "img").string()));
  auto image = erofs::Image::open((tmp / "img").string());
  ASSERT_TRUE(image);
  EXPECT_EQ(image.value().stat("missing").error().code, erofs::ErrorCode::NotFound);
  EXPECT_FALSE(image.value().read_file("/"));
  EXPECT_FALSE(image.value().readlink("x"));
  EXPECT_FALSE(image.value().list("x"));
  EXPECT_FALSE(image.value().stat(uint64_t(1) << 40));

  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
