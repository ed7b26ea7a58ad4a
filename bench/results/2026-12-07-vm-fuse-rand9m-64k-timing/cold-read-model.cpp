// writes 64 KiB-output pclusters (lz4hc 9) of the file to pc.bin (each at a 64 KiB slot), then
// random reads: pread the slot (cold or warm), decode partial to the read's end; times each part.
// `cold-read-model build` once, then drop the caches before each run. SZ=bytes read of each slot
// (the decode is meaningless below the stream's length), NORANDOM=1 leaves the descriptor's
// readahead as it is, MODE=map decodes from a mapping after WILLNEED. g++ -O2 -std=c++20 ... -llz4
#include <lz4.h>
#include <lz4hc.h>
#include <fcntl.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <random>
#include <vector>
#include <algorithm>
#include <fstream>
#include <sys/mman.h>
using namespace std;
using clk = chrono::steady_clock;
int main(int argc, char** argv) {
  if (argc > 1 && string(argv[1]) == "build") {
    const size_t N = 1000000000;
    vector<char> src(N);
    ifstream("/var/cache/erofs-kit-bench/full/file/linux-source-6.1.tar.cut").read(src.data(), N);
    vector<char> state(LZ4_sizeofStateHC());
    FILE* f = fopen("pc.bin", "wb"); FILE* m = fopen("pc.idx", "w");
    vector<char> c(65536);
    for (size_t at = 0; at < N;) {
      int sz = int(min<size_t>(N - at, 4u << 20));
      memset(c.data(), 0, 65536);
      int got = LZ4_compress_HC_destSize(state.data(), src.data() + at, c.data(), &sz, 65536, 9);
      fwrite(c.data(), 1, 65536, f); fprintf(m, "%d %d\n", got, sz); at += sz;
    }
    fclose(f); fclose(m); return 0;
  }
  vector<int> clen, dlen; vector<uint64_t> start{0};
  { FILE* m = fopen("pc.idx", "r"); int a, b; while (fscanf(m, "%d %d", &a, &b) == 2) { clen.push_back(a); dlen.push_back(b); start.push_back(start.back() + b); } }
  int fd = open("pc.bin", O_RDONLY);
  if (!getenv("NORANDOM")) posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
  mt19937_64 rng(1);
  vector<char> in(65536), out(4u << 20);
  memset(out.data(), 0, out.size());
  const char* mode = getenv("MODE") ? getenv("MODE") : "pread";
  const uint8_t* map = (const uint8_t*)mmap(nullptr, 65536ull * clen.size(), PROT_READ, MAP_SHARED, fd, 0);
  double tio = 0, tdec = 0; size_t bytes = 0; const int R = 2304;
  for (int i = 0; i < R; ++i) {
    uint64_t off = rng() % (start.back() - 4096);
    size_t k = upper_bound(start.begin(), start.end(), off) - start.begin() - 1;
    int target = int(min<uint64_t>(off - start[k] + 4096, dlen[k]));
    auto s = clk::now();
    const char* ip;
    static const int SZ = getenv("SZ") ? atoi(getenv("SZ")) : 65536; if (mode[0] == 'p') { pread(fd, in.data(), SZ, off_t(k) * 65536); ip = in.data(); }
    else { posix_fadvise(fd, off_t(k) * 65536, 65536, POSIX_FADV_WILLNEED); ip = (const char*)map + k * 65536; }
    auto e = clk::now(); tio += chrono::duration<double>(e - s).count();
    s = clk::now();
    int g = LZ4_decompress_safe_partial(ip, out.data(), clen[k], target, target);
    e = clk::now(); tdec += chrono::duration<double>(e - s).count(); bytes += g;
  }
  printf("%s: io %.1f us, decode %.1f us (%.0f B, %.2f GB/s)\n", mode, tio / R * 1e6, tdec / R * 1e6, double(bytes) / R, bytes / tdec / 1e9);
}
