// The three ways to build (the erofs command, the C++ API, the C API) take the same settings and
// must give the same image, byte for byte: one tree, built through each of them, and through
// entries added in code with the same metadata, under every ownership option and with a
// dm-verity tree.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "erofs-kit/erofs.h"
#include "erofs-kit/erofs.hpp"

namespace fs = std::filesystem;

namespace {

struct Setting {
  std::string key, value;  // erofs_builder_set's key; "--KEY=VALUE" on the command line
};

struct Case {
  std::string name;
  std::vector<Setting> settings;
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FrontEnds : public testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED: giving the source files owners needs root";
    std::string t = (fs::temp_directory_path() / "erofs-kit-front-ends.XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
    src_ = dir_ / "src";
    fs::create_directories(src_ / "d");
    std::ofstream(src_ / "a") << "hello, image\n";
    ASSERT_EQ(::symlink("../a", (src_ / "d/b").c_str()), 0);
    ASSERT_EQ(::chmod((src_ / "a").c_str(), 0640), 0);
    ASSERT_EQ(::lchown((src_ / "a").c_str(), 1000, 2000), 0);
    ASSERT_EQ(::lchown((src_ / "d/b").c_str(), 3000, 4000), 0);
    ASSERT_EQ(::lchown((src_ / "d").c_str(), 5000, 6000), 0);
    ASSERT_EQ(::chmod((src_ / "d").c_str(), 0750), 0);
    ASSERT_EQ(::chmod(src_.c_str(), 0755), 0);
    ASSERT_EQ(::lchown(src_.c_str(), 0, 0), 0);
    for (auto [path, sec] : {std::pair{src_ / "a", 1600000000}, {src_ / "d/b", 1600000001}, {src_ / "d", 1600000002},
                             {src_, 1600000003}}) {
      struct timespec ts[2] = {{sec, 5}, {sec, 5}};
      ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), ts, AT_SYMLINK_NOFOLLOW), 0);
    }
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  fs::path command(const Case& c) {
    const fs::path img = dir_ / (c.name + ".cmd.img");
    std::string line = std::string(EROFS_BIN) + " mkfs -q";
    for (auto& s : c.settings) {
      const bool long_option = s.key.size() > 1;
      line += " '-" + std::string(long_option ? "-" : "") + s.key + (long_option && !s.value.empty() ? "=" : "") + s.value + "'";
    }
    line += " '" + img.string() + "' '" + src_.string() + "'";
    EXPECT_EQ(std::system(line.c_str()), 0) << line;
    return img;
  }

  static void apply(erofs::BuildSettings& b, const Setting& s) {
    if (s.key == "all-root") b.all_root = true;
    else if (s.key == "force-uid") b.force_uid = uint32_t(std::stoul(s.value));
    else if (s.key == "force-gid") b.force_gid = uint32_t(std::stoul(s.value));
    else if (s.key == "z") b.compression = s.value;
    else if (s.key == "C") b.pcluster_bytes = uint32_t(std::stoul(s.value));
    else if (s.key == "E") b.extended = s.value;
    else if (s.key == "T") b.timestamp = std::stoll(s.value);
    else if (s.key == "verity") b.verity = s.value;
    else if (s.key == "verity-salt") b.verity_salt = s.value;
    else ADD_FAILURE() << "no C++ field for " << s.key;
  }

  fs::path cpp_directory(const Case& c) {
    const fs::path img = dir_ / (c.name + ".cpp.img");
    erofs::BuildSettings b;
    for (auto& s : c.settings) apply(b, s);
    auto r = erofs::ImageBuilder::from_directory(src_.string(), img.string(), b);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return img;
  }

  fs::path cpp_entries(const Case& c) {
    const fs::path img = dir_ / (c.name + ".entries.img");
    erofs::BuildSettings b;
    for (auto& s : c.settings) apply(b, s);
    erofs::ImageBuilder builder(b);
    auto meta = [](uint32_t mode, uint32_t uid, uint32_t gid, int64_t sec) {
      erofs::EntryMeta m;
      m.mode = mode;
      m.uid = uid;
      m.gid = gid;
      m.mtime = sec;
      m.mtime_nsec = 5;
      return m;
    };
    EXPECT_TRUE(builder.set_root(meta(0755, 0, 0, 1600000003)).ok());
    EXPECT_TRUE(builder.add_file("a", meta(0640, 1000, 2000, 1600000000), "hello, image\n").ok());
    EXPECT_TRUE(builder.add_directory("d", meta(0750, 5000, 6000, 1600000002)).ok());
    EXPECT_TRUE(builder.add_symlink("d/b", meta(0777, 3000, 4000, 1600000001), "../a").ok());
    auto r = builder.write(img.string());
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return img;
  }

  fs::path c_directory(const Case& c) {
    const fs::path img = dir_ / (c.name + ".c.img");
    erofs_error* err = nullptr;
    erofs_builder* b = erofs_builder_new(&err);
    for (auto& s : c.settings)
      EXPECT_EQ(erofs_builder_set(b, s.key.c_str(), s.value.empty() ? "1" : s.value.c_str(), &err), 0) << s.key;
    EXPECT_EQ(erofs_build_directory(b, src_.c_str(), img.c_str(), nullptr, &err), 0)
        << (err ? erofs_error_message(err) : "");
    if (err) erofs_error_free(err);
    erofs_builder_free(b);
    return img;
  }

  fs::path dir_, src_;
};

TEST_F(FrontEnds, EveryFrontEndGivesTheSameImage) {
  const std::vector<Case> cases = {
      {"plain", {}},
      {"all-root", {{"all-root", ""}}},
      {"force-uid", {{"force-uid", "1234"}}},
      {"force-gid", {{"force-gid", "5678"}}},
      {"all-root-force-uid", {{"all-root", ""}, {"force-uid", "1234"}}},
      {"all-root-force-both", {{"all-root", ""}, {"force-uid", "1234"}, {"force-gid", "5678"}}},
      {"time-compressed", {{"T", "1700000000"}, {"z", "lz4hc"}, {"C", "16384"}, {"E", "ztailpacking"}}},
      {"verity", {{"verity", "hash=sha512,data-block=1024,hash-block=512"}}},
      {"verity-salt-compressed", {{"z", "lz4hc"}, {"verity-salt", "00ff"}, {"verity", "data-block=4096"}}},
  };
  for (const Case& c : cases) {
    const std::string want = read_bytes(command(c));
    ASSERT_FALSE(want.empty()) << c.name;
    EXPECT_EQ(read_bytes(cpp_directory(c)), want) << c.name << ": the C++ API's image differs from the command's";
    EXPECT_EQ(read_bytes(c_directory(c)), want) << c.name << ": the C API's image differs from the command's";
    EXPECT_EQ(read_bytes(cpp_entries(c)), want) << c.name << ": entries added in code differ from the directory";
  }
  // The overrides themselves: --force-uid wins over --all-root.
  auto img = erofs::Image::open((dir_ / "all-root-force-uid.cmd.img").string());
  ASSERT_TRUE(img.ok());
  auto st = img.value().stat("/a");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st.value().uid, 1234u);
  EXPECT_EQ(st.value().gid, 0u);
}

}  // namespace
