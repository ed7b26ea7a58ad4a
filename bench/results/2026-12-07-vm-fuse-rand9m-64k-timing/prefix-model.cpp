// How much of a pcluster a head decode needs, over the pclusters cold-read-model.cpp wrote
// (pc.bin, pc.idx): for 2,304 random reads, whether a prefix of the stream's share of the
// pcluster plus a margin (and a slack, in bytes) decodes the head, the bytes such a prefix reads,
// and the least number of whole blocks that would do. g++ -O2 -std=c++20 prefix-model.cpp -llz4
#include <lz4.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <algorithm>
#include <fstream>
using namespace std;
int main() {
  vector<int> clen, dlen; vector<uint64_t> start{0};
  { FILE* m = fopen("pc.idx", "r"); int a, b; while (fscanf(m, "%d %d", &a, &b) == 2) { clen.push_back(a); dlen.push_back(b); start.push_back(start.back() + b); } }
  vector<char> all(65536ull * clen.size());
  ifstream("pc.bin").read(all.data(), all.size());
  vector<char> out(4u << 20);
  mt19937_64 rng(1);
  const int R = 2304;
  for (double margin : {0.0, 1.0/16, 1.0/8, 1.0/4}) for (int slack : {0, 4096}) {
    int ok = 0; double bytes = 0, need = 0;
    mt19937_64 rng(1);
    for (int i = 0; i < R; ++i) {
      uint64_t off = rng() % (start.back() - 4096);
      size_t k = upper_bound(start.begin(), start.end(), off) - start.begin() - 1;
      int T = int(min<uint64_t>(off - start[k] + 4096, dlen[k]));
      // stream at the start here (mkfs pads at the front; our test file has it at the front, length clen)
      double est = double(clen[k]) * T / dlen[k] * (1 + margin) + slack;
      int e = min<int>(clen[k], int((uint64_t(est) + 4095) / 4096 * 4096));
      int g = LZ4_decompress_safe_partial(all.data() + k * 65536, out.data(), e, T, T);
      ok += g == T; bytes += e;
      // the least prefix that works (blocks)
      int lo = 1, hi = (clen[k] + 4095) / 4096;
      while (lo < hi) { int mid = (lo + hi) / 2; int gg = LZ4_decompress_safe_partial(all.data() + k * 65536, out.data(), min(clen[k], mid * 4096), T, T); if (gg == T) hi = mid; else lo = mid + 1; }
      need += min(clen[k], lo * 4096);
    }
    printf("margin %.3f slack %d: ok %d/%d, read %.1f KiB avg, least %.1f KiB\n", margin, slack, ok, R, bytes / R / 1024, need / R / 1024);
  }
}
