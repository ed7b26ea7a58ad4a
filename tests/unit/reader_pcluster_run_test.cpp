// Pclusters that follow each other on the device are read in one call by the readers that decode
// a file in order (fsck's data check, whole-extent reads): counted in pread calls on the image,
// not timed. A damaged pcluster in the middle of such a run is still the one named, with the
// bytes before it counted, as when each pcluster was read on its own.
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

struct RunImage {
  fs::path dir;
  std::string source, image;
};

// A 2 MiB file in 4 KiB pclusters, hundreds of them, one after another on the device.
RunImage build_run_image(const std::string& name) {
  RunImage r{fs::current_path() / name, "", ""};
  fs::remove_all(r.dir);
  fs::create_directories(r.dir / "src");
  // Numbers from a linear congruential generator: text that LZ4 halves, no more.
  uint64_t x = 1;
  while (r.source.size() < (2u << 20)) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    r.source += "record " + std::to_string(x >> 40) + "\n";
  }
  std::ofstream(r.dir / "src" / "big", std::ios::binary) << r.source;
  writer::BuildOptions o;
  o.compression.emplace();
  o.compression->algorithms.push_back(compress::parse_spec("lz4hc"));
  o.compression->pcluster_bytes = 4096;
  r.image = (r.dir / "x.img").string();
  writer::build_image((r.dir / "src").string(), r.image, o);
  return r;
}

std::vector<reader::Extent> compressed_extents(const reader::Image& img, const reader::Inode& ino) {
  std::vector<reader::Extent> out;
  for (const reader::Extent& e : img.extents(ino))
    if (e.kind == reader::Extent::Kind::Compressed) out.push_back(e);
  return out;
}

TEST(PclusterRun, ConsecutivePclustersAreReadTogether) {
  const RunImage r = build_run_image("pcluster_run_reads");
  const auto img = reader::Image::open(r.image);
  const reader::Inode ino = img->resolve("/big");
  const size_t pclusters = compressed_extents(*img, ino).size();
  ASSERT_GT(pclusters, 100u);

  // fsck's check: every byte decoded, in a read per run of pclusters (256 KiB), not one each.
  std::vector<uint8_t> buf;
  uint64_t bytes = 0;
  const uint64_t before = img->image_reads();
  img->check_data(ino, 0, ino.size, buf, bytes);
  EXPECT_EQ(bytes, r.source.size());
  EXPECT_LE(img->image_reads() - before, pclusters / 16) << "pclusters read one by one";

  // A reader copying whole extents (extract) reads them the same way and gets the file's bytes.
  std::vector<uint8_t> whole(r.source.size());
  const uint64_t again = img->image_reads();
  ASSERT_EQ(img->read(ino, 0, whole), whole.size());
  EXPECT_EQ(std::string(whole.begin(), whole.end()), r.source);
  EXPECT_LE(img->image_reads() - again, pclusters / 16) << "pclusters read one by one";
  fs::remove_all(r.dir);
}

TEST(PclusterRun, ADamagedPclusterInARunIsTheOneNamed) {
  const RunImage r = build_run_image("pcluster_run_damage");
  std::vector<reader::Extent> extents;
  {
    const auto img = reader::Image::open(r.image);
    extents = compressed_extents(*img, img->resolve("/big"));
  }
  ASSERT_GT(extents.size(), 100u);
  // The 20th pcluster: inside the first run, with pclusters before and after it.
  const reader::Extent victim = extents[20];
  std::string bytes;
  {
    std::ifstream in(r.image, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (uint64_t i = victim.physical + victim.physical_length / 2; i < victim.physical + victim.physical_length / 2 + 64; ++i)
    bytes[i] = char(bytes[i] ^ 0x5A);
  const std::string damaged = (r.dir / "damaged.img").string();
  std::ofstream(damaged, std::ios::binary) << bytes;

  const auto img = reader::Image::open(damaged);
  const reader::Inode ino = img->resolve("/big");
  std::vector<uint8_t> buf;
  uint64_t counted = 0;
  try {
    img->check_data(ino, 0, ino.size, buf, counted);
    ADD_FAILURE() << "the damaged pcluster was not noticed";
  } catch (const reader::CorruptError& e) {
    EXPECT_NE(std::string(e.what()).find("extent at " + std::to_string(victim.offset) + " "), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(counted, victim.offset) << "the bytes before the damaged pcluster";

  // The same error from a read that covers it, and none from one that stops before it.
  std::vector<uint8_t> out(size_t(victim.offset));
  EXPECT_EQ(img->read(ino, 0, out), out.size());
  EXPECT_EQ(std::string(out.begin(), out.end()), r.source.substr(0, out.size()));
  std::vector<uint8_t> all(r.source.size());
  EXPECT_THROW(img->read(ino, 0, all), reader::CorruptError);
  fs::remove_all(r.dir);
}

}  // namespace
