#pragma once
#include <atomic>
#include <chrono>
#include <cstdio>
namespace prof {
inline std::atomic<uint64_t> ns[10], cnt[10];
inline uint64_t now() { return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
struct T { int i; uint64_t s; T(int i) : i(i), s(now()) {} ~T() { ns[i] += now() - s; cnt[i]++; } };
inline void dump() { FILE* f = fopen("/tmp/prof/out.txt", "a"); for (int i = 0; i < 10; ++i) if (cnt[i]) fprintf(f, "%d: n %lu total %.1f ms avg %.2f us\n", i, (unsigned long)cnt[i], ns[i] / 1e6, double(ns[i]) / cnt[i] / 1e3); fprintf(f, "--\n"); fclose(f); }
}
