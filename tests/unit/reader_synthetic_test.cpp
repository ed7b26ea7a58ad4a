// Synthetic images for what the reference images do not contain: shared xattrs, long xattr
// prefixes and where they are stored, chunk device ids, and inode-level damage.
#include <gtest/gtest.h>

#include "format/zmap.h"
#include "tests/unit/reader_synthetic_image.h"

namespace erofs::test {
namespace {

using reader::CorruptError;
using reader::Image;
using reader::UnsupportedError;

const std::vector<std::pair<std::string, std::string>> kExpectedXattrs = {
    {"user.inl", "1"}, {"user.long.prefix.x", "vv"}, {"user.shared", "sv"}, {"trusted.overlay.opaque", "y"}};

TEST(SyntheticXattrs, InlineSharedAndLongPrefixes) {
  Builder b;
  const auto image = open_built(b);
  EXPECT_EQ(xattr_list(*image, kFileNid), kExpectedXattrs);
  const auto file = image->resolve("file");
  std::string data(5, '\0');
  ASSERT_EQ(image->read(file, 0, std::span(reinterpret_cast<uint8_t*>(data.data()), 5)), 5u);
  EXPECT_EQ(data, "hello");
}

TEST(SyntheticXattrs, PrefixesInThePackedInode) {
  Builder b;
  // Without PLAIN_XATTR_PFX the records live in the packed inode's data: a one-block flat file here.
  b.sb.feature_compat = 0;
  b.sb.packed_nid = kSpareNid;
  b.sb.xattr_prefix_start = 64 / 4;
  std::memset(b.bytes.data() + 1280, 0, 64);  // the raw copy must not be what gets read
  const uint32_t block = b.add_block();
  b.put_prefixes(64, uint64_t(block) * kBlock);
  format::DiskInode packed;
  packed.mode = S_IFREG | 0600;
  packed.size = kBlock;
  packed.u = block;
  b.put_inode(kSpareNid, packed, {}, {});
  const auto image = open_built(b);
  EXPECT_EQ(xattr_list(*image, kFileNid), kExpectedXattrs);
}

TEST(SyntheticXattrs, RejectsBadIbodies) {
  {
    Builder b;
    b.file_ibody.resize(format::kXattrIbodyHeaderSize);  // icount 1: a header alone
    b.file_ibody[4] = 0;
    const auto image = open_built(b);
    EXPECT_THROW(image->xattrs(image->inode(kFileNid)), CorruptError);
  }
  {
    Builder b;
    b.file_ibody[4] = 200;  // more shared ids than the ibody holds
    const auto image = open_built(b);
    EXPECT_THROW(image->xattrs(image->inode(kFileNid)), CorruptError);
  }
  {
    Builder b;
    b.file_ibody[12 + 8 + 3] = 0x40;  // first inline entry's value size runs past the ibody
    const auto image = open_built(b);
    EXPECT_THROW(image->xattrs(image->inode(kFileNid)), CorruptError);
  }
  {
    Builder b;
    b.file_ibody[12 + 8 + 8 + 1] = 0x85;  // long prefix 5 of 2
    const auto image = open_built(b);
    EXPECT_THROW(image->xattrs(image->inode(kFileNid)), CorruptError);
  }
  {
    Builder b;
    b.file_ibody[12] = 0xFF;  // shared id far outside the image
    b.file_ibody[15] = 0x7F;
    const auto image = open_built(b);
    EXPECT_THROW(image->xattrs(image->inode(kFileNid)), CorruptError);
  }
  {
    Builder b;
    b.bytes[1280] = 0;  // first long prefix record of length 0
    b.bytes[1281] = 0;
    const auto image = open_built(b);
    EXPECT_THROW(image->xattrs(image->inode(kFileNid)), CorruptError);
  }
}

// A single inode written at kSpareNid of an otherwise valid image.
template <class E>
void expect_inode_error(const char* what, const format::DiskInode& d) {
  SCOPED_TRACE(what);
  Builder b;
  b.put_inode(kSpareNid, d, {}, {});
  const auto image = open_built(b);
  EXPECT_THROW(image->inode(kSpareNid), E);
}

TEST(SyntheticInodes, RejectsBadFields) {
  auto d = Builder::flat_inline(S_IFREG | 0644, 5, 1);
  expect_inode_error<UnsupportedError>("layout 5", [&] { auto x = d; x.flag = false; x.layout = format::Layout(5); return x; }());
  expect_inode_error<CorruptError>("no such file type", [&] { auto x = d; x.mode = 0170644; return x; }());
  expect_inode_error<CorruptError>("empty symlink", [&] { auto x = d; x.mode = S_IFLNK | 0777; x.size = 0; return x; }());
  expect_inode_error<CorruptError>("symlink over 4095 bytes", [&] { auto x = d; x.mode = S_IFLNK | 0777; x.size = 5000; return x; }());
  expect_inode_error<CorruptError>("empty directory", [&] { auto x = d; x.mode = S_IFDIR | 0755; x.size = 0; return x; }());
  expect_inode_error<CorruptError>("fifo with a size", [&] { auto x = d; x.mode = S_IFIFO | 0644; x.size = 1; return x; }());
  expect_inode_error<CorruptError>("inline tail crosses the block", [&] { auto x = d; x.size = 4096 + 4000; x.u = 0; return x; }());
  expect_inode_error<CorruptError>("flat blocks past the image", [&] { auto x = d; x.layout = format::Layout::FlatPlain; x.u = 2; x.size = 8192; return x; }());
  expect_inode_error<CorruptError>("negative size", [&] { auto x = d; x.extended = true; x.size = uint64_t(1) << 63; return x; }());
  expect_inode_error<CorruptError>("chunk table past the image", [&] { auto x = d; x.extended = true; x.layout = format::Layout::ChunkBased; x.u = 0x20; x.size = 1ull << 40; return x; }());
  expect_inode_error<UnsupportedError>("unknown chunk format bit", [&] { auto x = d; x.layout = format::Layout::ChunkBased; x.u = 0x80; return x; }());
  // Extended inode at the last slot of the image: its second half is missing.
  Builder b;
  const auto image = open_built(b);
  EXPECT_THROW(image->inode(3 * kBlock / 32 - 1), CorruptError);
  EXPECT_THROW(image->inode(3 * kBlock / 32), CorruptError);
  EXPECT_THROW(image->inode(1ull << 63), CorruptError);  // a metabox nid without a metabox
}

TEST(SyntheticInodes, DecodesDevicesAndTimes) {
  Builder b;
  b.sb.epoch = 1000;
  b.sb.fixed_nsec = 7;
  auto d = Builder::flat_inline(S_IFCHR | 0600, 0, 1);
  d.layout = format::Layout::FlatPlain;
  d.u = format::encode_rdev(4, 300);
  d.mtime = 0xFFFFFFFF;  // unsigned offset from the epoch
  b.put_inode(kSpareNid, d, {}, {});
  const auto image = open_built(b);
  const auto ino = image->inode(kSpareNid);
  EXPECT_EQ(ino.rdev_major, 4u);
  EXPECT_EQ(ino.rdev_minor, 300u);
  EXPECT_EQ(ino.mtime, 1000 + int64_t(0xFFFFFFFF));
  EXPECT_EQ(ino.mtime_nsec, 7u);
}

// A chunk-based file with one 8-byte chunk index naming device `device`.
std::unique_ptr<Image> chunk_on_device(uint16_t device, bool device_table) {
  Builder b;
  if (device_table) {
    b.sb.feature_incompat |= format::kIncompatDeviceTable;
    b.sb.extra_devices = 1;
    b.sb.devt_slotoff = 1536 / 128;
  }
  format::DiskInode d;
  d.layout = format::Layout::ChunkBased;
  d.mode = S_IFREG | 0644;
  d.size = 100;
  d.u = format::kChunkFormatIndexes;
  format::ChunkIndex idx{0, device, 1};
  std::vector<uint8_t> entry(8);
  idx.encode(entry.data());
  b.put_inode(kSpareNid, d, {}, {reinterpret_cast<char*>(entry.data()), entry.size()});
  return open_built(b);
}

TEST(SyntheticChunks, DeviceIdsNeedADeviceTable) {
  std::vector<uint8_t> buf(100);
  {
    const auto image = chunk_on_device(0, false);
    EXPECT_EQ(image->read(image->inode(kSpareNid), 0, buf), 100u);  // block 1: the shared xattrs
    EXPECT_EQ(buf[4], 's');
  }
  {
    const auto image = chunk_on_device(1, false);
    EXPECT_THROW(image->read(image->inode(kSpareNid), 0, buf), CorruptError);
  }
  {
    const auto image = chunk_on_device(1, true);
    EXPECT_THROW(image->read(image->inode(kSpareNid), 0, buf), UnsupportedError);
  }
}

}  // namespace
}  // namespace erofs::test
