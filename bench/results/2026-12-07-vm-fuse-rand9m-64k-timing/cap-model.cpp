// Extent cap model: the bench's 10^9-byte file as 64 KiB-output lz4hc 9 pclusters whose input is
// capped at CAP bytes; prints the data's size in 4 KiB blocks, the mean head a random 4 KiB read
// decodes, and the time of 2,304 such head decodes (caches hot). g++ -O2 -std=c++20 cap-model.cpp -llz4
#include <lz4.h>
#include <lz4hc.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <vector>
using namespace std;
int main(int argc, char** argv) {
  const size_t N = 1000000000;
  vector<char> src(N);
  ifstream("/var/cache/erofs-kit-bench/full/file/linux-source-6.1.tar.cut").read(src.data(), N);
  vector<char> state(LZ4_sizeofStateHC());
  for (int a = 1; a < argc; ++a) {
    const size_t cap = strtoull(argv[a], nullptr, 0);
    struct P { vector<char> c; int dlen; };
    vector<P> ek;
    uint64_t blocks = 0;
    for (size_t at = 0; at < N;) {
      P p; p.c.resize(65536); int sz = int(min<size_t>(N - at, cap));
      int got = LZ4_compress_HC_destSize(state.data(), src.data() + at, p.c.data(), &sz, 65536, 9);
      p.c.resize(got); p.dlen = sz; at += sz; blocks += (got + 4095) / 4096; ek.push_back(move(p));
    }
    double s1 = 0, s2 = 0; for (auto& p : ek) { s1 += p.dlen; s2 += double(p.dlen) * p.dlen; }
    vector<size_t> starts{0}; for (auto& p : ek) starts.push_back(starts.back() + p.dlen);
    mt19937_64 rng(1); vector<char> out(8u << 20);
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = chrono::steady_clock::now();
      for (int i = 0; i < 2304; ++i) {
        uint64_t off = rng() % (N - 4096);
        size_t k = upper_bound(starts.begin(), starts.end(), off) - starts.begin() - 1;
        int target = int(min<uint64_t>(off - starts[k] + 4096, ek[k].dlen));
        LZ4_decompress_safe_partial(ek[k].c.data(), out.data(), int(ek[k].c.size()), target, target);
      }
      best = min(best, chrono::duration<double>(chrono::steady_clock::now() - t0).count());
    }
    printf("cap %zu: %zu pclusters, data %llu bytes in 4 KiB blocks, mean head %.0f bytes, %.1f us a head decode\n",
           cap, ek.size(), (unsigned long long)blocks * 4096, s2 / (2 * s1) + 2048, best / 2304 * 1e6);
    fflush(stdout);
  }
}
