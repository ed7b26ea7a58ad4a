// reader::count_image, which `erofs dump` prints: inodes by type and layout, and the data blocks
// files occupy (a chunk-based file's holes take none).
#include "reader/stats.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "compress/codec.h"
#include "writer/build_image.h"

namespace fs = std::filesystem;
using namespace erofs;

namespace {

TEST(ReaderStats, CountsInodesLayoutsAndTheBlocksDataTakes) {
  const fs::path dir = fs::current_path() / "reader_stats";
  fs::remove_all(dir);
  fs::create_directories(dir / "src" / "sub");
  {
    // Three 4 KiB blocks with the middle one a hole.
    const int fd = ::open((dir / "src" / "sparse").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    const std::string block(4096, 'x');
    ASSERT_EQ(::pwrite(fd, block.data(), block.size(), 0), 4096);
    ASSERT_EQ(::pwrite(fd, block.data(), block.size(), 8192), 4096);
    ::close(fd);
  }
  std::ofstream(dir / "src" / "sub" / "small") << "tail only";
  fs::create_symlink("sub/small", dir / "src" / "link");

  writer::BuildOptions o;
  o.chunk_size = 4096;
  const std::string img_path = (dir / "x.img").string();
  writer::build_image((dir / "src").string(), img_path, o);
  const auto img = reader::Image::open(img_path);
  const reader::ImageStats s = reader::count_image(*img);

  EXPECT_EQ(s.inodes, 5u);
  EXPECT_EQ(s.by_type.at("directory"), 2u);
  EXPECT_EQ(s.by_type.at("regular"), 2u);
  EXPECT_EQ(s.by_type.at("symlink"), 1u);
  EXPECT_EQ(s.by_layout.at("chunk-based"), 2u);  // both regular files, under --chunksize
  EXPECT_EQ(s.by_layout.at("flat-inline"), 3u);  // the directories and the symlink
  EXPECT_EQ(s.file_bytes, 3 * 4096u + 9u);
  EXPECT_EQ(s.data_blocks, 3u);  // the sparse file's two mapped chunks and the small file's one
  EXPECT_EQ(s.compact_inodes + s.extended_inodes, s.inodes);
  fs::remove_all(dir);
}

TEST(ReaderStats, ThePackedInodesBlocksAreData) {
  const fs::path dir = fs::current_path() / "reader_stats_packed";
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  // Files that fill no pcluster: with all-fragments their data is only in the packed inode.
  for (int i = 0; i < 40; ++i) {
    std::string text;
    for (int j = 0; j < 300; ++j) text += std::to_string(i * 7919 + j * j) + " ";
    std::ofstream(dir / "src" / ("f" + std::to_string(i))) << text;
  }
  writer::BuildOptions o;
  o.compression.emplace();
  o.compression->algorithms.push_back(compress::parse_spec("lz4hc"));
  o.compression->fragments = true;
  o.compression->all_fragments = true;
  const std::string img_path = (dir / "x.img").string();
  writer::build_image((dir / "src").string(), img_path, o);
  const auto img = reader::Image::open(img_path);
  ASSERT_NE(img->superblock().packed_nid, 0u);
  const reader::Inode packed = img->inode(img->superblock().packed_nid);
  const uint64_t packed_blocks = packed.disk.u;
  EXPECT_GT(packed_blocks, 0u);
  EXPECT_EQ(reader::count_image(*img).data_blocks, packed_blocks);
  fs::remove_all(dir);
}

}  // namespace
