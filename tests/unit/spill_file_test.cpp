#include "writer/spill_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace erofs::writer {
namespace {

std::vector<uint8_t> bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(seed + i * 31 + i / 251);
  return v;
}

std::vector<uint8_t> read_back(const SpillFile& f, const SpillRef& r) {
  std::vector<uint8_t> out(r.size);
  f.read(r, out.data());
  return out;
}

std::string beside() {
  return (std::filesystem::current_path() / (std::string("spill.") + testing::UnitTest::GetInstance()->current_test_info()->name())).string();
}

// Small pieces wait in the buffer, a piece of a megabyte or more goes straight to the file; every
// piece reads back the same from either place, and through fd() once everything is written.
TEST(SpillFile, PiecesReadBackFromTheBufferAndFromTheFile) {
  SpillFile f(beside());
  std::vector<std::pair<SpillRef, std::vector<uint8_t>>> pieces;
  uint8_t seed = 1;
  for (size_t n : {size_t(100), size_t(1), size_t(4096), size_t(700000), size_t(500000), size_t(1 << 20),
                   size_t(3 << 20), size_t(7), size_t(0), size_t(60000)}) {
    auto b = bytes(n, seed++);
    const uint64_t before = f.size();
    SpillRef r = f.append(b);
    EXPECT_EQ(r.offset, before);
    EXPECT_EQ(r.size, n);
    EXPECT_EQ(f.size(), before + n);
    EXPECT_EQ(read_back(f, r), b) << "piece of " << n << " bytes, just appended";
    pieces.emplace_back(r, std::move(b));
  }
  for (const auto& [r, b] : pieces) EXPECT_EQ(read_back(f, r), b) << "piece at " << r.offset;
  const int fd = f.fd();
  ASSERT_EQ(uint64_t(::lseek(fd, 0, SEEK_END)), f.size());
  for (const auto& [r, b] : pieces) {
    std::vector<uint8_t> out(r.size);
    ASSERT_EQ(::pread(fd, out.data(), out.size(), off_t(r.offset)), ssize_t(out.size()));
    EXPECT_EQ(out, b) << "piece at " << r.offset << " through fd()";
  }
}

}  // namespace
}  // namespace erofs::writer
