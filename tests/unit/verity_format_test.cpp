// The verity superblock's encoding, the parameter checks and option text, and the tree layout
// numbers for the block counts around each level boundary (checked against veritysetup's own
// trees in verity_veritysetup_test.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "format/endian.h"
#include "format/verity_superblock.h"
#include "verity/layout.h"
#include "verity/params.h"

using erofs::format::VeritySuperblock;
using namespace erofs::verity;

namespace {

VeritySuperblock sample_superblock() {
  VeritySuperblock sb;
  sb.uuid = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  sb.algorithm = "sha512";
  sb.data_block_size = 1024;
  sb.hash_block_size = 512;
  sb.data_blocks = 0x123456789;
  sb.salt = {0xde, 0xad, 0xbe, 0xef};
  return sb;
}

std::vector<uint8_t> encoded(const VeritySuperblock& sb) {
  std::vector<uint8_t> bytes(VeritySuperblock::kSize, 0xAA);
  sb.encode(bytes);
  return bytes;
}

std::string decode_error(const std::vector<uint8_t>& bytes) {
  VeritySuperblock out;
  return VeritySuperblock::decode(bytes, out);
}

}  // namespace

TEST(VeritySuperblock, FieldsAtVeritysetupOffsets) {
  const auto b = encoded(sample_superblock());
  EXPECT_EQ(std::memcmp(b.data(), "verity\0\0", 8), 0);
  EXPECT_EQ(erofs::format::get_le32(&b[8]), 1u);   // version
  EXPECT_EQ(erofs::format::get_le32(&b[12]), 1u);  // hash type
  EXPECT_EQ(b[16], 0x01);
  EXPECT_EQ(b[31], 0xef);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&b[32])), "sha512");
  EXPECT_EQ(erofs::format::get_le32(&b[64]), 1024u);
  EXPECT_EQ(erofs::format::get_le32(&b[68]), 512u);
  EXPECT_EQ(erofs::format::get_le64(&b[72]), 0x123456789u);
  EXPECT_EQ(erofs::format::get_le16(&b[80]), 4u);
  EXPECT_EQ(b[88], 0xde);
  EXPECT_EQ(b[91], 0xef);
  for (size_t i = 92; i < b.size(); ++i) ASSERT_EQ(b[i], 0) << i;
}

TEST(VeritySuperblock, RoundTrip) {
  const VeritySuperblock sb = sample_superblock();
  VeritySuperblock back;
  ASSERT_EQ(VeritySuperblock::decode(encoded(sb), back), "");
  EXPECT_EQ(back.uuid, sb.uuid);
  EXPECT_EQ(back.algorithm, sb.algorithm);
  EXPECT_EQ(back.data_block_size, sb.data_block_size);
  EXPECT_EQ(back.hash_block_size, sb.hash_block_size);
  EXPECT_EQ(back.data_blocks, sb.data_blocks);
  EXPECT_EQ(back.salt, sb.salt);
}

TEST(VeritySuperblock, RejectsBadFields) {
  const auto good = encoded(sample_superblock());
  struct Case {
    size_t offset;
    std::vector<uint8_t> bytes;
    const char* says;
  };
  const Case cases[] = {
      {0, {'V'}, "signature"},
      {8, {2}, "version 2"},
      {12, {0}, "hash type 0"},
      {32, {0}, "no hash algorithm"},
      {32, std::vector<uint8_t>(32, 'a'), "not terminated"},
      {40, {'x'}, "after the algorithm name"},
      {64, {0x01, 0x04}, "data block size 1025"},
      {64, {0x00, 0x01}, "data block size 256"},
      {68, {0x00, 0x00, 0x10}, "hash block size 1048576"},
      {72, {0, 0, 0, 0, 0, 0, 0, 0}, "data block count is 0"},
      {80, {0x01, 0x01}, "salt size 257"},
      {84, {1}, "after the salt size"},
      {92, {1}, "after the salt"},
      {511, {1}, "after the salt"},
  };
  for (const Case& c : cases) {
    auto bad = good;
    std::copy(c.bytes.begin(), c.bytes.end(), bad.begin() + c.offset);
    EXPECT_NE(decode_error(bad).find(c.says), std::string::npos) << c.says << ": " << decode_error(bad);
  }
  EXPECT_NE(decode_error(std::vector<uint8_t>(good.begin(), good.end() - 1)).find("511 bytes"), std::string::npos);
}

TEST(VeritySuperblock, EncodeRefusesOversizedFields) {
  VeritySuperblock sb = sample_superblock();
  sb.salt.resize(257);
  EXPECT_THROW(encoded(sb), std::invalid_argument);
  sb = sample_superblock();
  sb.algorithm = std::string(32, 'a');
  EXPECT_THROW(encoded(sb), std::invalid_argument);
}

TEST(VerityParams, DmVerityLimits) {
  EXPECT_NO_THROW(validate(Params{}));
  for (uint32_t size : {512u, 1024u, 2048u, 4096u}) {
    EXPECT_NO_THROW(validate(Params{Algorithm::Sha512, size, size, {}}));
  }
  for (uint32_t size : {0u, 256u, 768u, 8192u}) {
    EXPECT_THROW(validate(Params{Algorithm::Sha256, size, 4096, {}}), ParamError) << size;
    EXPECT_THROW(validate(Params{Algorithm::Sha256, 4096, size, {}}), ParamError) << size;
  }
  EXPECT_NO_THROW(validate(Params{Algorithm::Sha256, 4096, 4096, std::vector<uint8_t>(256)}));
  EXPECT_THROW(validate(Params{Algorithm::Sha256, 4096, 4096, std::vector<uint8_t>(257)}), ParamError);
}

TEST(VerityParams, OptionText) {
  const Params p = parse_options("hash=sha512,data-block=1024,hash-block=512");
  EXPECT_EQ(p.algorithm, Algorithm::Sha512);
  EXPECT_EQ(p.data_block_size, 1024u);
  EXPECT_EQ(p.hash_block_size, 512u);
  const Params d = parse_options("");
  EXPECT_EQ(d.algorithm, Algorithm::Sha256);
  EXPECT_EQ(d.data_block_size, 4096u);
  EXPECT_EQ(d.hash_block_size, 4096u);
  for (const char* bad : {"hash=md5", "data-block=8192", "hash-block=4k", "block=4096", "hash-block=", "data-block=-1"})
    EXPECT_THROW(parse_options(bad), ParamError) << bad;
  try {
    parse_options("hash=sha1");
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_STREQ(e.what(), "verity hash algorithm 'sha1': use sha256 or sha512");
  }
}

TEST(VerityParams, HexAndSalt) {
  EXPECT_EQ(parse_salt("none"), std::vector<uint8_t>{});
  EXPECT_EQ(parse_salt("00aBfF"), (std::vector<uint8_t>{0x00, 0xab, 0xff}));
  EXPECT_EQ(to_hex(parse_salt("00aBfF")), "00abff");
  EXPECT_THROW(parse_salt(""), ParamError);
  EXPECT_THROW(parse_salt("abc"), ParamError);
  EXPECT_THROW(parse_salt("zz"), ParamError);
  EXPECT_THROW(parse_salt(std::string(514, 'a')), ParamError);
  EXPECT_EQ(parse_hex("", "root hash").size(), 0u);
}

TEST(VerityParams, FromSuperblock) {
  const Params p = params_of(sample_superblock());
  EXPECT_EQ(p.algorithm, Algorithm::Sha512);
  EXPECT_EQ(p.salt, sample_superblock().salt);
  VeritySuperblock sb = sample_superblock();
  sb.algorithm = "sha1";
  EXPECT_THROW(params_of(sb), ParamError);
  sb = sample_superblock();
  sb.data_block_size = 65536;  // veritysetup's format allows it, the kernel's dm-verity does not
  EXPECT_THROW(params_of(sb), ParamError);
  const auto made = make_superblock(p, 7, sb.uuid);
  EXPECT_EQ(made.algorithm, "sha512");
  EXPECT_EQ(made.data_blocks, 7u);
  EXPECT_EQ(made.data_block_size, 1024u);
}

namespace {

struct LayoutCase {
  Algorithm algorithm;
  uint32_t hash_block_size;
  uint64_t data_blocks;
  std::vector<uint64_t> level_blocks;  // bottom first
};

}  // namespace

TEST(VerityLayout, LevelsAndPositions) {
  const LayoutCase cases[] = {
      {Algorithm::Sha256, 4096, 1, {}},
      {Algorithm::Sha256, 4096, 2, {1}},
      {Algorithm::Sha256, 4096, 128, {1}},
      {Algorithm::Sha256, 4096, 129, {2, 1}},
      {Algorithm::Sha256, 4096, 16384, {128, 1}},
      {Algorithm::Sha256, 4096, 16385, {129, 2, 1}},
      {Algorithm::Sha512, 4096, 65, {2, 1}},
      {Algorithm::Sha512, 512, 9, {2, 1}},
      {Algorithm::Sha512, 512, 16385, {2049, 257, 33, 5, 1}},
      {Algorithm::Sha256, 512, 17, {2, 1}},
  };
  for (const LayoutCase& c : cases) {
    const Layout l = compute_layout(Params{c.algorithm, 4096, c.hash_block_size, {}}, c.data_blocks);
    SCOPED_TRACE(testing::Message() << algorithm_name(c.algorithm) << " " << c.hash_block_size << " " << c.data_blocks);
    EXPECT_EQ(l.hashes_per_block, c.hash_block_size / digest_size(c.algorithm));
    ASSERT_EQ(l.levels.size(), c.level_blocks.size());
    uint64_t position = 0;  // top level first
    for (size_t i = l.levels.size(); i-- > 0;) {
      EXPECT_EQ(l.levels[i].blocks, c.level_blocks[i]) << "level " << i;
      EXPECT_EQ(l.levels[i].first_block, position) << "level " << i;
      position += c.level_blocks[i];
    }
    EXPECT_EQ(l.hash_blocks, position);
    EXPECT_EQ(l.tree_bytes, position * c.hash_block_size);
  }
}

TEST(VerityLayout, RefusesZeroBlocksAndOverflow) {
  EXPECT_THROW(compute_layout(Params{}, 0), ParamError);
  EXPECT_THROW(compute_layout(Params{}, uint64_t(1) << 52), ParamError);  // 2^64 bytes of data
  EXPECT_NO_THROW(compute_layout(Params{}, (uint64_t(1) << 52) - 1));
  EXPECT_THROW(compute_layout(Params{Algorithm::Sha256, 4096, 8192, {}}, 1), ParamError);
}

TEST(VerityLayout, TreeOffsetAfterSuperblock) {
  EXPECT_EQ(tree_offset(0, 4096), 4096u);
  EXPECT_EQ(tree_offset(12288, 4096), 16384u);
  EXPECT_EQ(tree_offset(512, 4096), 4096u);
  EXPECT_EQ(tree_offset(1024, 512), 1536u);
  EXPECT_EQ(tree_offset(1024, 1024), 2048u);
  EXPECT_THROW(tree_offset(100, 4096), ParamError);
  EXPECT_THROW(tree_offset(UINT64_MAX - 511, 4096), ParamError);
}
