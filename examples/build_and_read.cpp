// Builds an image of a directory with the C++ API, reporting progress, then checks that every
// file reads back as it is on disk. Usage: build_and_read_cpp SOURCE_DIR IMAGE
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <erofs-kit/erofs.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SOURCE_DIR IMAGE\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  erofs::BuildSettings settings;
  settings.compression = "lz4hc,9";
  settings.pcluster_bytes = 65536;
  settings.extended = "ztailpacking,dedupe";
  settings.on_progress = [](const erofs::Progress& p) {
    std::fprintf(stderr, "\r%llu/%llu files", (unsigned long long)p.files, (unsigned long long)p.total_files);
  };
  auto built = erofs::ImageBuilder::from_directory(argv[1], argv[2], settings);
  std::fprintf(stderr, "\n");
  if (!built) {
    std::fprintf(stderr, "%s\n", built.error().message.c_str());
    return 1;
  }
  std::printf("%s: %llu files, %llu bytes in, %llu bytes of image\n", argv[2],
              (unsigned long long)built.value().regular_files, (unsigned long long)built.value().bytes_in,
              (unsigned long long)built.value().image_bytes);

  auto image = erofs::Image::open(argv[2]);
  if (!image) {
    std::fprintf(stderr, "%s\n", image.error().message.c_str());
    return 1;
  }
  int mismatches = 0;
  for (auto& entry : fs::recursive_directory_iterator(argv[1])) {
    if (!entry.is_regular_file() || entry.is_symlink()) continue;
    auto path = entry.path().lexically_relative(argv[1]).string();
    std::ifstream in(entry.path(), std::ios::binary);
    std::string want((std::istreambuf_iterator<char>(in)), {});
    auto got = image.value().read_file(path);
    if (!got || got.value() != want) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), got ? "content differs" : got.error().message.c_str());
      ++mismatches;
    }
  }
  auto report = image.value().check(true);
  if (!report || !report.value().problems.empty()) ++mismatches;
  std::printf("%s\n", mismatches ? "MISMATCH" : "every file reads back the same");
  return mismatches ? 1 : 0;
}
