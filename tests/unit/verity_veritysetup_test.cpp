// veritysetup (cryptsetup-bin) as the oracle for the dm-verity layer: for block counts around
// each level boundary, block sizes from 512 to 4096 and both hash algorithms, `veritysetup
// format` with our salt, UUID and block count writes the same superblock and tree bytes and
// prints the same root hash; `veritysetup verify` accepts what we build, as a separate hash file,
// as a bare tree and appended to the data; and a flipped byte in the data, the tree or the
// superblock makes both veritysetup and our check fail.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/unit/reader_test_support.h"
#include "tests/unit/verity_test_support.h"
#include "verity/check.h"
#include "verity/derive.h"

using namespace erofs::verity;
using namespace erofs::test;

namespace {

struct Case {
  Algorithm algorithm;
  uint32_t data_block_size, hash_block_size;
  uint64_t data_blocks;
  size_t salt_size;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return fmt::format("{}_d{}_h{}_n{}", algorithm_name(c.algorithm), c.data_block_size, c.hash_block_size, c.data_blocks);
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  const std::pair<uint32_t, uint32_t> sizes[] = {{512, 512}, {1024, 1024}, {4096, 4096}, {4096, 512}, {512, 4096}};
  const std::pair<uint64_t, size_t> counts[] = {{1, 32}, {2, 0}, {127, 256}, {128, 1}, {129, 32}, {16385, 32}};
  for (Algorithm alg : {Algorithm::Sha256, Algorithm::Sha512})
    for (auto [data, hash] : sizes)
      for (auto [blocks, salt] : counts) out.push_back({alg, data, hash, blocks, salt});
  return out;
}

std::string bytes_text(std::span<const uint8_t> b) { return std::string(b.begin(), b.end()); }

// The parameters veritysetup needs when no superblock gives them.
std::string param_options(const Params& p, uint64_t data_blocks) {
  return fmt::format("--hash={} --data-block-size={} --hash-block-size={} --data-blocks={} --salt={}",
                     algorithm_name(p.algorithm), p.data_block_size, p.hash_block_size, data_blocks,
                     p.salt.empty() ? "-" : to_hex(p.salt));
}

// One case's data, its tree and the files the commands work on, removed at the end.
class VerityVeritysetup : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    veritysetup_ = veritysetup_command();
    if (veritysetup_.empty()) GTEST_SKIP() << "SKIPPED: veritysetup (cryptsetup-bin) is not installed";
    const Case& c = GetParam();
    params_ = {c.algorithm, c.data_block_size, c.hash_block_size, pseudo_random_bytes(c.salt_size, c.data_blocks)};
    data_ = pseudo_random_bytes(c.data_blocks * c.data_block_size, c.data_blocks * 31 + c.data_block_size);
    tree_ = tree_of(params_, data_, 2);
    uuid_ = derive_uuid(tree_.root_hash);
    // The tree appended at the first 4096-byte boundary after the data, as mkfs will place it.
    hash_offset_ = (data_.size() + 4095) / 4096 * 4096;
  }
  void TearDown() override {
    for (const auto& f : files_) ::unlink(f.c_str());
  }

  std::string file(const std::string& name, std::span<const uint8_t> bytes) {
    files_.push_back(write_scratch_image(name + "-" + case_name({GetParam(), 0}), bytes_text(bytes)));
    return files_.back();
  }
  CommandResult veritysetup(const std::string& args) { return run_command(veritysetup_ + " " + args); }
  std::string format_options() const {
    return fmt::format("{} --uuid={}", param_options(params_, tree_.layout.data_blocks), uuid_text(uuid_));
  }
  std::string root() const { return to_hex(tree_.root_hash); }
  // The data, zeros up to hash_offset_, and `hash_area` if given.
  std::vector<uint8_t> appended(std::span<const uint8_t> hash_area) const {
    std::vector<uint8_t> image = data_;
    image.resize(hash_offset_);
    image.insert(image.end(), hash_area.begin(), hash_area.end());
    return image;
  }

  std::string veritysetup_;
  Params params_;
  std::vector<uint8_t> data_;
  Tree tree_;
  std::array<uint8_t, 16> uuid_{};
  uint64_t hash_offset_ = 0;
  std::vector<std::string> files_;
};

}  // namespace

TEST_P(VerityVeritysetup, FormatWritesOurBytes) {
  const std::string data = file("data", data_);
  const std::string hash = file("hash", {});
  const CommandResult r = veritysetup(fmt::format("format {} {} {}", data, hash, format_options()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Root hash:      \t" + root() + "\n"), std::string::npos) << r.output;
  EXPECT_TRUE(bytes_text(hash_area(tree_, uuid_)) == read_whole_file(hash)) << "hash file differs";

  const std::string bare = file("bare", {});
  const CommandResult b = veritysetup(fmt::format("format {} {} --no-superblock {}", data, bare, format_options()));
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_TRUE(bytes_text(tree_.bytes) == read_whole_file(bare)) << "bare tree differs";
}

TEST_P(VerityVeritysetup, FormatAppendedWritesOurBytes) {
  const std::string image = file("image", appended({}));
  const CommandResult r = veritysetup(
      fmt::format("format {0} {0} --hash-offset={1} {2}", image, hash_offset_, format_options()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(root()), std::string::npos) << r.output;
  EXPECT_TRUE(bytes_text(appended(hash_area(tree_, uuid_))) == read_whole_file(image)) << "image differs";
}

TEST_P(VerityVeritysetup, VerifyAcceptsOurTrees) {
  const std::string data = file("data", data_);
  const std::string hash = file("hash", hash_area(tree_, uuid_));
  CommandResult r = veritysetup(fmt::format("verify {} {} {}", data, hash, root()));
  EXPECT_EQ(r.status, 0) << r.output;
  const std::string bare = file("bare", tree_.bytes);
  r = veritysetup(fmt::format("verify {} {} {} --no-superblock {}", data, bare, root(),
                              param_options(params_, tree_.layout.data_blocks)));
  EXPECT_EQ(r.status, 0) << r.output;
  const std::string image = file("image", appended(hash_area(tree_, uuid_)));
  r = veritysetup(fmt::format("verify {0} {0} {1} --hash-offset={2}", image, root(), hash_offset_));
  EXPECT_EQ(r.status, 0) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Cases, VerityVeritysetup, ::testing::ValuesIn(all_cases()), case_name);

namespace {

// Our check of an image with the hash area at `offset`, as fsck will make it: the parameters
// from the superblock, the tree the data yields, the stored tree against it and `root`. "" when
// clean, else what is wrong: "data 8192", "hash 0/3" (level/index), or an error's text.
std::string our_check(const std::vector<uint8_t>& image, uint64_t offset, std::span<const uint8_t> root) {
  try {
    erofs::format::VeritySuperblock sb;
    if (auto e = erofs::format::VeritySuperblock::decode(std::span(image).subspan(offset), sb); !e.empty()) return e;
    const Params p = params_of(sb);
    const Tree expected = build_tree(p, sb.data_blocks, [&](uint64_t at, std::span<uint8_t> out) {
      if (at + out.size() > offset) throw Error("the data runs into the hash area");
      std::memcpy(out.data(), image.data() + at, out.size());
    });
    const uint64_t start = tree_offset(offset, p.hash_block_size);
    if (start + expected.layout.tree_bytes > image.size()) return "the tree is cut short";
    const Report r = check(expected, std::span(image).subspan(start, expected.layout.tree_bytes), root);
    std::string out = r.root_mismatch ? "root" : "";
    for (uint64_t b : r.bad_data_blocks) out += fmt::format(" data {}", b);
    for (const auto& b : r.bad_hash_blocks) out += fmt::format(" hash {}/{}", b.level, b.index);
    return out;
  } catch (const std::exception& e) {
    return e.what();
  }
}

class VerityDamage : public VerityVeritysetup {};

}  // namespace

TEST_P(VerityDamage, FlippedByteFailsBothChecks) {
  const std::vector<uint8_t> good = appended(hash_area(tree_, uuid_));
  ASSERT_EQ(our_check(good, hash_offset_, tree_.root_hash), "");
  ASSERT_EQ(our_check(good, hash_offset_, {}), "");
  const Layout& l = tree_.layout;
  const uint64_t tree_start = tree_offset(hash_offset_, l.hash_block_size);
  const uint64_t middle = l.data_blocks / 2;
  struct Damage {
    const char* what;
    uint64_t offset;
    std::string ours;  // what our check must say, with the root hash
  };
  std::vector<Damage> damages = {
      {"data", middle * l.data_block_size + 17, fmt::format(" data {}", middle)},
      {"superblock signature", hash_offset_ + 0, "signature"},
      {"superblock hash block size", hash_offset_ + 69, "hash block size"},
      {"superblock block count", hash_offset_ + 72, ""},
  };
  if (!params_.salt.empty()) damages.push_back({"superblock salt", hash_offset_ + 88, ""});
  if (!l.levels.empty()) {
    damages.push_back({"top hash block", tree_start + 3, fmt::format(" hash {}/0", l.levels.size() - 1)});
    damages.push_back({"last hash block", tree_start + l.tree_bytes - l.hash_block_size + 1,
                       fmt::format(" hash 0/{}", l.levels[0].blocks - 1)});
  }
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    std::vector<uint8_t> image = good;
    image[d.offset] ^= 0x01;
    const std::string path = file("damaged", image);
    const CommandResult r = veritysetup(fmt::format("verify {0} {0} {1} --hash-offset={2}", path, root(), hash_offset_));
    EXPECT_NE(r.status, 0) << r.output;
    const std::string ours = our_check(image, hash_offset_, tree_.root_hash);
    EXPECT_NE(ours, "");
    EXPECT_NE(ours.find(d.ours), std::string::npos) << ours;
    // Without the root hash only the data and the tree vouch for each other: a device of one
    // data block has no tree, so nothing can be checked then.
    if (l.data_blocks > 1) {
      EXPECT_NE(our_check(image, hash_offset_, {}), "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, VerityDamage,
                         ::testing::Values(Case{Algorithm::Sha256, 4096, 4096, 16385, 32},
                                           Case{Algorithm::Sha512, 512, 512, 129, 32},
                                           Case{Algorithm::Sha256, 1024, 512, 300, 0},
                                           Case{Algorithm::Sha256, 4096, 4096, 1, 32}),
                         case_name);

TEST(VerityZeroBlocks, RefusedLikeVeritysetup) {
  // No dm-verity device has 0 data blocks: veritysetup refuses to format one (data shorter
  // than a block: "Hash area overflow"; --data-blocks=0 means the whole device), and the kernel
  // maps no empty target. So the layout refuses 0 too.
  EXPECT_THROW(compute_layout(Params{}, 0), ParamError);
  const std::string veritysetup = veritysetup_command();
  if (veritysetup.empty()) GTEST_SKIP() << "SKIPPED: veritysetup (cryptsetup-bin) is not installed";
  const std::string data = write_scratch_image("verity-zero-data", std::string(512, 'x'));
  const std::string hash = write_scratch_image("verity-zero-hash", "");
  const CommandResult r = run_command(fmt::format("{} format {} {} --salt=-", veritysetup, data, hash));
  EXPECT_NE(r.status, 0) << r.output;
  ::unlink(data.c_str());
  ::unlink(hash.c_str());
}
