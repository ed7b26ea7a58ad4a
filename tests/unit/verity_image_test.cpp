// mkfs --verity end to end in one process: images built with a dm-verity tree through the
// library's builder, their bytes laid out as writer/data/verity_writer.h says (the filesystem,
// zeros to the hash offset, veritysetup's superblock, the tree the image's bytes give), the side
// files, reproducibility, and fsck's check (reader/verity_check.h) naming the file whose data a
// damaged block holds. veritysetup itself is the oracle in tests/integration/verity.sh.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "erofs-kit/erofs.hpp"
#include "reader/verity_check.h"
#include "reader/verity_tree.h"
#include "tests/unit/reader_test_support.h"
#include "tests/unit/verity_test_support.h"
#include "verity/derive.h"

namespace fs = std::filesystem;
using namespace erofs;
using namespace erofs::test;

namespace {

struct Case {
  const char* name;
  uint32_t block_size;  // EROFS
  const char* verity;   // --verity=
  const char* compression;
  const char* extended;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }
std::string text_of(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

reader::VerityCheckOptions check_options(std::vector<uint8_t> root_hash, std::string hash_file = "") {
  reader::VerityCheckOptions o;
  o.root_hash = std::move(root_hash);
  o.hash_file = std::move(hash_file);
  return o;
}

// A scratch directory, removed at the end.
struct Scratch {
  fs::path dir = fs::path(::testing::TempDir()) / ("verity-image-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

// Files whose data lands in different places: the data area, an inline tail, and (with
// fragments) the packed inode.
Result<BuildSummary> build(const std::string& image, BuildSettings s, const std::string& big_seed = "x") {
  s.timestamp = 1700000000;
  ImageBuilder b(s);
  EntryMeta m;
  if (auto r = b.add_directory("d", m); !r) return r.error();
  const auto big = pseudo_random_bytes(150000, std::hash<std::string>()(big_seed));
  if (auto r = b.add_file("d/big", m, std::string(big.begin(), big.end())); !r) return r.error();
  if (auto r = b.add_file("d/tail", m, std::string(9000, 't') + "the end"); !r) return r.error();
  if (auto r = b.add_file("small", m, "a file of a few bytes\n"); !r) return r.error();
  return b.write(image);
}

class VerityImage : public ::testing::TestWithParam<Case> {
 protected:
  BuildSettings settings() const {
    BuildSettings s;
    s.block_size = GetParam().block_size;
    s.verity = GetParam().verity;
    s.compression = GetParam().compression;
    s.extended = GetParam().extended;
    return s;
  }
  Scratch tmp_;
};

}  // namespace

TEST_P(VerityImage, AppendedTreeIsWhereAndWhatTheLayoutSays) {
  const auto built = build(tmp_ / "img", settings());
  ASSERT_TRUE(built.ok()) << built.error().message;
  ASSERT_TRUE(built.value().verity.has_value());
  const VeritySummary& v = *built.value().verity;
  const std::string bytes = read_whole_file(tmp_ / "img");
  const auto img = reader::Image::open(tmp_ / "img");
  const uint64_t fs_bytes = reader::filesystem_bytes(*img);
  verity::Params params = verity::parse_options(GetParam().verity);

  // Data blocks cover the filesystem (zero-padded to a whole block); the superblock follows at
  // the first boundary of both block sizes, with zeros between.
  EXPECT_EQ(v.data_blocks, (fs_bytes + params.data_block_size - 1) / params.data_block_size);
  const uint64_t data_end = v.data_blocks * params.data_block_size;
  const uint64_t align = std::max(params.data_block_size, params.hash_block_size);
  EXPECT_EQ(v.hash_offset, (data_end + align - 1) / align * align);
  EXPECT_EQ(bytes.find_first_not_of('\0', fs_bytes), v.hash_offset);
  EXPECT_EQ(built.value().image_bytes, bytes.size());
  EXPECT_EQ(v.hash_offset + v.tree_bytes, bytes.size());

  // veritysetup's hash area for the tree the image's first data_end bytes give.
  params.salt = verity::parse_hex(v.salt, "salt");
  const verity::Tree tree = tree_of(params, bytes_of(bytes.substr(0, data_end)));
  EXPECT_EQ(verity::to_hex(tree.root_hash), v.root_hash);
  EXPECT_TRUE(bytes.substr(v.hash_offset) == text_of(hash_area(tree, verity::derive_uuid(tree.root_hash))));
  EXPECT_EQ(v.hash_algorithm, verity::algorithm_name(params.algorithm));
  EXPECT_EQ(v.data_block_size, params.data_block_size);
  EXPECT_EQ(v.hash_block_size, params.hash_block_size);

  // fsck's check finds it, with and without the root hash, and the filesystem reads as before.
  const auto clean = reader::check_verity(*img, check_options(tree.root_hash));
  EXPECT_TRUE(clean.found);
  EXPECT_EQ(clean.problems, std::vector<std::string>{});
  EXPECT_EQ(reader::check_verity(*img, {}).problems, std::vector<std::string>{});
  EXPECT_EQ(clean.hash_offset, v.hash_offset);
  const reader::Inode tail = img->resolve("/d/tail");
  std::string tail_bytes(tail.size, '\0');
  img->read(tail, 0, {reinterpret_cast<uint8_t*>(tail_bytes.data()), tail_bytes.size()});
  EXPECT_EQ(tail_bytes, std::string(9000, 't') + "the end");
}

TEST_P(VerityImage, SeparateFilesHoldTheTreeAndTheRootHash) {
  BuildSettings s = settings();
  s.verity_file = tmp_ / "img.verity";
  s.root_hash_file = tmp_ / "img.roothash";
  const auto built = build(tmp_ / "img", s);
  ASSERT_TRUE(built.ok()) << built.error().message;
  const VeritySummary& v = *built.value().verity;
  EXPECT_EQ(v.hash_offset, 0u);
  const std::string image = read_whole_file(tmp_ / "img");
  // The image is the data device: exactly its data blocks.
  EXPECT_EQ(image.size(), v.data_blocks * v.data_block_size);
  EXPECT_EQ(read_whole_file(tmp_ / "img.roothash"), v.root_hash);  // no newline, as veritysetup writes it
  const std::string hash_file = read_whole_file(tmp_ / "img.verity");
  EXPECT_EQ(hash_file.size(), v.tree_bytes);

  // The same tree as the appended one: the data blocks, and so the salt and root, are equal.
  const auto appended = build(tmp_ / "img2", settings());
  ASSERT_TRUE(appended.ok()) << appended.error().message;
  EXPECT_EQ(appended.value().verity->root_hash, v.root_hash);
  EXPECT_TRUE(read_whole_file(tmp_ / "img2").substr(appended.value().verity->hash_offset) == hash_file);

  const auto img = reader::Image::open(tmp_ / "img");
  const auto r = reader::check_verity(*img, check_options(verity::parse_hex(v.root_hash, "root"), tmp_ / "img.verity"));
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.problems, std::vector<std::string>{});
  // Without the file, the image has no tree; asked for one by a root hash, that is a problem.
  EXPECT_FALSE(reader::check_verity(*img, {}).found);
  EXPECT_EQ(reader::check_verity(*img, check_options(verity::parse_hex(v.root_hash, "root"))).problems.size(), 1u);
}

TEST_P(VerityImage, DamagedDataNamesTheFile) {
  const auto built = build(tmp_ / "img", settings());
  ASSERT_TRUE(built.ok()) << built.error().message;
  const VeritySummary& v = *built.value().verity;
  const std::string pristine = read_whole_file(tmp_ / "img");
  const auto root = verity::parse_hex(v.root_hash, "root");
  for (const char* path : {"/d/big", "/d/tail", "/small"}) {
    SCOPED_TRACE(path);
    // A byte where the file's last extent is stored (an inline tail, a fragment in the packed
    // inode, a pcluster or plain blocks), damaged.
    uint64_t at = 0;
    {
      const auto img = reader::Image::open(tmp_ / "img");
      const reader::Inode ino = img->resolve(path);
      const reader::Extent e = img->extents(ino).back();
      if (e.kind == reader::Extent::Kind::Fragment)
        at = img->extent_at(img->inode(img->superblock().packed_nid), e.physical).physical;
      else
        at = e.physical;
    }
    std::string damaged = pristine;
    damaged[at] = char(damaged[at] ^ 0x40);
    const std::string file = write_scratch_image("verity-damaged.img", damaged);
    const auto img = reader::Image::open(file, {.verify_checksum = false});
    const uint64_t block = at / v.data_block_size;
    for (const auto& given : {root, std::vector<uint8_t>{}}) {
      const auto r = reader::check_verity(*img, check_options(given));
      ASSERT_EQ(r.problems.size(), 1u) << ::testing::PrintToString(r.problems);
      EXPECT_NE(r.problems[0].find(fmt::format("verity: data block {} ", block)), std::string::npos) << r.problems[0];
      EXPECT_NE(r.problems[0].find(path), std::string::npos) << r.problems[0];
    }
    ::unlink(file.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, VerityImage,
    ::testing::Values(Case{"plain_4k", 4096, "", "", ""},
                      Case{"b512_sha512_d4096_h1024", 512, "hash=sha512,data-block=4096,hash-block=1024", "", ""},
                      Case{"b1024_d512_h512", 1024, "data-block=512,hash-block=512", "", ""},
                      Case{"lz4hc_fragments_d1024_h4096", 4096, "data-block=1024", "lz4hc", "fragments"},
                      Case{"lzma_ztailpacking_sha512", 4096, "hash=sha512", "lzma", "ztailpacking"},
                      Case{"zstd_all_fragments_dedupe", 2048, "hash-block=512", "zstd", "all-fragments,dedupe"}),
    case_name);

namespace {

struct VerityBuild : ::testing::Test {
  Scratch tmp_;
};

}  // namespace

TEST_F(VerityBuild, SameInputSameBytesForAnyWorkerCount) {
  BuildSettings s;
  s.verity = "";
  s.compression = "lz4hc";
  s.workers = 1;
  ASSERT_TRUE(build(tmp_ / "a", s).ok());
  s.workers = 4;
  ASSERT_TRUE(build(tmp_ / "b", s).ok());
  EXPECT_TRUE(read_whole_file(tmp_ / "a") == read_whole_file(tmp_ / "b"));
  // Other content, another salt (and so another UUID and tree).
  const auto other = build(tmp_ / "c", s, "y");
  ASSERT_TRUE(other.ok());
  const auto first = build(tmp_ / "a", s);
  EXPECT_NE(other.value().verity->salt, first.value().verity->salt);
}

TEST_F(VerityBuild, GivenSaltIsUsedAsItIs) {
  BuildSettings s;
  s.verity_salt = "00ff10";
  const auto given = build(tmp_ / "a", s);
  ASSERT_TRUE(given.ok()) << given.error().message;
  EXPECT_EQ(given.value().verity->salt, "00ff10");
  s.verity_salt = "none";
  const auto none = build(tmp_ / "b", s);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none.value().verity->salt, "");
  const auto img = reader::Image::open(tmp_ / "b");
  EXPECT_EQ(reader::check_verity(*img, check_options(verity::parse_hex(none.value().verity->root_hash, ""))).problems,
            std::vector<std::string>{});
}

// The smallest image: one verity data block (a tree without levels, the root the block's hash).
// A tree of 0 data blocks does not exist: veritysetup refuses it and so does the layout
// (verity_tree_test), and an EROFS image always has a block.
TEST_F(VerityBuild, SmallestImageIsOneDataBlock) {
  BuildSettings s;
  s.block_size = 512;
  s.verity = "data-block=4096";
  const auto built = ImageBuilder(s).write(tmp_ / "a");
  ASSERT_TRUE(built.ok()) << built.error().message;
  const VeritySummary& v = *built.value().verity;
  EXPECT_EQ(v.data_blocks, 1u);
  EXPECT_EQ(v.tree_bytes, 4096u);  // the superblock's hash block, no tree
  const auto img = reader::Image::open(tmp_ / "a");
  EXPECT_EQ(reader::check_verity(*img, check_options(verity::parse_hex(v.root_hash, ""))).problems,
            std::vector<std::string>{});
  const auto wrong = reader::check_verity(*img, check_options(std::vector<uint8_t>(32, 0)));
  EXPECT_EQ(wrong.problems.size(), 1u);
}

TEST_F(VerityBuild, BadSettingsAndUnwritableSideFilesLeaveNothing) {
  BuildSettings s;
  s.verity = "hash=md5";
  auto r = build(tmp_ / "a", s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
  s.verity = "";
  s.verity_salt = "abc";
  r = build(tmp_ / "a", s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
  s.verity_salt.reset();
  for (auto side : {&BuildSettings::verity_file, &BuildSettings::root_hash_file}) {
    BuildSettings t = s;
    t.*side = tmp_ / "missing/dir/file";
    r = build(tmp_ / "a", t);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("missing/dir"), std::string::npos) << r.error().message;
  }
  EXPECT_TRUE(fs::is_empty(tmp_.dir)) << "a failed build left files behind";
}

// One flipped byte in the superblock: either it no longer decodes, or the tree it describes is
// not the one stored. The UUID is covered by nothing (veritysetup does not check it either).
TEST_F(VerityBuild, DamagedSuperblockIsReported) {
  BuildSettings s;
  s.verity = "";
  const auto built = build(tmp_ / "a", s);
  ASSERT_TRUE(built.ok() && built.value().verity);
  const VeritySummary& v = *built.value().verity;
  const std::string pristine = read_whole_file(tmp_ / "a");
  const std::pair<size_t, const char*> damages[] = {
      {0, "no \"verity\" signature"}, {8, "version"}, {12, "hash type"}, {32, "algorithm"},
      {64, "data block size"},        {73, "past the superblock"},       {88, "none of the"},
      {200, "after the salt"},
  };
  for (auto [offset, says] : damages) {
    SCOPED_TRACE(offset);
    std::string damaged = pristine;
    damaged[v.hash_offset + offset] = char(damaged[v.hash_offset + offset] ^ 0x01);
    const std::string file = write_scratch_image("verity-sb.img", damaged);
    const auto r = reader::check_verity(*reader::Image::open(file), {});
    ASSERT_EQ(r.problems.size(), 1u) << ::testing::PrintToString(r.problems);
    EXPECT_NE(r.problems[0].find(says), std::string::npos) << r.problems[0];
    ::unlink(file.c_str());
  }
}
