// The dm-verity checker: each kind of damage (a data block, a hash block at each level, the top
// block's entries or its unused bytes, another root hash) is reported as what it is, with and
// without the root hash.
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/verity_test_support.h"
#include "verity/check.h"

using namespace erofs::verity;
using erofs::test::kSalt;
using erofs::test::pseudo_random_bytes;
using erofs::test::tree_of;

namespace {

// A tree of 3 levels (16 hashes a block: 300 blocks -> 19, 2, 1 hash blocks) to damage.
class VerityCheck : public ::testing::Test {
 protected:
  const Params p{Algorithm::Sha256, 1024, 512, kSalt};
  std::vector<uint8_t> data = pseudo_random_bytes(300 * 1024, 6);
  Tree good = tree_of(p, data);
  std::vector<uint8_t> stored = good.bytes;

  Report run(std::span<const uint8_t> root) { return check(tree_of(p, data), stored, root); }
  void flip_tree(size_t level, uint64_t index, size_t byte) {
    stored[(good.layout.levels[level].first_block + index) * 512 + byte] ^= 0x01;
  }
};

// The reported hash blocks as (level, index).
using Blocks = std::vector<std::pair<size_t, uint64_t>>;
Blocks blocks_of(const Report& r) {
  Blocks out;
  for (const auto& b : r.bad_hash_blocks) out.emplace_back(b.level, b.index);
  return out;
}

}  // namespace

TEST_F(VerityCheck, CleanWithAndWithoutRoot) {
  EXPECT_TRUE(run(good.root_hash).clean());
  EXPECT_TRUE(run({}).clean());
}

TEST_F(VerityCheck, DamagedDataBlockIsNamed) {
  data[123 * 1024 + 77] ^= 0x80;
  data[299 * 1024] ^= 0x01;
  for (auto root : {std::span<const uint8_t>(good.root_hash), std::span<const uint8_t>()}) {
    const Report r = run(root);
    EXPECT_EQ(r.bad_data_blocks, (std::vector<uint64_t>{123, 299}));
    EXPECT_TRUE(r.bad_hash_blocks.empty());
    EXPECT_FALSE(r.root_mismatch);
  }
}

TEST_F(VerityCheck, DamagedHashBlockIsNamedWithTheDataBelowIt) {
  flip_tree(0, 7, 100);
  for (auto root : {std::span<const uint8_t>(good.root_hash), std::span<const uint8_t>()}) {
    const Report r = run(root);
    EXPECT_EQ(blocks_of(r), (Blocks{{0, 7}}));
    EXPECT_TRUE(r.bad_data_blocks.empty());
    ASSERT_EQ(r.bad_hash_blocks.size(), 1u);
    EXPECT_EQ(r.bad_hash_blocks[0].tree_block, 3u + 7);  // after the top block and level 1's two
    EXPECT_EQ(r.bad_hash_blocks[0].first_data_block, 7u * 16);
    EXPECT_EQ(r.bad_hash_blocks[0].data_blocks, 16u);
  }
  stored = good.bytes;
  flip_tree(1, 1, 3);  // the second level-1 block covers data blocks 256..299
  const Report r = run(good.root_hash);
  EXPECT_EQ(blocks_of(r), (Blocks{{1, 1}}));
  EXPECT_EQ(r.bad_hash_blocks[0].first_data_block, 256u);
  EXPECT_EQ(r.bad_hash_blocks[0].data_blocks, 44u);
}

TEST_F(VerityCheck, DamagedTopBlock) {
  flip_tree(2, 0, 5);  // an entry
  EXPECT_EQ(blocks_of(run(good.root_hash)), (Blocks{{2, 0}}));
  EXPECT_EQ(blocks_of(run({})), (Blocks{{2, 0}}));  // refuted by the level below
  stored = good.bytes;
  flip_tree(2, 0, 500);  // unused bytes
  EXPECT_EQ(blocks_of(run(good.root_hash)), (Blocks{{2, 0}}));
  EXPECT_EQ(blocks_of(run({})), (Blocks{{2, 0}}));
}

TEST_F(VerityCheck, OtherRootHash) {
  auto root = good.root_hash;
  root[0] ^= 1;
  const Report r = run(root);
  EXPECT_TRUE(r.root_mismatch);
  EXPECT_TRUE(r.bad_data_blocks.empty());
  EXPECT_TRUE(r.bad_hash_blocks.empty());
  EXPECT_THROW(run(std::span(root).first(31)), ParamError);
  stored.pop_back();
  EXPECT_THROW(run(good.root_hash), Error);
}

TEST(VerityCheckOneBlock, DataAgainstTheRoot) {
  const Params p{Algorithm::Sha512, 4096, 4096, kSalt};
  auto data = pseudo_random_bytes(4096, 7);
  const Tree good = tree_of(p, data);
  EXPECT_TRUE(check(good, {}, good.root_hash).clean());
  data[4095] ^= 1;
  EXPECT_EQ(check(tree_of(p, data), {}, good.root_hash).bad_data_blocks, (std::vector<uint64_t>{0}));
  EXPECT_TRUE(check(tree_of(p, data), {}, {}).clean());  // nothing to check against
}
