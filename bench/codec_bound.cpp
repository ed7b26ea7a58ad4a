// The lower bound for a compressed build: the same fixed-output pcluster compression mkfs does,
// on all cores, with the data already in memory and nothing written. bench/mkfs-compare reports
// mkfs's wall time against this.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "compress/codec.h"

namespace fs = std::filesystem;
using namespace erofs;

namespace {

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Segment {
  size_t begin, size;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time fixed-output pcluster compression of a file or tree held in memory, on all cores."};
  std::string spec_text = "lz4hc,9", path;
  uint32_t pcluster = 4096, block = 4096;
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  size_t segment = 4 << 20;
  app.add_option("-z", spec_text, "Algorithm and level, as for erofs mkfs");
  app.add_option("-C", pcluster, "Pcluster bytes");
  app.add_option("--workers", workers, "Threads (default: all cores)");
  app.add_option("PATH", path, "A file, or a directory whose regular files are read")->required();
  CLI11_PARSE(app, argc, argv);

  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (auto& e : fs::recursive_directory_iterator(path))
      if (fs::is_regular_file(e.symlink_status())) files.push_back(e.path());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  // Whole files, cut into segments as mkfs cuts them (a file's segments never span files).
  std::vector<uint8_t> data;
  std::vector<Segment> segments;
  for (auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const size_t start = data.size(), size = size_t(fs::file_size(f));
    data.resize(start + size);
    if (!in.read(reinterpret_cast<char*>(data.data() + start), std::streamsize(size))) {
      fmt::print(stderr, "codec_bound: cannot read {}\n", f.string());
      return 1;
    }
    for (size_t off = 0; off < size; off += segment) segments.push_back({start + off, std::min(segment, size - off)});
  }

  const compress::Spec spec = compress::parse_spec(spec_text);
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> out_bytes{0};
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      auto enc = compress::make_encoder(spec, pcluster);
      std::vector<uint8_t> out(pcluster);
      uint64_t produced = 0;
      for (size_t i; (i = next++) < segments.size();) {
        std::span<const uint8_t> in(data.data() + segments[i].begin, segments[i].size);
        enc->start_input();  // as the writer does per segment
        while (!in.empty()) {
          if (in.size() <= block) {  // mkfs stores it as it is without trying: it cannot save a block
            produced += block;
            break;
          }
          const compress::FillResult r = enc->fill(in, out);
          const uint64_t blocks = (r.produced + block - 1) / block;
          // Where compression does not save a block, mkfs stores a block as it is.
          const size_t used = r.consumed > 0 && blocks * block < r.consumed ? r.consumed : std::min<size_t>(block, in.size());
          produced += r.consumed > 0 && blocks * block < r.consumed ? blocks * block : block;
          in = in.subspan(used);
        }
      }
      out_bytes += produced;
    });
  for (auto& t : pool) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  fmt::print("{{\"algorithm\": \"{}\", \"pcluster\": {}, \"workers\": {}, \"files\": {}, \"bytes_in\": {}, "
             "\"bytes_out\": {}, \"wall_s\": {:.3f}, \"cpu_s\": {:.3f}}}\n",
             spec_text, pcluster, workers, files.size(), data.size(), out_bytes.load(), wall, cpu);
  return 0;
}
