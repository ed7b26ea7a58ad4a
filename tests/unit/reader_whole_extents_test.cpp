// OpenOptions::whole_extents, for readers that read every file (fsck, extract): a read that starts
// inside a pcluster decodes it whole into the cache, so the files beside it in the packed inode,
// read in any order, find it there. Counted in pread calls on the image, not timed.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compress/codec.h"
#include "reader/image.h"
#include "writer/build_image.h"

namespace fs = std::filesystem;
using namespace erofs;

namespace {

TEST(WholeExtents, FilesInThePackedInodeReadInAnyOrderDecodeEachPclusterOnce) {
  const fs::path dir = fs::current_path() / "reader_whole_extents";
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  // Small files of text LZ4 compresses about fourfold: dozens of them share each 64 KiB
  // pcluster of the packed inode.
  uint64_t x = 7;
  for (int i = 0; i < 200; ++i) {
    std::string text;
    while (text.size() < 1500 + size_t(i % 7) * 300) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      text += "entry " + std::to_string(x >> 52) + " of file " + std::to_string(i) + "\n";
    }
    std::ofstream(dir / "src" / ("f" + std::to_string(i))) << text;
  }
  writer::BuildOptions o;
  o.compression.emplace();
  o.compression->algorithms.push_back(compress::parse_spec("lz4hc"));
  o.compression->pcluster_bytes = 65536;
  o.compression->fragments = true;
  const std::string img_path = (dir / "x.img").string();
  writer::build_image((dir / "src").string(), img_path, o);

  auto reads_of_every_file = [&](bool whole, uint64_t& packed_pclusters) {
    const auto img = reader::Image::open(img_path, {.whole_extents = whole});
    const reader::Inode packed = img->inode(img->superblock().packed_nid);
    packed_pclusters = 0;
    for (const reader::Extent& e : img->extents(packed)) packed_pclusters += e.kind == reader::Extent::Kind::Compressed;
    std::vector<reader::Inode> files;
    for (int i = 0; i < 200; ++i) files.push_back(img->resolve("/f" + std::to_string(i)));
    for (const reader::Inode& f : files) EXPECT_EQ(img->extents(f).front().kind, reader::Extent::Kind::Fragment);
    // From the middle of the packed inode outwards: most reads start and end inside a pcluster.
    std::sort(files.begin(), files.end(), [&](const reader::Inode& a, const reader::Inode& b) {
      const auto off = [&](const reader::Inode& f) { return int64_t(img->extents(f).front().physical); };
      const int64_t mid = int64_t(packed.size / 2);
      return std::llabs(off(a) - mid) < std::llabs(off(b) - mid);
    });
    const uint64_t before = img->image_reads();
    std::vector<uint8_t> buf;
    for (const reader::Inode& f : files) {
      buf.resize(size_t(f.size));
      EXPECT_EQ(img->read(f, 0, buf), buf.size());
    }
    return img->image_reads() - before;
  };
  uint64_t pclusters = 0;
  const uint64_t whole = reads_of_every_file(true, pclusters);
  ASSERT_GE(pclusters, 2u);
  EXPECT_LE(whole, pclusters) << "a pcluster of the packed inode was read twice";
  // Without the option, a read inside a pcluster nobody has decoded decodes only its head, and
  // does not keep it: its neighbours read it again.
  const uint64_t heads = reads_of_every_file(false, pclusters);
  EXPECT_GT(heads, 4 * pclusters);
  fs::remove_all(dir);
}

}  // namespace
