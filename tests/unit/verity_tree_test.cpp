// The dm-verity tree builder on its own: every hash is SHA-256(salt || block) by an independent
// SHA-256, the tree does not depend on threads or on how the data is cut into spans, and the data
// fed must make up the blocks declared.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/unit/sha256.h"
#include "tests/unit/verity_test_support.h"
#include "verity/derive.h"
#include "verity/tree_builder.h"

using namespace erofs::verity;
using erofs::test::kSalt;
using erofs::test::pseudo_random_bytes;
using erofs::test::tree_of;

namespace {

std::string salted_sha256(std::span<const uint8_t> salt, std::span<const uint8_t> block) {
  erofs::test::Sha256 h;
  h.update(salt);
  h.update(block);
  return h.hex();
}

std::span<const uint8_t> hash_block(const Tree& t, size_t level, uint64_t index) {
  const auto& l = t.layout;
  return std::span(t.bytes).subspan((l.levels[level].first_block + index) * l.hash_block_size, l.hash_block_size);
}

}  // namespace

TEST(VerityTree, EveryEntryIsTheSaltedHashOfTheBlockBelow) {
  const Params p{Algorithm::Sha256, 1024, 512, kSalt};  // 16 hashes a block: 3 levels for 300 blocks
  const auto data = pseudo_random_bytes(300 * 1024, 1);
  const Tree t = tree_of(p, data);
  ASSERT_EQ(t.layout.levels.size(), 3u);
  for (uint64_t i = 0; i < 300; ++i) {
    const auto entry = hash_block(t, 0, i / 16).subspan(i % 16 * 32, 32);
    ASSERT_EQ(to_hex(entry), salted_sha256(kSalt, std::span(data).subspan(i * 1024, 1024))) << i;
  }
  for (size_t level = 1; level < 3; ++level)
    for (uint64_t i = 0; i < t.layout.levels[level - 1].blocks; ++i) {
      const auto entry = hash_block(t, level, i / 16).subspan(i % 16 * 32, 32);
      ASSERT_EQ(to_hex(entry), salted_sha256(kSalt, hash_block(t, level - 1, i))) << level << " " << i;
    }
  // Unused entries of each level's last block are zero.
  const auto last = hash_block(t, 0, 18);
  EXPECT_TRUE(std::all_of(last.begin() + 300 % 16 * 32, last.end(), [](uint8_t b) { return b == 0; }));
  EXPECT_EQ(to_hex(t.root_hash), salted_sha256(kSalt, hash_block(t, 2, 0)));
}

TEST(VerityTree, OneBlockHasNoLevels) {
  const Params p{Algorithm::Sha256, 4096, 4096, kSalt};
  const auto data = pseudo_random_bytes(4096, 2);
  const Tree t = tree_of(p, data);
  EXPECT_TRUE(t.bytes.empty());
  EXPECT_EQ(to_hex(t.root_hash), salted_sha256(kSalt, data));
  EXPECT_EQ(to_hex(tree_of(Params{Algorithm::Sha256, 4096, 4096, {}}, data).root_hash), salted_sha256({}, data));
}

TEST(VerityTree, SameForAnyThreadsAndSpans) {
  for (Algorithm alg : {Algorithm::Sha256, Algorithm::Sha512}) {
    const Params p{alg, 4096, 4096, kSalt};
    const auto data = pseudo_random_bytes(5000 * 4096 + 0, 3);  // 20 MB: several shares of 1 MiB
    const Tree one = tree_of(p, data, 1);
    for (unsigned threads : {2u, 3u, 8u}) {
      const Tree many = tree_of(p, data, threads);
      EXPECT_EQ(many.bytes, one.bytes) << threads;
      EXPECT_EQ(many.root_hash, one.root_hash) << threads;
    }
    // Spans that split blocks anywhere, from one byte to several MiB.
    TreeBuilder b(p, 5000, 2);
    size_t off = 0;
    for (size_t step : {1u, 4095u, 4097u, 3u << 20, 7u, 12345u}) {
      for (int i = 0; i < 3 && off < data.size(); ++i, off += std::min(step, data.size() - off))
        b.add(std::span(data).subspan(off, std::min(step, data.size() - off)));
    }
    b.add(std::span(data).subspan(off));
    const Tree pieces = b.finish();
    EXPECT_EQ(pieces.bytes, one.bytes);
    EXPECT_EQ(pieces.root_hash, one.root_hash);
  }
}

TEST(VerityTree, ReadCallbackGivesTheSameTree) {
  const Params p{Algorithm::Sha512, 512, 4096, kSalt};
  const auto data = pseudo_random_bytes(40000 * 512, 4);
  const Tree fed = tree_of(p, data);
  const Tree read = build_tree(p, 40000, [&](uint64_t offset, std::span<uint8_t> out) {
    ASSERT_LE(offset + out.size(), data.size());
    std::memcpy(out.data(), data.data() + offset, out.size());
  }, 2);
  EXPECT_EQ(read.bytes, fed.bytes);
  EXPECT_EQ(read.root_hash, fed.root_hash);
}

TEST(VerityTree, DataMustMatchTheDeclaredBlocks) {
  const Params p{Algorithm::Sha256, 4096, 4096, {}};
  const auto data = pseudo_random_bytes(3 * 4096, 5);
  TreeBuilder more(p, 2);
  EXPECT_THROW(more.add(data), Error);
  TreeBuilder fewer(p, 3);
  fewer.add(std::span(data).first(2 * 4096));
  EXPECT_THROW(fewer.finish(), Error);
  TreeBuilder partial(p, 3);
  partial.add(std::span(data).first(3 * 4096 - 1));
  EXPECT_THROW(partial.finish(), Error);
  TreeBuilder trailing(p, 2);  // the declared blocks and a piece of one more
  trailing.add(std::span(data).first(2 * 4096 + 5));
  EXPECT_THROW(trailing.finish(), Error);
  EXPECT_THROW(TreeBuilder(p, 0), ParamError);
}

TEST(VerityTree, DerivedSaltAndUuid) {
  const std::vector<uint8_t> seed = {1, 2, 3};
  EXPECT_EQ(derive_salt(seed).size(), 32u);
  EXPECT_EQ(derive_salt(seed), derive_salt(seed));
  EXPECT_NE(derive_salt(seed), derive_salt(std::vector<uint8_t>{1, 2, 4}));
  const auto u = derive_uuid(seed);
  EXPECT_EQ(u, derive_uuid(seed));
  EXPECT_NE(u, derive_uuid(std::vector<uint8_t>{1, 2, 4}));
  EXPECT_EQ(u[6] >> 4, 8);       // version 8
  EXPECT_EQ(u[8] & 0xC0, 0x80);  // RFC variant
  const auto salt = derive_salt(seed);
  EXPECT_FALSE(std::equal(u.begin(), u.end(), salt.begin()));
}
