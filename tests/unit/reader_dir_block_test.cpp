// Validation of single directory blocks.
#include <gtest/gtest.h>

#include "format/dirent.h"
#include "reader/dir_block.h"
#include "reader/image.h"

namespace erofs::test {
namespace {

struct Entry {
  std::string name;
  uint8_t type = 1;
};

// A block laid out as mkfs does: dirents, then the names, then zero padding; cut to `size`.
std::vector<uint8_t> make_block(const std::vector<Entry>& entries, size_t size = 4096) {
  std::vector<uint8_t> block(4096, 0);
  size_t nameoff = entries.size() * format::kDirentSize;
  for (size_t i = 0; i < entries.size(); ++i) {
    format::Dirent{100 + i, uint16_t(nameoff), entries[i].type}.encode(block.data() + i * format::kDirentSize);
    std::copy(entries[i].name.begin(), entries[i].name.end(), block.begin() + nameoff);
    nameoff += entries[i].name.size();
  }
  block.resize(size);
  return block;
}

void expect_corrupt(const std::vector<uint8_t>& block, const std::string& fragment) {
  try {
    reader::parse_dir_block(block, 7, 3);
    ADD_FAILURE() << "accepted a bad block (" << fragment << ")";
  } catch (const reader::CorruptError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nid 7"), std::string::npos) << e.what();
  }
}

TEST(DirBlock, ParsesSortedEntries) {
  const auto block = make_block({{"-x"}, {".", 2}, {"..", 2}, {"a"}, {"ab"}, {"b"}});
  const auto entries = reader::parse_dir_block(block, 7, 0);
  ASSERT_EQ(entries.size(), 6u);
  EXPECT_EQ(entries[0].name, "-x");
  EXPECT_EQ(entries[5].name, "b");
  EXPECT_EQ(entries[4].nid, 104u);
  EXPECT_EQ(entries[1].file_type, 2);
}

TEST(DirBlock, LastNameEndsAtTheDataEndWithoutPadding) {
  const auto block = make_block({{"."}, {".."}, {"name"}}, 3 * 12 + 1 + 2 + 4);
  EXPECT_EQ(reader::parse_dir_block(block, 7, 0).back().name, "name");
}

TEST(DirBlock, RejectsBadNameoffs) {
  auto block = make_block({{"."}, {".."}, {"a"}});
  block[8] = 13;  // first nameoff not a multiple of 12
  expect_corrupt(block, "nameoff");
  block[8] = 0;
  expect_corrupt(block, "nameoff");
  block = make_block({{"."}, {".."}, {"a"}});
  block[12 + 8] = 36;  // second nameoff equal to the first: an empty name
  expect_corrupt(block, "nameoff");
  block = make_block({{"."}, {".."}, {"a"}}, 30);  // dirents need 36 bytes
  expect_corrupt(block, "nameoff");
  expect_corrupt(std::vector<uint8_t>(8, 0), "cannot hold");
}

TEST(DirBlock, RejectsBadNames) {
  expect_corrupt(make_block({{"."}, {".."}, {"a/b"}}), "'/'");
  expect_corrupt(make_block({{"."}, {".."}, {std::string("a\0b", 3)}, {"c"}}), "NUL");
  expect_corrupt(make_block({{"."}, {".."}, {std::string(256, 'x')}}), "256 bytes");
  auto block = make_block({{"."}, {".."}, {"a"}});
  block[36 + 3] = 0;  // the last name becomes empty: "." ".." then NUL
  expect_corrupt(block, "0 bytes");
}

TEST(DirBlock, RejectsBadOrderAndTypes) {
  expect_corrupt(make_block({{".."}, {"."}}), "order");
  expect_corrupt(make_block({{"."}, {"a"}, {"a"}}), "order");
  expect_corrupt(make_block({{"ab"}, {"a"}}), "order");
  expect_corrupt(make_block({{"."}, {"a", 8}}), "file type");
}

}  // namespace
}  // namespace erofs::test
