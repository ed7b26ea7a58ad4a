// Encoding and decoding of every on-disk structure, and CRC32C known answers.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "format/constants.h"
#include "format/crc32c.h"
#include "format/dirent.h"
#include "format/endian.h"
#include "format/inode.h"
#include "format/superblock.h"
#include "format/xattr.h"
#include "format/zmap.h"

using namespace erofs::format;

TEST(Crc32c, KnownAnswers) {
  const char* digits = "123456789";
  EXPECT_EQ(~crc32c_update(~0u, digits, 9), 0xE3069283u);  // the standard CRC-32C check value
  EXPECT_EQ(crc32c_update(~0u, digits, 9), 0x1CF96D7Cu);   // EROFS: no final inversion
  std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(~crc32c_update(~0u, zeros.data(), 32), 0x8A9136AAu);  // RFC 3720 B.4
  std::vector<uint8_t> ones(32, 0xFF);
  EXPECT_EQ(~crc32c_update(~0u, ones.data(), 32), 0x62A8AB43u);
  std::vector<uint8_t> inc(32);
  for (int i = 0; i < 32; ++i) inc[i] = uint8_t(i);
  EXPECT_EQ(~crc32c_update(~0u, inc.data(), 32), 0x46DD794Eu);
  // Split updates equal one update (the slicing path and the byte path agree).
  uint32_t a = crc32c_update(~0u, inc.data(), 13);
  EXPECT_EQ(crc32c_update(a, inc.data() + 13, 19), crc32c_update(~0u, inc.data(), 32));
}

TEST(Endian, RoundTrip) {
  uint8_t b[8];
  put_le64(b, 0x0102030405060708ull);
  EXPECT_EQ(b[0], 0x08);
  EXPECT_EQ(b[7], 0x01);
  EXPECT_EQ(get_le64(b), 0x0102030405060708ull);
  put_le16(b, 0xBEEF);
  EXPECT_EQ(get_le16(b), 0xBEEF);
  EXPECT_EQ(b[0], 0xEF);
}

TEST(Superblock, EncodeDecodeAllFields) {
  Superblock sb;
  sb.magic = kMagic;
  sb.checksum = 0x11223344;
  sb.feature_compat = kCompatSbChksum | kCompatMtime;
  sb.blkszbits = 12;
  sb.sb_extslots = 1;
  sb.root_nid_2b = 37;
  sb.inos = 53;
  sb.epoch = -5;
  sb.fixed_nsec = 7;
  sb.blocks_lo = 28;
  sb.meta_blkaddr = 3;
  sb.xattr_blkaddr = 4;
  sb.uuid = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  sb.volume_name = {'l', 'a', 'b', 'e', 'l'};
  sb.feature_incompat = kIncompatComprCfgs | kIncompatZeroPadding;
  sb.u1 = 3;
  sb.extra_devices = 1;
  sb.devt_slotoff = 9;
  sb.xattr_prefix_count = 2;
  sb.xattr_prefix_start = 100;
  sb.packed_nid = 99;
  sb.build_time = 12345;
  sb.root_nid_8b = 0;
  sb.metabox_nid = 77;
  std::vector<uint8_t> buf(sb.size());
  sb.encode(buf);
  EXPECT_EQ(get_le32(buf.data()), kMagic);
  EXPECT_EQ(buf[12], 12);
  EXPECT_EQ(get_le16(buf.data() + 14), 37);
  EXPECT_EQ(get_le64(buf.data() + 128), 77u);
  Superblock d = Superblock::decode(buf);
  EXPECT_EQ(d.checksum, sb.checksum);
  EXPECT_EQ(d.epoch, -5);
  EXPECT_EQ(d.inos, 53u);
  EXPECT_EQ(d.uuid, sb.uuid);
  EXPECT_EQ(d.label(), "label");
  EXPECT_EQ(d.root_nid(), 37u);
  EXPECT_EQ(d.blocks(), 28u);
  EXPECT_EQ(d.packed_nid, 99u);
  EXPECT_EQ(d.metabox_nid, 77u);
  EXPECT_EQ(d.xattr_prefix_start, 100u);
  EXPECT_EQ(d.build_time, 12345u);
}

TEST(Superblock, FortyEightBitRootAndBlocks) {
  Superblock sb;
  sb.feature_incompat = kIncompat48Bit;
  sb.root_nid_8b = 0x123456789ull;
  sb.root_nid_2b = 0x0002;  // blocks_hi
  sb.blocks_lo = 5;
  EXPECT_EQ(sb.root_nid(), 0x123456789ull);
  EXPECT_EQ(sb.blocks(), (2ull << 32) | 5);
}

TEST(Superblock, ChecksumOfReferenceImage) {
  std::ifstream in(std::string(EROFS_COMPAT_DIR) + "/images/plain.img", std::ios::binary);
  if (!in) GTEST_SKIP() << "SKIPPED: reference images not found";
  std::vector<uint8_t> img((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(img.size(), 4096u);
  std::span<const uint8_t> region(img.data() + 1024, checksum_length(4096));
  Superblock sb = Superblock::decode(region);
  EXPECT_EQ(sb.magic, kMagic);
  EXPECT_EQ(compute_checksum(region), sb.checksum);
  EXPECT_EQ(checksum_length(512), 512u);
  EXPECT_EQ(checksum_length(1024), 1024u);
  EXPECT_EQ(checksum_length(4096), 3072u);
}

TEST(Superblock, FeatureNames) {
  auto names = incompat_feature_names(kIncompatZtailpacking | 0x800);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "ztailpacking");
  EXPECT_EQ(names[1], "unknown(0x800)");
}

TEST(Inode, CompactRoundTrip) {
  DiskInode i;
  i.layout = Layout::FlatInline;
  i.xattr_icount = 3;
  i.mode = 0100644;
  i.nb = 2;
  i.size = 4097;
  i.u = 0xFFFFFFFF;
  i.ino = 9;
  i.uid = 1000;
  i.gid = 65535;
  uint8_t b[32];
  i.encode({b, 32});
  EXPECT_EQ(get_le16(b), 0x0004);  // compact, layout 2
  DiskInode d = DiskInode::decode({b, 32});
  EXPECT_FALSE(d.extended);
  EXPECT_EQ(d.layout, Layout::FlatInline);
  EXPECT_EQ(d.size, 4097u);
  EXPECT_EQ(d.nlink, 2u);
  EXPECT_EQ(d.uid, 1000u);
  EXPECT_EQ(d.gid, 65535u);
  EXPECT_EQ(d.u, 0xFFFFFFFFu);
  EXPECT_EQ(xattr_ibody_size(3), 20u);
  EXPECT_EQ(xattr_ibody_size(0), 0u);
}

TEST(Inode, ExtendedRoundTrip) {
  DiskInode i;
  i.extended = true;
  i.layout = Layout::ChunkBased;
  i.mode = 040755;
  i.size = 5ull << 32;
  i.uid = 100000;
  i.gid = 200000;
  i.mtime = -1000000000;
  i.mtime_nsec = 999999999;
  i.nlink = 70000;
  i.flag = true;
  uint8_t b[64];
  i.encode({b, 64});
  EXPECT_EQ(get_le16(b), 0x0001 | (4 << 1) | 0x10);
  DiskInode d = DiskInode::decode({b, 64});
  EXPECT_TRUE(d.extended);
  EXPECT_TRUE(d.flag);
  EXPECT_EQ(d.size, 5ull << 32);
  EXPECT_EQ(d.uid, 100000u);
  EXPECT_EQ(d.mtime, -1000000000);
  EXPECT_EQ(d.mtime_nsec, 999999999u);
  EXPECT_EQ(d.nlink, 70000u);
}

TEST(Inode, RdevEncoding) {
  EXPECT_EQ(encode_rdev(4, 300), 0x0010042Cu);  // the format notes' example
  uint32_t ma, mi;
  decode_rdev(encode_rdev(259, 300000), ma, mi);
  EXPECT_EQ(ma, 259u);
  EXPECT_EQ(mi, 300000u);
}

TEST(Dirent, EncodeDecodeAndSizing) {
  uint8_t b[12];
  Dirent{0x1122334455ull, 144, uint8_t(FileType::Symlink)}.encode(b);
  Dirent d = Dirent::decode(b);
  EXPECT_EQ(d.nid, 0x1122334455ull);
  EXPECT_EQ(d.nameoff, 144);
  EXPECT_EQ(d.file_type, 7);
  EXPECT_EQ(b[11], 0);
  DirSizer s(4096);
  s.add(1);
  s.add(2);
  EXPECT_EQ(s.size(), 27u);
  DirSizer big(512);
  for (int i = 0; i < 3; ++i) big.add(200);  // 212 bytes each: two fit in a block, the third starts a new one
  EXPECT_EQ(big.size(), 512u + 212u);
  EXPECT_EQ(file_type_of_mode(0020644), FileType::CharDevice);
  EXPECT_EQ(file_type_of_mode(0140755), FileType::Socket);
}

TEST(Xattr, HeadersAndNames) {
  uint8_t b[12];
  XattrIbodyHeader{0xF7FFFFFF, 2}.encode(b);
  auto h = XattrIbodyHeader::decode(b);
  EXPECT_EQ(h.name_filter, 0xF7FFFFFFu);
  EXPECT_EQ(h.shared_count, 2);
  XattrEntryHeader e{5, kXattrIndexUser, 10};
  e.encode(b);
  auto d = XattrEntryHeader::decode(b);
  EXPECT_EQ(d.name_len, 5);
  EXPECT_EQ(d.value_size, 10);
  EXPECT_EQ(d.entry_size(), 20u);  // 4 + 5 + 10 = 19 -> 20
  auto s = split_xattr_name("user.mime");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, kXattrIndexUser);
  EXPECT_EQ(s->suffix, "mime");
  s = split_xattr_name("system.posix_acl_default");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, kXattrIndexPosixAclDefault);
  EXPECT_TRUE(s->suffix.empty());
  EXPECT_FALSE(split_xattr_name("user."));
  EXPECT_FALSE(split_xattr_name("system.other"));
  EXPECT_EQ(*xattr_prefix(kXattrIndexSecurity), "security.");
  EXPECT_FALSE(xattr_prefix(9));
}

TEST(Zmap, MapHeaderAndFullIndex) {
  uint8_t b[8];
  MapHeader h;
  h.advise = kAdviseCompacted2B | kAdviseBigPcluster1 | kAdviseBigPcluster2;
  h.set_idata_size(300);
  h.algorithm_type = 0x10;
  h.encode(b);
  auto d = MapHeader::decode(b);
  EXPECT_EQ(d.advise, 7);
  EXPECT_EQ(d.idata_size(), 300);
  EXPECT_EQ(d.algorithm_type, 0x10);
  uint64_t off;
  EXPECT_FALSE(MapHeader::whole_file_fragment(b, off));
  MapHeader::encode_whole_file_fragment(b, 12345);
  EXPECT_TRUE(MapHeader::whole_file_fragment(b, off));
  EXPECT_EQ(off, 12345u);

  LclusterIndex n;
  n.type = LclusterType::NonHead;
  n.delta[0] = kDeltaCblkcnt | 16;
  n.delta[1] = 30;
  n.encode(b);
  auto nd = LclusterIndex::decode(b);
  EXPECT_EQ(nd.type, LclusterType::NonHead);
  EXPECT_EQ(nd.delta[0], 0x810);
  EXPECT_EQ(nd.delta[1], 30);
  LclusterIndex head;
  head.type = LclusterType::Head1;
  head.partial_ref = true;
  head.clusterofs = 2278;
  head.blkaddr = 17;
  head.encode(b);
  EXPECT_EQ(get_le16(b), 0x8001);
  auto hd = LclusterIndex::decode(b);
  EXPECT_TRUE(hd.partial_ref);
  EXPECT_EQ(hd.blkaddr, 17u);
}

// The worked example of the format notes: ebase 1648, 88 lclusters.
TEST(Zmap, CompactLayoutWorkedExample) {
  auto l = CompactLayout::compute(1648, 88, true);
  EXPECT_EQ(l.initial_4b, 4u);
  EXPECT_EQ(l.compacted_2b, 80u);
  EXPECT_EQ(l.bytes(), 1840u - 1648u);
  auto s = l.locate(48);
  EXPECT_EQ(1648 + s.pack_offset, 1728u);
  EXPECT_EQ(s.index, 12u);
  EXPECT_EQ(s.vcnt, 16u);
  s = l.locate(31);
  EXPECT_EQ(1648 + s.pack_offset, 1696u);
  EXPECT_EQ(s.index, 11u);
  s = l.locate(86);
  EXPECT_EQ(s.vcnt, 2u);
  // Entry 12 of the example pack is NONHEAD with lo = 17.
  const uint8_t pack[32] = {0x05, 0xa0, 0x01, 0x78, 0x00, 0x22, 0x80, 0x09, 0xa0, 0x02, 0xb8, 0x00, 0x32, 0x80, 0x0d, 0xa0,
                            0x03, 0xf8, 0x00, 0x42, 0x80, 0x11, 0xa0, 0x04, 0x38, 0x01, 0x4a, 0x80, 0x21, 0x00, 0x00, 0x00};
  uint32_t v = compact_entry(pack, 14, 12);
  EXPECT_EQ(v, 0x2011u);
  EXPECT_EQ(get_le32(pack + 28), 0x21u);
  uint8_t copy[32];
  std::copy(pack, pack + 32, copy);
  set_compact_entry(copy, 14, 12, 0x1234);
  EXPECT_EQ(compact_entry(copy, 14, 12), 0x1234u);
  EXPECT_EQ(compact_entry(copy, 14, 11), compact_entry(pack, 14, 11));
  EXPECT_EQ(compact_entry(copy, 14, 13), compact_entry(pack, 14, 13));
  set_compact_entry(copy, 14, 15, 0x3FFF);
  EXPECT_EQ(get_le32(copy + 28), 0x21u);  // the base address survives writes to the last entry
}

TEST(Zmap, ConfigRecords) {
  ComprConfigs c;
  c.lz4_max_distance = 65535;
  c.lz4_max_pclusterblks = 4;
  c.lzma_dict_size = 0x40000;
  c.deflate_window_bits = 15;
  c.zstd_window_log = 5;
  auto bytes = c.encode(0xF);
  EXPECT_EQ(bytes.size(), 16u + 16u + 8u + 8u);
  EXPECT_EQ(get_le16(bytes.data()), 14);
  EXPECT_EQ(get_le16(bytes.data() + 2), 65535);
  EXPECT_EQ(get_le16(bytes.data() + 4), 4);
  ComprConfigs d;
  std::string why;
  ASSERT_TRUE(ComprConfigs::decode(bytes, 0xF, d, &why)) << why;
  EXPECT_EQ(d.lzma_dict_size, 0x40000u);
  EXPECT_EQ(d.zstd_window_log, 5);
  EXPECT_EQ(d.deflate_window_bits, 15);
  EXPECT_FALSE(ComprConfigs::decode(std::span(bytes).first(20), 0xF, d, &why));
  EXPECT_FALSE(ComprConfigs::decode(bytes, 0x1F, d, &why));
}

TEST(Zmap, ChunkIndexAndExtentRecord) {
  uint8_t b[32] = {};
  ChunkIndex{1, 2, 0x29}.encode(b);
  auto c = ChunkIndex::decode(b);
  EXPECT_EQ(c.startblk_hi, 1);
  EXPECT_EQ(c.device_id, 2);
  EXPECT_EQ(c.startblk_lo, 0x29u);
  put_le32(b, 0x10000100);
  put_le32(b + 4, 7);
  put_le32(b + 8, 1);
  put_le32(b + 12, 4096);
  auto r = ExtentRecord::decode(b, 16);
  EXPECT_EQ(r.plen & kExtentPlenMask, 0x100u);
  EXPECT_EQ(r.plen >> kExtentFmtShift, 1u);
  EXPECT_EQ(r.pstart, (1ull << 32) | 7);
  EXPECT_EQ(r.lstart, 4096u);
}
