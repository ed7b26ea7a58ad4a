// Throughput of the dm-verity tree builder: how many MB/s it hashes with 1..N threads, with the
// data already in memory (the cost `erofs mkfs --verity` adds once the image is written), or
// read from a file through the page cache (--file, as build_tree reads an image).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "verity/tree_builder.h"

using namespace erofs::verity;

int main(int argc, char** argv) {
  CLI::App app{"Time the dm-verity tree builder on data in memory or in a file."};
  std::string options, file;
  size_t mib = 400, span_mib = 8;
  unsigned max_threads = 2, runs = 3;
  app.add_option("--verity", options, "hash=,data-block=,hash-block= as for mkfs (default sha256, 4096, 4096)");
  app.add_option("--mib", mib, "MiB of data held in memory (default 400)");
  app.add_option("--span-mib", span_mib, "MiB handed to the builder per call (default 8)");
  app.add_option("--threads", max_threads, "Measure 1 to this many threads (default 2)");
  app.add_option("--runs", runs, "Runs per thread count; the best is reported (default 3)");
  app.add_option("--file", file, "Hash this file instead (read with pread, whole blocks)");
  CLI11_PARSE(app, argc, argv);

  // The process's CPU time, all threads: with wall time it shows whether the threads shared the work.
  const auto cpu_seconds = [] { return double(std::clock()) / CLOCKS_PER_SEC; };
  const Params params = parse_options(options);
  std::vector<uint8_t> data;
  int fd = -1;
  uint64_t bytes = uint64_t(mib) << 20;
  if (!file.empty()) {
    fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      fmt::print(stderr, "verity_throughput: cannot open {}\n", file);
      return 1;
    }
    bytes = uint64_t(::lseek(fd, 0, SEEK_END));
  } else {
    data.resize(bytes);
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 2654435761u >> 13);
  }
  const uint64_t blocks = bytes / params.data_block_size;
  const ReadFn read = [&](uint64_t offset, std::span<uint8_t> out) {
    if (::pread(fd, out.data(), out.size(), off_t(offset)) != ssize_t(out.size())) throw Error("short read");
  };
  fmt::print("{} MB, {} blocks of {} bytes, {}, hash blocks of {} bytes\n", blocks * params.data_block_size / 1e6,
             blocks, params.data_block_size, algorithm_name(params.algorithm), params.hash_block_size);
  for (unsigned threads = 1; threads <= max_threads; ++threads) {
    double best = 1e30, best_cpu = 0;
    for (unsigned run = 0; run < runs; ++run) {
      const double cpu0 = cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      Tree tree;
      if (fd >= 0) {
        tree = build_tree(params, blocks, read, threads);
      } else {
        TreeBuilder builder(params, blocks, threads);
        const size_t span = span_mib << 20;
        for (size_t off = 0; off < blocks * params.data_block_size; off += span)
          builder.add(std::span(data).subspan(off, std::min(span, blocks * params.data_block_size - off)));
        tree = builder.finish();
      }
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (wall < best) best = wall, best_cpu = cpu_seconds() - cpu0;
      if (run == 0 && threads == 1) fmt::print("root hash {}\n", to_hex(tree.root_hash));
    }
    fmt::print("threads {}: {:.3f} s ({:.3f} s CPU), {:.0f} MB/s\n", threads, best, best_cpu,
               blocks * params.data_block_size / best / 1e6);
  }
  if (fd >= 0) ::close(fd);
  return 0;
}
