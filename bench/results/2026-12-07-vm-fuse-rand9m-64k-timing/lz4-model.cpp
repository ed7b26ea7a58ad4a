// The rand9m decodes outside the daemons: the bench's 10^9-byte file compressed with lz4hc 9 as
// 64 KiB-output pclusters and as 128 KiB blocks; 2,304 reads at random places, each decoding its
// pcluster up to the read's end and its block whole, caches hot. NB=bytes of the file to use,
// SLEEP=us before each decode, POOL=n output buffers taken in turn, DUMP=1 writes the pclusters'
// decoded sizes to sizes.txt (for sim-heads.py) and stops. g++ -O2 -std=c++20 lz4-model.cpp -llz4
#include <lz4.h>
#include <lz4hc.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include <fstream>
#include <thread>
using namespace std;
using clk = chrono::steady_clock;
int main() {
  const size_t N = getenv("NB") ? atol(getenv("NB")) : 1000000000;
  vector<char> src(N);
  ifstream("/var/cache/erofs-kit-bench/full/file/linux-source-6.1.tar.cut").read(src.data(), N);
  vector<char> state(LZ4_sizeofStateHC());
  // ours: fixed 64 KiB output pclusters
  struct P { vector<char> c; int dlen; };
  vector<P> ek, sq;
  for (size_t at = 0; at < N;) {
    P p; p.c.resize(65536); int sz = int(min<size_t>(N - at, 4u << 20));
    int got = LZ4_compress_HC_destSize(state.data(), src.data() + at, p.c.data(), &sz, 65536, 9);
    p.c.resize(got); p.dlen = sz; at += sz; ek.push_back(move(p));
  }
  for (size_t at = 0; at < N; at += 131072) {
    P p; p.c.resize(LZ4_compressBound(131072));
    int got = LZ4_compress_HC(src.data() + at, p.c.data(), 131072, int(p.c.size()), 9);
    p.c.resize(got); p.dlen = 131072; sq.push_back(move(p));
  }
  double ekavg = 0; for (auto& p : ek) ekavg += p.dlen; ekavg /= ek.size();
  if (getenv("DUMP")) { FILE* f = fopen("sizes.txt", "w"); for (auto& p : ek) fprintf(f, "%d\n", p.dlen); fclose(f); return 0; }
  printf("ek %zu pclusters avg %.0f out; sq %zu blocks\n", ek.size(), ekavg, sq.size());
  mt19937_64 rng(1);
  vector<char> out(4u << 20), out2(4u << 20);
  int POOL = getenv("POOL") ? atoi(getenv("POOL")) : 0; vector<vector<char>> pool(POOL ? POOL : 1, vector<char>(4u<<20, 1)); int pi = 0;
  const int R = 2304;
  for (int rep = 0; rep < 3; ++rep) {
    double t_ek = 0, t_ekz = 0, t_sq = 0, t_ekfull = 0; size_t bytes_ek = 0, bytes_sq = 0;
    for (int i = 0; i < R; ++i) {
      uint64_t off = rng() % (N - 4096);
      // ek: find pcluster
      size_t at = 0, k = 0; while (at + ek[k].dlen <= off) at += ek[k++].dlen;
      int target = int(min<uint64_t>(off - at + 4096, ek[k].dlen));
      if (getenv("SLEEP")) this_thread::sleep_for(chrono::microseconds(atoi(getenv("SLEEP"))));
      auto s = clk::now();
      char* o = POOL ? pool[pi++ % POOL].data() : out.data();
      int g = LZ4_decompress_safe_partial(ek[k].c.data(), o, int(ek[k].c.size()), target, target);
      auto e = clk::now(); t_ek += chrono::duration<double>(e - s).count(); bytes_ek += g;
      s = clk::now();
      memset(out2.data(), 0, target);
      g = LZ4_decompress_safe_partial(ek[k].c.data(), out2.data(), int(ek[k].c.size()), target, target);
      e = clk::now(); t_ekz += chrono::duration<double>(e - s).count();
      s = clk::now();
      g = LZ4_decompress_safe(ek[k].c.data(), out.data(), int(ek[k].c.size()), ek[k].dlen);
      e = clk::now(); t_ekfull += chrono::duration<double>(e - s).count();
      size_t b = off / 131072;
      if (getenv("SLEEP")) this_thread::sleep_for(chrono::microseconds(atoi(getenv("SLEEP"))));
      s = clk::now();
      g = LZ4_decompress_safe(sq[b].c.data(), out.data(), int(sq[b].c.size()), 131072);
      e = clk::now(); t_sq += chrono::duration<double>(e - s).count(); bytes_sq += g;
    }
    printf("per read: ek partial %.1f us (%.0f B, %.2f GB/s), +memset %.1f us, ek full %.1f us; sq %.1f us (%.2f GB/s)\n",
      t_ek / R * 1e6, double(bytes_ek) / R, bytes_ek / t_ek / 1e9, t_ekz / R * 1e6, t_ekfull / R * 1e6, t_sq / R * 1e6, bytes_sq / t_sq / 1e9);
  }
}
