// 48-bit encoded extents with 4-byte records, which hold only lengths: the start of record i's
// pcluster is the file's base plus the lengths before it. Reading such a file must stay linear in
// its number of lclusters (counted in index records read, not in time): the reader keeps sums
// instead of adding up every earlier record again for each extent it maps.
#include <thread>

#include <gtest/gtest.h>

#include "compress/codec.h"
#include "format/endian.h"
#include "format/zmap.h"
#include "reader/compressed_map.h"
#include "tests/unit/reader_synthetic_image.h"

namespace erofs::test {
namespace {

using reader::CompressedMap;
using reader::ExtentStarts;

constexpr uint64_t kLclusters = 8192;  // 4 KiB each: 32 MiB of file, 32 KiB of records

bool is_hole(uint64_t i) { return i % 5 == 4; }
char letter(uint64_t i) { return char('a' + i % 26); }

// A file at kSpareNid of kLclusters lclusters, one 4-byte record each: every fifth a hole, the
// others an lz4 pcluster decoding to 4 KiB of one letter, stored back to back from the base.
std::unique_ptr<reader::Image> build_image() {
  Builder b;
  b.sb.feature_incompat |= format::kIncompatZeroPadding | format::kIncompatComprCfgs | format::kIncompat48Bit;
  b.sb.u1 = 0b1;  // lz4
  format::ComprConfigs cfg;
  cfg.lz4_max_distance = 65535;
  cfg.lz4_max_pclusterblks = 1;
  b.put_bytes(format::kSuperblockOffset + b.sb.size(), cfg.encode(0b1));

  std::vector<std::vector<uint8_t>> streams;
  for (int c = 0; c < 26; ++c) {
    compress::Spec spec;
    spec.algorithm = compress::Algorithm::Lz4;
    const auto enc = compress::make_encoder(spec, kBlock);
    const std::vector<uint8_t> in(kBlock, uint8_t('a' + c));
    std::vector<uint8_t> out(kBlock);
    const auto r = enc->fill(in, out);
    EXPECT_EQ(r.consumed, in.size());
    out.resize(r.produced);
    streams.push_back(out);
  }

  // The map header right after the 32-byte inode (byte 9248), the 8-byte base and the records
  // from 9256 (a multiple of 4) on: blocks 2 to 10.
  const uint64_t header = kSpareNid * 32 + 32, base_at = header + format::kMapHeaderSize, records = base_at + 8;
  while (b.bytes.size() < records + kLclusters * 4) b.add_block();
  const uint64_t data = uint64_t(b.add_block()) * kBlock;
  std::vector<uint8_t> stored;
  std::vector<uint8_t> meta(records + kLclusters * 4 - header, 0);
  format::MapHeader h;
  h.advise = format::kAdviseCompacted2B;  // EXTENTS, record size 4 << 0
  h.encode(meta.data());
  format::put_le64(meta.data() + (base_at - header), data);
  for (uint64_t i = 0; i < kLclusters; ++i) {
    uint32_t plen = 0;
    if (!is_hole(i)) {
      const auto& s = streams[size_t(i % 26)];
      stored.insert(stored.end(), s.begin(), s.end());
      plen = uint32_t(s.size()) | (1u << format::kExtentFmtShift);  // algorithm 0 (lz4) + 1
    }
    format::put_le32(meta.data() + (records - header) + i * 4, plen);
  }
  while (b.bytes.size() < data + stored.size()) b.add_block();
  b.put_bytes(data, stored);

  format::DiskInode d;
  d.layout = format::Layout::CompressedFull;
  d.mode = S_IFREG | 0644;
  d.size = kLclusters * kBlock;
  b.put_inode(kSpareNid, d, {}, {});
  b.put_bytes(header, meta);
  return open_built(b);
}

bool block_is_right(const std::vector<uint8_t>& got, uint64_t i) {
  const uint8_t want = is_hole(i) ? 0 : uint8_t(letter(i));
  return std::all_of(got.begin(), got.end(), [&](uint8_t c) { return c == want; });
}

TEST(ExtentRecords4B, ReadsRightInAnyOrder) {
  const auto image = build_image();
  const auto ino = image->inode(kSpareNid);
  std::vector<uint8_t> all(ino.size);
  ASSERT_EQ(image->read(ino, 0, all), all.size());
  for (uint64_t i = 0; i < kLclusters; ++i) {
    const std::vector<uint8_t> got(all.begin() + long(i * kBlock), all.begin() + long((i + 1) * kBlock));
    ASSERT_TRUE(block_is_right(got, i)) << "lcluster " << i;
  }
  // Backwards, one block at a time, and a read across lclusters at an odd offset: every lookup
  // after the first uses the sums kept then.
  std::vector<uint8_t> block(kBlock);
  for (uint64_t i = kLclusters; i-- > 0;) {
    ASSERT_EQ(image->read(ino, i * kBlock, block), block.size());
    ASSERT_TRUE(block_is_right(block, i)) << "lcluster " << i;
  }
  std::vector<uint8_t> piece(3 * kBlock);
  const uint64_t at = 5000 * kBlock + 123;
  ASSERT_EQ(image->read(ino, at, piece), piece.size());
  EXPECT_TRUE(std::equal(piece.begin(), piece.end(), all.begin() + long(at)));
  const auto e = image->extent_at(ino, 7777 * kBlock + 5);
  EXPECT_EQ(e.offset, 7777 * kBlock);
  EXPECT_EQ(e.length, kBlock);
}

TEST(ExtentRecords4B, ReadingBlockByBlockReadsEachRecordABoundedNumberOfTimes) {
  const auto image = build_image();
  const auto ino = image->inode(kSpareNid);
  constexpr uint64_t S = ExtentStarts::kStride;
  static_assert(kLclusters > 8 * (S + 2), "too few lclusters to tell linear from quadratic");

  // The last extent first: every record before it is added up once, then kept.
  uint64_t before = CompressedMap::extent_records_read();
  image->extent_at(ino, ino.size - 1);
  EXPECT_LE(CompressedMap::extent_records_read() - before, kLclusters + S);
  before = CompressedMap::extent_records_read();
  image->extent_at(ino, ino.size - 1);
  EXPECT_LE(CompressedMap::extent_records_read() - before, S + 1);

  // One request per block, as fsck and the FUSE driver read: fewer than S + 2 records per
  // request (adding up every earlier record each time would read kLclusters^2 / 2).
  before = CompressedMap::extent_records_read();
  std::vector<uint8_t> block(kBlock);
  for (uint64_t i = 0; i < kLclusters; ++i) {
    ASSERT_EQ(image->read(ino, i * kBlock, block), block.size());
    ASSERT_TRUE(block_is_right(block, i)) << "lcluster " << i;
  }
  const uint64_t n = CompressedMap::extent_records_read() - before;
  EXPECT_LE(n, kLclusters * (S + 2)) << "records read for " << kLclusters << " block reads";
  EXPECT_GE(n, kLclusters);
}

// The records span nine metadata blocks: the first mapping asks for all of them at once (random
// readers of a large file would otherwise wait for a block of records each), and only the first.
TEST(ExtentRecords4B, TheFirstMappingAsksForEveryRecordOnce) {
  const auto image = build_image();
  const auto ino = image->inode(kSpareNid);
  EXPECT_EQ(image->image_hints(), 0u);
  image->extent_at(ino, 5000 * kBlock);
  EXPECT_EQ(image->image_hints(), 1u);
  std::vector<uint8_t> block(kBlock);
  for (uint64_t i : {7u, 3000u, 8000u}) ASSERT_EQ(image->read(ino, i * kBlock, block), block.size());
  EXPECT_EQ(image->image_hints(), 1u);
}

// Threads reading one file at once build and use the kept sums together (also run under
// ThreadSanitizer by scripts/test).
TEST(ExtentRecords4B, ConcurrentReadersShareTheSums) {
  const auto image = build_image();
  const auto ino = image->inode(kSpareNid);
  std::vector<std::thread> threads;
  std::vector<uint64_t> wrong(4, 0);
  for (uint64_t t = 0; t < wrong.size(); ++t)
    threads.emplace_back([&, t] {
      std::vector<uint8_t> block(kBlock);
      for (uint64_t k = 0; k < kLclusters; k += 3) {
        const uint64_t i = t % 2 ? kLclusters - 1 - k : (k * 7 + t * 1001) % kLclusters;
        if (image->read(ino, i * kBlock, block) != block.size() || !block_is_right(block, i)) ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  for (uint64_t t = 0; t < wrong.size(); ++t) EXPECT_EQ(wrong[t], 0u) << "thread " << t;
}

}  // namespace
}  // namespace erofs::test
