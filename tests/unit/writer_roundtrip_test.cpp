// Build -> read back in process -> compare with the source, for every layout the writer makes.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "reader/image.h"
#include "writer/build_image.h"
#include "writer/source/scan_dir.h"
#include "lib/verify.h"

namespace fs = std::filesystem;
using namespace erofs;

namespace {

void write_file(const fs::path& p, const std::string& content) {
  std::ofstream(p, std::ios::binary) << content;
}

std::string text(size_t n, unsigned seed) {
  static const char* words[] = {"erofs ", "block ", "cluster ", "kernel ", "image ", "read ", "only ", "data\n"};
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < n) s += words[rng() % 8];
  s.resize(n);
  return s;
}

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = char(rng());
  return s;
}

// Builds the tree at `src` into `image` with compression `z` (and the rest of `o`); the scan, for
// verify_image.
writer::ScanResult build_compressed(const fs::path& src, const std::string& image, writer::CompressionOptions z,
                                    writer::BuildOptions o = {}) {
  o.compression = std::move(z);
  auto scan = writer::scan_directory(src.string(), o.source, nullptr);
  writer::build_image(scan.tree, image, o);
  return scan;
}

// A tree that crosses every size boundary that matters to the layouts.
fs::path make_tree(const fs::path& root) {
  fs::remove_all(root);
  fs::create_directories(root / "sub" / "deeper");
  for (size_t n : {0, 1, 100, 4095, 4096, 4097, 8191, 16384, 65535, 65537, 300001})
    write_file(root / ("text_" + std::to_string(n)), text(n, unsigned(n)));
  write_file(root / "random_100k", random_bytes(100000, 7));
  write_file(root / "zeros_1m", std::string(1 << 20, '\0'));
  std::string mixed;
  for (int i = 0; i < 8; ++i) mixed += i % 2 ? random_bytes(70000, unsigned(i)) : text(70000, unsigned(i));
  write_file(root / "sub" / "mixed", mixed);
  write_file(root / "sub" / "dup_a", text(52000, 99));
  write_file(root / "sub" / "deeper" / "dup_b", text(52000, 99));
  // Alike for 120001 bytes, then different: dedupe shares a pcluster by partial reference.
  write_file(root / "sub" / "prefix_base", text(200000, 3));
  write_file(root / "sub" / "prefix_shared", text(200000, 3).substr(0, 120001) + text(60000, 4));
  fs::create_hard_link(root / "text_100", root / "sub" / "hardlink");
  fs::create_symlink("../text_100", root / "sub" / "link");
  ::setxattr((root / "text_4097").c_str(), "user.note", "value", 5, 0);
  ::setxattr((root / "sub" / "mixed").c_str(), "user.note", "value", 5, 0);
  for (int i = 0; i < 300; ++i) write_file(root / "sub" / ("many_" + std::to_string(i)), text(size_t(i * 37), unsigned(i)));
  return root;
}

struct Case {
  const char* name;
  uint32_t block_size;
  const char* algorithm;  // nullptr: uncompressed
  uint32_t pcluster;
  bool full_indexes, ztailpacking, fragments, all_fragments;
  uint32_t chunk_size = 0;
  bool dedupe = false;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RoundTrip, ImageEqualsSource) {
  const Case& c = GetParam();
  fs::path dir = fs::current_path() / (std::string("roundtrip.") + c.name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path src = make_tree(dir / "src");
  std::string image = (dir / "image.erofs").string();

  writer::BuildOptions o;
  o.block_size = c.block_size;
  o.chunk_size = c.chunk_size;
  if (c.algorithm) {
    writer::CompressionOptions z;
    z.algorithms.push_back(compress::parse_spec(c.algorithm));
    z.pcluster_bytes = c.pcluster;
    z.full_indexes = c.full_indexes;
    z.ztailpacking = c.ztailpacking;
    z.fragments = c.fragments || c.all_fragments;
    z.all_fragments = c.all_fragments;
    z.dedupe = c.dedupe;
    z.workers = 2;
    o.compression = z;
  }
  auto scan = writer::scan_directory(src.string(), o.source, nullptr);
  auto stats = writer::build_image(scan.tree, image, o);
  EXPECT_EQ(stats.regular_files, 318u);
  EXPECT_EQ(stats.hard_links, 1u);
  auto problems = lib::verify_image(scan.tree, image, {});
  for (auto& p : problems) ADD_FAILURE() << p;

  // Independently of verify: a read across extent boundaries at an odd offset.
  auto img = reader::Image::open(image);
  auto ino = img->resolve("/sub/mixed");
  std::string want = text(70000, 0) + random_bytes(70000, 1);
  std::string got(100000, '\0');
  ASSERT_EQ(img->read(ino, 12345, {reinterpret_cast<uint8_t*>(got.data()), got.size()}), got.size());
  EXPECT_EQ(got, want.substr(12345, 100000));
  // Runs stored as they are hold exactly the bytes read() gives (the FUSE driver splices them).
  for (const char* path : {"/text_300001", "/text_4097", "/sub/mixed", "/zeros_1m"}) {
    auto f = img->resolve(path);
    std::vector<uint8_t> want_bytes(f.size), run_bytes;
    ASSERT_EQ(img->read(f, 0, want_bytes), f.size);
    for (uint64_t pos = 0; pos < f.size; pos += 777) {
      auto run = img->stored_run(f, pos);
      if (f.layout() == format::Layout::CompressedFull || f.layout() == format::Layout::CompressedCompact) {
        EXPECT_FALSE(run) << path;
        break;
      }
      if (!run) continue;
      ASSERT_LE(pos + run->length, f.size) << path;
      run_bytes.resize(size_t(std::min<uint64_t>(run->length, 5000)));
      ASSERT_EQ(::pread(img->file_descriptor(), run_bytes.data(), run_bytes.size(), off_t(run->position)),
                ssize_t(run_bytes.size()));
      ASSERT_TRUE(std::equal(run_bytes.begin(), run_bytes.end(), want_bytes.begin() + long(pos))) << path << " @" << pos;
    }
  }
  if (c.algorithm && !c.all_fragments) {
    EXPECT_GT(stats.compressed_files, 0u);
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, RoundTrip,
    ::testing::Values(Case{"plain", 4096, nullptr, 0, false, false, false, false},
                      Case{"plain_b512", 512, nullptr, 0, false, false, false, false},
                      Case{"plain_b1024", 1024, nullptr, 0, false, false, false, false},
                      Case{"chunked", 4096, nullptr, 0, false, false, false, false, 8192},
                      Case{"lz4", 4096, "lz4", 4096, false, false, false, false},
                      Case{"lz4hc_16k", 4096, "lz4hc,9", 16384, false, false, false, false},
                      Case{"lz4hc_64k_full", 4096, "lz4hc", 65536, true, false, false, false},
                      Case{"lz4hc_1m", 4096, "lz4hc", 1 << 20, false, false, false, false},
                      Case{"lz4_b512", 512, "lz4", 2048, false, false, false, false},
                      Case{"lzma_64k", 4096, "lzma", 65536, false, false, false, false},
                      Case{"deflate_16k", 4096, "deflate", 16384, false, false, false, false},
                      Case{"zstd_64k", 4096, "zstd", 65536, false, false, false, false},
                      Case{"ztailpacking", 4096, "lz4hc", 16384, false, true, false, false},
                      Case{"ztailpacking_full", 4096, "lzma", 16384, true, true, false, false},
                      Case{"fragments", 4096, "lz4hc", 16384, false, false, true, false},
                      Case{"fragments_full", 4096, "deflate", 16384, true, false, true, false},
                      Case{"all_fragments", 4096, "lz4hc", 65536, false, false, false, true},
                      Case{"dedupe", 4096, "lz4hc", 16384, false, false, false, false, 0, true},
                      Case{"dedupe_fragments", 4096, "lzma", 16384, false, true, true, false, 0, true}),
    [](const auto& info) { return std::string(info.param.name); });

// Every algorithm: an encoder that carried anything from one segment to the next (zstd and
// deflate once started each fill from the previous fill's ratio) would give images that depend on
// which worker compressed which segment.
TEST(Reproducible, SameBytesForAnyWorkerCount) {
  fs::path dir = fs::current_path() / "reproducible.workers";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path src = make_tree(dir / "src");
  for (const char* alg : {"lz4", "lz4hc", "lzma", "deflate", "zstd"}) {
    std::string first;
    for (unsigned workers : {1u, 2u, 4u}) {
      writer::BuildOptions o;
      writer::CompressionOptions z;
      z.algorithms.push_back(compress::parse_spec(alg));
      z.pcluster_bytes = 65536;
      z.ztailpacking = z.fragments = z.dedupe = true;
      z.workers = workers;
      z.segment_bytes = 64 << 10;  // many segments per file, so the order of their completion varies
      o.compression = z;
      std::string image = (dir / ("w" + std::to_string(workers))).string();
      writer::build_image(src.string(), image, o);
      std::ifstream in(image, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      if (first.empty()) first = bytes;
      else EXPECT_TRUE(bytes == first) << alg << ": image differs with " << workers << " workers";
    }
  }
  fs::remove_all(dir);
}

// Extents of /sub/prefix_shared that decode a prefix of a pcluster /sub/prefix_base also uses.
TEST(Dedupe, PartialReferenceToAnotherFilesPcluster) {
  fs::path dir = fs::current_path() / "dedupe.partial";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path src = make_tree(dir / "src");
  // (zstd packs all of this text into one block per extent, which leaves nothing to share.)
  for (const char* alg : {"lz4hc", "lzma", "deflate"}) {
    writer::CompressionOptions z;
    z.algorithms.push_back(compress::parse_spec(alg));
    z.pcluster_bytes = 16384;
    z.dedupe = true;
    std::string image = (dir / alg).string();
    auto scan = build_compressed(src, image, z);
    for (auto& p : lib::verify_image(scan.tree, image, {})) ADD_FAILURE() << alg << ": " << p;

    auto img = reader::Image::open(image);
    std::set<uint64_t> base_pclusters;
    for (auto& e : img->extents(img->resolve("/sub/prefix_base")))
      if (e.kind == reader::Extent::Kind::Compressed) base_pclusters.insert(e.physical);
    size_t partial = 0;
    uint64_t end = 0;
    for (auto& e : img->extents(img->resolve("/sub/prefix_shared"))) {
      EXPECT_EQ(e.offset, end) << alg;
      end = e.offset + e.length;
      if (!e.partial) continue;
      ++partial;
      EXPECT_TRUE(base_pclusters.count(e.physical)) << alg << ": partial extent at " << e.offset;
    }
    EXPECT_EQ(end, 180001u) << alg;
    EXPECT_GE(partial, 1u) << alg;
  }
  fs::remove_all(dir);
}

// Equal data compressed with different algorithms (by hints) never shares a pcluster.
TEST(Dedupe, NotAcrossAlgorithms) {
  fs::path dir = fs::current_path() / "dedupe.algorithms";
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  write_file(dir / "src" / "a", text(100000, 5));
  write_file(dir / "src" / "b", text(100000, 5));
  writer::CompressionOptions z;
  z.algorithms = {compress::parse_spec("lz4hc"), compress::parse_spec("lzma")};
  z.hints.push_back({16384, "^b$", 1});
  z.pcluster_bytes = 16384;
  z.dedupe = true;
  std::string image = (dir / "image").string();
  auto scan = build_compressed(dir / "src", image, z);
  for (auto& p : lib::verify_image(scan.tree, image, {})) ADD_FAILURE() << p;
  auto img = reader::Image::open(image);
  std::set<uint64_t> a_pclusters;
  for (auto& e : img->extents(img->resolve("/a"))) a_pclusters.insert(e.physical);
  for (auto& e : img->extents(img->resolve("/b"))) {
    EXPECT_NE(e.algorithm, img->extents(img->resolve("/a")).front().algorithm);
    EXPECT_FALSE(e.kind == reader::Extent::Kind::Compressed && a_pclusters.count(e.physical));
  }
  fs::remove_all(dir);
}

// A file kept whole in the packed inode maps as fragment pieces cut where the packed inode's
// extents end (readers then decode each packed extent straight into their buffer).
TEST(Fragments, WholeFileMapsAsPiecesOfThePackedInodesExtents) {
  fs::path dir = fs::current_path() / "fragments.pieces";
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  const std::string content = text(500000, 11) + random_bytes(30000, 12) + text(200000, 13);
  write_file(dir / "src" / "big", content);
  writer::CompressionOptions z;
  z.algorithms.push_back(compress::parse_spec("lz4hc"));
  z.pcluster_bytes = 16384;
  z.all_fragments = true;
  std::string image = (dir / "image").string();
  build_compressed(dir / "src", image, z);
  auto img = reader::Image::open(image);
  const reader::Inode big = img->resolve("/big");
  const auto pieces = img->extents(big);
  ASSERT_GT(pieces.size(), 4u);
  uint64_t end = 0, physical = pieces.front().physical;
  for (const auto& e : pieces) {
    ASSERT_EQ(e.kind, reader::Extent::Kind::Fragment);
    EXPECT_EQ(e.offset, end);
    EXPECT_EQ(e.physical, physical) << "pieces of one fragment follow each other in the packed inode";
    std::string got(size_t(e.length), '\0');
    ASSERT_EQ(img->read(big, e.offset, std::span(reinterpret_cast<uint8_t*>(got.data()), got.size())), e.length);
    EXPECT_EQ(got, content.substr(size_t(e.offset), size_t(e.length))) << "piece at " << e.offset;
    end += e.length;
    physical += e.length;
  }
  EXPECT_EQ(end, content.size());
  fs::remove_all(dir);
}

// With all-fragments, files larger than the read buffer are referenced in the source and read
// again when the packed inode is compressed; smaller ones are copied beside the image. Both kinds,
// interleaved, come back exactly, and an equal large file is stored once.
TEST(Fragments, LargeWholeFilesReadFromTheSource) {
  fs::path dir = fs::current_path() / "fragments.large";
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  const std::string big = text(2500000, 31) + random_bytes(100000, 32);
  write_file(dir / "src" / "a_big", big);
  write_file(dir / "src" / "b_small", text(10000, 33));
  write_file(dir / "src" / "c_big_copy", big);
  write_file(dir / "src" / "d_big2", text(1500000, 34));
  write_file(dir / "src" / "e_small", random_bytes(5000, 35));
  writer::CompressionOptions z;
  z.algorithms.push_back(compress::parse_spec("lz4hc"));
  z.pcluster_bytes = 65536;
  z.all_fragments = true;
  const std::string image = (dir / "image").string();
  auto scan = build_compressed(dir / "src", image, z);
  for (auto& p : lib::verify_image(scan.tree, image, {})) ADD_FAILURE() << p;
  auto img = reader::Image::open(image);
  const auto a = img->extents(img->resolve("/a_big")), c = img->extents(img->resolve("/c_big_copy"));
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(a.front().kind, reader::Extent::Kind::Fragment);
  EXPECT_EQ(c.front().physical, a.front().physical) << "an equal file is one fragment";
  fs::remove_all(dir);
}

// The packed inode holds the fragments in the reverse of the files' data order, so the kernel,
// which keeps the pages before the one it decodes but none after, decodes a pcluster of small
// files about once when they are read in that order (bench/reader-compare's tar). Tail fragments
// of larger files follow the same rule.
TEST(Fragments, PackedInodeHoldsThemInReverseDataOrder) {
  fs::path dir = fs::current_path() / "fragments.reverse";
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  for (size_t i = 0; i < names.size(); ++i)
    write_file(dir / "src" / names[i], i == 2 ? text(150000, 40) : text(3000 + 1000 * i, 41 + unsigned(i)));
  writer::CompressionOptions z;
  z.algorithms.push_back(compress::parse_spec("lz4hc"));
  z.pcluster_bytes = 65536;
  z.fragments = true;
  const std::string image = (dir / "image").string();
  auto scan = build_compressed(dir / "src", image, z);
  for (auto& p : lib::verify_image(scan.tree, image, {})) ADD_FAILURE() << p;
  auto img = reader::Image::open(image);
  uint64_t previous = UINT64_MAX;
  for (const std::string& n : names) {
    const auto ex = img->extents(img->resolve("/" + n));
    ASSERT_FALSE(ex.empty()) << n;
    ASSERT_EQ(ex.back().kind, reader::Extent::Kind::Fragment) << n;
    EXPECT_LE(ex.back().physical + ex.back().length, previous) << n << " lies after the file before it";
    previous = ex.back().physical;
  }
  EXPECT_EQ(previous, 0u) << "the last file's fragment opens the packed inode";
  fs::remove_all(dir);
}

// Input that compresses far better than 4:1 fills 1 MiB pclusters with extents up to the bound
// the index's lookback deltas keep (2000 lclusters), as mkfs.erofs does; capped at 4 MiB, such
// pclusters were left part empty. Zeros fill a 4 KiB LZMA pcluster with more than the 256
// pclusters' worth of input the encoder is offered first, so it is offered the rest too.
TEST(Extents, LongAsTheIndexAllows) {
  fs::path dir = fs::current_path() / "extents.long";
  const std::string unit = text(4096, 21);
  std::string repetitive;
  while (repetitive.size() < (20u << 20)) repetitive += unit;
  struct Case {
    std::string content, algorithm;
    uint32_t pcluster;
    uint64_t min_longest, max_longest;
  };
  for (const Case& c : {Case{repetitive, "lz4hc", 1u << 20, 2000u * 4096, 2000u * 4096},
                        Case{std::string(20u << 20, '\0'), "lzma", 4096, 256u * 4096 + 1, 2000u * 4096}}) {
    fs::remove_all(dir);
    fs::create_directories(dir / "src");
    write_file(dir / "src" / "file", c.content);
    writer::CompressionOptions z;
    z.algorithms.push_back(compress::parse_spec(c.algorithm));
    z.pcluster_bytes = c.pcluster;
    std::string image = (dir / "image").string();
    build_compressed(dir / "src", image, z);
    auto img = reader::Image::open(image);
    const reader::Inode ino = img->resolve("/file");
    uint64_t longest = 0;
    for (const auto& e : img->extents(ino)) longest = std::max(longest, e.length);
    EXPECT_GE(longest, c.min_longest) << "-C" << c.pcluster;
    EXPECT_LE(longest, c.max_longest) << "-C" << c.pcluster;
    std::string got(c.content.size(), '\0');
    ASSERT_EQ(img->read(ino, 0, std::span(reinterpret_cast<uint8_t*>(got.data()), got.size())), got.size());
    EXPECT_TRUE(got == c.content) << "-C" << c.pcluster;
  }
  fs::remove_all(dir);
}

// --hot-list: the listed files' data comes first, in the list's order, and none of it is in a
// fragment, whatever the tail options say; the image still equals the source.
TEST(HotList, ListedFilesFirstAndOutOfFragments) {
  fs::path dir = fs::current_path() / "hotlist";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path src = make_tree(dir / "src");
  for (bool all_fragments : {false, true}) {
    writer::CompressionOptions z;
    z.algorithms.push_back(compress::parse_spec("lz4hc"));
    z.pcluster_bytes = 16384;
    z.ztailpacking = z.fragments = true;
    z.all_fragments = all_fragments;
    writer::BuildOptions o;
    o.hot_files = {"sub/mixed", "text_65537", "sub/hardlink"};  // a hard link's second name counts too
    std::vector<std::string> warnings;
    o.warn = [&](const std::string& w) { warnings.push_back(w); };
    const std::string image = (dir / "img").string();
    auto scan = build_compressed(src, image, z, o);
    for (auto& p : lib::verify_image(scan.tree, image, {})) ADD_FAILURE() << p;
    EXPECT_TRUE(warnings.empty());
    const auto img = reader::Image::open(image);
    for (const char* path : {"/sub/mixed", "/text_65537", "/text_100"})
      for (const auto& e : img->extents(img->resolve(path))) EXPECT_NE(e.kind, reader::Extent::Kind::Fragment) << path;
    // The data area starts after the superblock's block, with the first hot file; the second follows.
    const auto first = img->extents(img->resolve("/sub/mixed")), second = img->extents(img->resolve("/text_65537"));
    EXPECT_EQ(first.front().physical, img->block_size());
    EXPECT_GT(second.front().physical, first.front().physical);
    EXPECT_EQ(second.front().kind, reader::Extent::Kind::Compressed);
  }
  fs::remove_all(dir);
}

TEST(Errors, MissingSourceAndOutputDirectory) {
  writer::BuildOptions o;
  try {
    writer::build_image("/nonexistent/source", "out.img", o);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/source"), std::string::npos) << e.what();
  }
  fs::path dir = fs::current_path() / "errors.src";
  fs::create_directories(dir);
  try {
    writer::build_image(dir.string(), "/nonexistent/dir/out.img", o);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists("/nonexistent/dir/out.img"));
  fs::remove_all(dir);
}

}  // namespace
