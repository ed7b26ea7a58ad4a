// Test support for the dm-verity layer: deterministic data, the hash area veritysetup writes
// (superblock, then tree), and veritysetup itself run as the oracle.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format/verity_superblock.h"
#include "verity/layout.h"
#include "verity/tree_builder.h"

namespace erofs::test {

// A salt for tests that need one but not veritysetup's: short, with a zero byte in it.
inline const std::vector<uint8_t> kSalt = {0x5a, 0x17, 0x00, 0xff, 0x42};

// Bytes that differ from block to block (splitmix64), the same for the same seed.
inline std::vector<uint8_t> pseudo_random_bytes(size_t size, uint64_t seed) {
  std::vector<uint8_t> out(size);
  for (size_t i = 0; i < size; i += 8) {
    uint64_t z = seed += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (size_t j = i; j < std::min(size, i + 8); ++j, z >>= 8) out[j] = uint8_t(z);
  }
  return out;
}

inline std::string uuid_text(const std::array<uint8_t, 16>& u) {
  return fmt::format("{:02x}-{:02x}-{:02x}-{:02x}-{:02x}", fmt::join(u.begin(), u.begin() + 4, ""),
                     fmt::join(u.begin() + 4, u.begin() + 6, ""), fmt::join(u.begin() + 6, u.begin() + 8, ""),
                     fmt::join(u.begin() + 8, u.begin() + 10, ""), fmt::join(u.begin() + 10, u.end(), ""));
}

// The hash area as veritysetup lays it out from its superblock on: the superblock in a hash
// block of its own, then the tree.
inline std::vector<uint8_t> hash_area(const verity::Tree& tree, const std::array<uint8_t, 16>& uuid) {
  const uint64_t tree_start = verity::tree_offset(0, tree.layout.hash_block_size);
  std::vector<uint8_t> out(tree_start);
  verity::make_superblock(tree.params, tree.layout.data_blocks, uuid).encode(out);
  out.insert(out.end(), tree.bytes.begin(), tree.bytes.end());
  return out;
}

inline verity::Tree tree_of(const verity::Params& params, std::span<const uint8_t> data, unsigned threads = 1) {
  verity::TreeBuilder builder(params, data.size() / params.data_block_size, threads);
  builder.add(data);
  return builder.finish();
}

struct CommandResult {
  int status = -1;  // the exit code, or -1 when it did not exit normally
  std::string output;  // stdout and stderr
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
  return r;
}

// The veritysetup command, or "" when it is not installed (/usr/sbin is not on every PATH).
inline std::string veritysetup_command() {
  for (const char* candidate : {"veritysetup", "/usr/sbin/veritysetup", "/sbin/veritysetup"})
    if (run_command(std::string(candidate) + " --version").status == 0) return candidate;
  return "";
}

}  // namespace erofs::test
