// Compressed layouts the reference images do not contain, assembled with the format encoders and
// the compress layer: HEAD2, PARTIAL_REF, INTERLACED plain pclusters at an unaligned start, and
// 48-bit encoded extents with 8- and 16-byte records, holes, unaligned data and a fragment tail.
#include <gtest/gtest.h>

#include "compress/codec.h"
#include "format/endian.h"
#include "format/zmap.h"
#include "tests/unit/reader_synthetic_image.h"

namespace erofs::test {
namespace {

using format::LclusterIndex;
using format::LclusterType;

std::vector<uint8_t> sample(size_t n, int seed) {
  std::string s;
  for (int i = 0; s.size() < n; ++i) s += "line " + std::to_string(i * seed) + " of sample " + std::to_string(seed) + "\n";
  return {s.begin(), s.begin() + n};
}

// The whole stream of `data` (which must fit) for `alg`.
std::vector<uint8_t> compress_all(compress::Algorithm alg, std::span<const uint8_t> data, uint32_t& lzma_dict) {
  compress::Spec spec;
  spec.algorithm = alg;
  auto enc = compress::make_encoder(spec, kBlock);
  std::vector<uint8_t> out(kBlock);
  const auto r = enc->fill(data, out);
  EXPECT_EQ(r.consumed, data.size());
  out.resize(r.produced);
  lzma_dict = enc->lzma_dict_size();
  return out;
}

// Puts `stream` at the end of block `block` (0PADDING).
void put_right_aligned(Builder& b, uint32_t block, const std::vector<uint8_t>& stream) {
  b.put_bytes(uint64_t(block + 1) * kBlock - stream.size(), stream);
}

// A compressed inode at kSpareNid: the inode, then `meta` at the map header position.
void put_compressed_inode(Builder& b, format::Layout layout, uint64_t size, const std::vector<uint8_t>& meta) {
  format::DiskInode d;
  d.layout = layout;
  d.mode = S_IFREG | 0644;
  d.size = size;
  b.put_inode(kSpareNid, d, {}, {});
  b.put_bytes(kSpareNid * 32 + 32, meta);  // 32-byte inode, no xattrs: already 8-byte aligned
}

std::vector<uint8_t> read_all(const reader::Image& image, uint64_t nid) {
  const auto ino = image.inode(nid);
  std::vector<uint8_t> out(ino.size);
  EXPECT_EQ(image.read(ino, 0, out), out.size());
  // Unaligned pieces must agree with the whole.
  for (uint64_t off = 0; off < out.size(); off += 777) {
    std::vector<uint8_t> piece(1500);
    const size_t n = image.read(ino, off, piece);
    EXPECT_TRUE(std::equal(piece.begin(), piece.begin() + n, out.begin() + off)) << off;
  }
  return out;
}

void enable_compression(Builder& b, uint16_t algorithms, uint32_t lzma_dict) {
  b.sb.feature_incompat |= format::kIncompatZeroPadding | format::kIncompatComprCfgs;
  b.sb.u1 = algorithms;
  format::ComprConfigs cfg;
  cfg.lz4_max_distance = 65535;
  cfg.lz4_max_pclusterblks = 1;
  cfg.lzma_dict_size = lzma_dict;
  b.put_bytes(format::kSuperblockOffset + b.sb.size(), cfg.encode(algorithms));
}

std::vector<uint8_t> full_indexes(const format::MapHeader& h, const std::vector<LclusterIndex>& entries) {
  std::vector<uint8_t> meta(format::kMapHeaderSize + format::kFullIndexReserved + entries.size() * 8, 0);
  h.encode(meta.data());
  for (size_t i = 0; i < entries.size(); ++i) entries[i].encode(meta.data() + 16 + 8 * i);
  return meta;
}

LclusterIndex head(LclusterType type, uint16_t clusterofs, uint32_t blkaddr, bool partial = false) {
  LclusterIndex e;
  e.type = type;
  e.clusterofs = clusterofs;
  e.blkaddr = blkaddr;
  e.partial_ref = partial;
  return e;
}

LclusterIndex nonhead(uint16_t back, uint16_t ahead) {
  LclusterIndex e;
  e.type = LclusterType::NonHead;
  e.delta[0] = back;
  e.delta[1] = ahead;
  return e;
}

TEST(SyntheticCompressed, Head2AndPartialReference) {
  Builder b;
  const auto a = sample(6000, 1), c = sample(5000, 2);
  uint32_t dict = 0, unused;
  const auto sa = compress_all(compress::Algorithm::Lz4, a, unused);
  const auto sc = compress_all(compress::Algorithm::Lzma, c, dict);
  enable_compression(b, 0b11, dict);
  const uint32_t ba = b.add_block(), bc = b.add_block();
  put_right_aligned(b, ba, sa);
  put_right_aligned(b, bc, sc);
  // [0, 5000): the first 5000 of the 6000 bytes lz4 stream (PARTIAL_REF); [5000, 10000): lzma as HEAD2.
  format::MapHeader h;
  h.algorithm_type = 0 | (1 << 4);
  put_compressed_inode(b, format::Layout::CompressedFull, 10000,
                       full_indexes(h, {head(LclusterType::Head1, 0, ba, true), head(LclusterType::Head2, 5000 - 4096, bc),
                                        nonhead(1, 1)}));
  const auto image = open_built(b);
  auto want = std::vector<uint8_t>(a.begin(), a.begin() + 5000);
  want.insert(want.end(), c.begin(), c.end());
  EXPECT_EQ(read_all(*image, kSpareNid), want);
}

TEST(SyntheticCompressed, InterlacedPlainAtAnUnalignedStart) {
  Builder b;
  const auto a = sample(5000, 3), p = sample(4096, 4);
  uint32_t unused;
  const auto sa = compress_all(compress::Algorithm::Lz4, a, unused);
  enable_compression(b, 0b1, 0);
  const uint32_t ba = b.add_block(), bp = b.add_block();
  put_right_aligned(b, ba, sa);
  // The plain extent starts at 5000 = 4096 + 904: its first 3192 bytes sit at block offset 904.
  std::vector<uint8_t> ring(kBlock);
  for (size_t k = 0; k < p.size(); ++k) ring[(904 + k) % kBlock] = p[k];
  b.put_bytes(uint64_t(bp) * kBlock, ring);
  format::MapHeader h;
  h.advise = format::kAdviseInterlacedPcluster;
  put_compressed_inode(b, format::Layout::CompressedFull, 9096,
                       full_indexes(h, {head(LclusterType::Head1, 0, ba), head(LclusterType::Plain, 904, bp), nonhead(1, 1)}));
  const auto image = open_built(b);
  auto want = a;
  want.insert(want.end(), p.begin(), p.end());
  EXPECT_EQ(read_all(*image, kSpareNid), want);
}

struct Record {
  uint32_t plen;
  uint64_t pstart;
  uint64_t lstart;
};

std::vector<uint8_t> extent_meta(uint16_t advise, uint32_t record_size, const std::vector<Record>& records) {
  format::MapHeader h;
  h.advise = uint16_t(advise | format::kAdviseCompacted2B | ((record_size == 8 ? 1 : 2) << 1));
  h.fragment_off = uint32_t(records.size());  // the extent count, for records above 8 bytes
  std::vector<uint8_t> meta(format::kMapHeaderSize, 0);
  h.encode(meta.data());
  // Records start at a multiple of their size; the inode's header sits at 9248 (8 mod 16).
  meta.resize((9248 + 8 + record_size - 1) / record_size * record_size - 9248, 0);
  for (const auto& r : records) {
    uint8_t rec[16] = {};
    format::put_le32(rec, r.plen);
    format::put_le32(rec + 4, uint32_t(r.pstart));
    format::put_le32(rec + 8, uint32_t(r.pstart >> 32));
    format::put_le32(rec + 12, uint32_t(r.lstart));
    meta.insert(meta.end(), rec, rec + record_size);
  }
  return meta;
}

TEST(SyntheticCompressed, EncodedExtentsWithHolesUnalignedDataAndAFragment) {
  Builder b;
  const auto plain = sample(4096, 5), packed_data = sample(1000, 6), c = sample(3500, 7);
  uint32_t unused;
  const auto sc = compress_all(compress::Algorithm::Lz4, c, unused);
  enable_compression(b, 0b1, 0);
  b.sb.feature_incompat |= format::kIncompatFragments | format::kIncompat48Bit;
  const uint32_t bp = b.add_block(), bc = b.add_block(), bf = b.add_block();
  b.put_bytes(uint64_t(bp) * kBlock, plain);
  const uint64_t stream_at = uint64_t(bc) * kBlock + 7;  // byte-granular placement
  b.put_bytes(stream_at, sc);
  b.put_bytes(uint64_t(bf) * kBlock, packed_data);
  format::DiskInode packed;  // a flat packed inode holding the fragment at offset 100
  packed.mode = S_IFREG | 0600;
  packed.size = packed_data.size();
  packed.u = bf;
  b.put_inode(kSpareNid + 8, packed, {}, {});
  b.sb.packed_nid = kSpareNid + 8;

  // [0,4096) plain, [4096,8192) hole, [8192,11192) first 3000 of the lz4 stream's 3500 bytes
  // (PARTIAL_REF), [11192,11692) fragment at packed offset 100.
  put_compressed_inode(b, format::Layout::CompressedFull, 11692,
                       extent_meta(format::kAdviseFragmentPcluster, 16,
                                   {{4096, uint64_t(bp) * kBlock, 0},
                                    {0, 0, 4096},
                                    {uint32_t(sc.size()) | (1u << 28) | format::kExtentPartialRef, stream_at, 8192},
                                    {100, 0, 11192}}));
  const auto image = open_built(b);
  auto want = plain;
  want.resize(8192, 0);
  want.insert(want.end(), c.begin(), c.begin() + 3000);
  want.insert(want.end(), packed_data.begin() + 100, packed_data.begin() + 600);
  EXPECT_EQ(read_all(*image, kSpareNid), want);
}

TEST(SyntheticCompressed, EncodedExtentsWithEightByteRecords) {
  Builder b;
  const auto plain = sample(4096, 8), c = sample(3000, 9);
  uint32_t unused;
  const auto sc = compress_all(compress::Algorithm::Lz4, c, unused);
  enable_compression(b, 0b1, 0);
  const uint32_t bp = b.add_block(), bc = b.add_block();
  b.put_bytes(uint64_t(bp) * kBlock, plain);
  b.put_bytes(uint64_t(bc) * kBlock, sc);
  // One record per 4 KiB lcluster: plain, hole, lz4.
  put_compressed_inode(b, format::Layout::CompressedFull, 2 * 4096 + 3000,
                       extent_meta(0, 8,
                                   {{4096, uint64_t(bp) * kBlock, 0},
                                    {0, 0, 0},
                                    {uint32_t(sc.size()) | (1u << 28), uint64_t(bc) * kBlock, 0}}));
  const auto image = open_built(b);
  auto want = plain;
  want.resize(8192, 0);
  want.insert(want.end(), c.begin(), c.end());
  EXPECT_EQ(read_all(*image, kSpareNid), want);
}

TEST(SyntheticCompressed, RejectsBadIndexes) {
  auto build = [](const std::vector<LclusterIndex>& entries, uint64_t size, uint16_t advise = 0) {
    Builder b;
    uint32_t unused;
    const auto sa = compress_all(compress::Algorithm::Lz4, sample(4096, 1), unused);
    enable_compression(b, 0b1, 0);
    const uint32_t ba = b.add_block();
    put_right_aligned(b, ba, sa);
    format::MapHeader h;
    h.advise = advise;
    put_compressed_inode(b, format::Layout::CompressedFull, size, full_indexes(h, entries));
    return open_built(b);
  };
  std::vector<uint8_t> buf(8192);
  auto read_fails = [&](const reader::Image& image) {
    EXPECT_THROW(image.read(image.inode(kSpareNid), 0, buf), reader::CorruptError);
  };
  read_fails(*build({nonhead(1, 1), nonhead(1, 1)}, 8192));                        // no HEAD to look back to
  read_fails(*build({head(LclusterType::Head1, 0, 3), nonhead(0, 1)}, 8192));      // lookback distance 0
  read_fails(*build({head(LclusterType::Head1, 5000, 3)}, 4096));                  // clusterofs beyond the lcluster
  read_fails(*build({head(LclusterType::Head1, 0, 300)}, 4096));                   // pcluster outside the image
  read_fails(*build({head(LclusterType::Head1, 0, 3), nonhead(0x800 | 2, 1)}, 8192));  // CBLKCNT without big pclusters
}

}  // namespace
}  // namespace erofs::test
