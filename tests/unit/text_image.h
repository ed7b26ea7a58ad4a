// A one-file image for reader tests that need real extents: `bytes` of numbered lines (text that
// LZ4 compresses about fourfold) as `dir`/src/big, built into `dir`/x.img with lz4hc in 64 KiB
// pclusters, so that each extent holds about 256 KiB and a read inside one decodes a head.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "compress/codec.h"
#include "writer/build_image.h"

namespace erofs::test {

struct TextImage {
  std::string image;    // dir/x.img
  std::string content;  // the bytes of /big
};

inline TextImage build_text_image(const std::filesystem::path& dir, size_t bytes, uint64_t seed) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  TextImage t;
  for (uint64_t x = seed; t.content.size() < bytes;) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    t.content += "line " + std::to_string(x >> 50) + " of the file\n";
  }
  std::ofstream(dir / "src" / "big", std::ios::binary) << t.content;
  writer::BuildOptions o;
  o.compression.emplace();
  o.compression->algorithms.push_back(compress::parse_spec("lz4hc"));
  o.compression->pcluster_bytes = 65536;
  t.image = (dir / "x.img").string();
  writer::build_image((dir / "src").string(), t.image, o);
  return t;
}

}  // namespace erofs::test
