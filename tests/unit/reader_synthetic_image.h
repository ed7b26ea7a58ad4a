// Small EROFS images assembled in tests with the format encoders, for what the reference images do
// not contain and for damage that needs a precise target.
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "format/constants.h"
#include "format/dirent.h"
#include "format/inode.h"
#include "format/superblock.h"
#include "format/xattr.h"
#include "format/xattr_prefix.h"
#include "reader/image.h"
#include "tests/unit/reader_test_support.h"

namespace erofs::test {

constexpr uint32_t kBlock = 4096;
constexpr uint64_t kRootNid = 2 * kBlock / 32;  // inodes live in block 2
constexpr uint64_t kFileNid = kRootNid + 4;
constexpr uint64_t kSpareNid = kRootNid + 32;   // free slots for single-inode tests (byte 9216)

struct XattrSpec {
  uint8_t index;
  std::string name;
  std::string value;
};

inline void put_xattr(std::vector<uint8_t>& out, const XattrSpec& x) {
  const size_t at = out.size();
  const format::XattrEntryHeader h{uint8_t(x.name.size()), x.index, uint16_t(x.value.size())};
  out.resize(at + h.entry_size(), 0);
  h.encode(out.data() + at);
  std::memcpy(out.data() + at + 4, x.name.data(), x.name.size());
  std::memcpy(out.data() + at + 4 + x.name.size(), x.value.data(), x.value.size());
}

// Three blocks: superblock and long prefixes in block 0, shared xattrs in block 1, and in block 2
// the root directory (".", "..", "file") and a file with inline and shared xattrs and inline data.
class Builder {
 public:
  std::vector<uint8_t> bytes = std::vector<uint8_t>(3 * kBlock, 0);
  format::Superblock sb;
  std::vector<uint8_t> file_ibody;
  std::vector<uint32_t> shared_offsets;  // byte offsets of the shared entries from xattr_blkaddr

  Builder() {
    sb.magic = format::kMagic;
    sb.blkszbits = 12;
    sb.root_nid_2b = uint16_t(kRootNid);
    sb.blocks_lo = 3;
    sb.xattr_blkaddr = 1;
    sb.feature_compat = format::kCompatPlainXattrPfx;
    sb.feature_incompat = format::kIncompatXattrPrefixes;
    sb.xattr_prefix_count = 2;
    sb.xattr_prefix_start = 1280 / 4;
    put_prefixes(1280, 0);

    std::vector<uint8_t> shared;
    for (const auto& x : {XattrSpec{1, "shared", "sv"}, XattrSpec{0x80, "opaque", "y"}}) {
      shared_offsets.push_back(uint32_t(shared.size()));
      put_xattr(shared, x);
    }
    std::memcpy(bytes.data() + kBlock, shared.data(), shared.size());

    // ibody: header, the two shared ids, two inline entries and an all-zero padding entry.
    file_ibody.resize(format::kXattrIbodyHeaderSize, 0);
    format::XattrIbodyHeader{0, 2}.encode(file_ibody.data());
    for (uint32_t off : shared_offsets) {
      const uint32_t id = off / 4;
      file_ibody.insert(file_ibody.end(), {uint8_t(id), uint8_t(id >> 8), uint8_t(id >> 16), uint8_t(id >> 24)});
    }
    put_xattr(file_ibody, {1, "inl", "1"});
    put_xattr(file_ibody, {0x81, "x", "vv"});
    file_ibody.resize(file_ibody.size() + 4, 0);
  }

  // Long prefix records "trusted." + "overlay." and "user." + "long.prefix." at byte `at` of `base`.
  void put_prefixes(size_t at, size_t base) {
    for (const auto& [index, infix] : {std::pair<uint8_t, std::string>{4, "overlay."}, {1, "long.prefix."}}) {
      const format::LongPrefixHeader h{uint16_t(1 + infix.size()), index};
      h.encode(bytes.data() + base + at);
      std::memcpy(bytes.data() + base + at + format::kLongPrefixHeaderSize, infix.data(), infix.size());
      at += h.stride();
    }
  }

  // Appends a zeroed block and returns its number.
  uint32_t add_block() {
    bytes.resize(bytes.size() + kBlock, 0);
    return sb.blocks_lo++;
  }

  void put_bytes(uint64_t offset, std::span<const uint8_t> data) {
    std::copy(data.begin(), data.end(), bytes.begin() + ptrdiff_t(offset));
  }

  static format::DiskInode flat_inline(uint16_t mode, uint64_t size, uint16_t nlink) {
    format::DiskInode d;
    d.layout = format::Layout::FlatInline;
    d.mode = mode;
    d.size = size;
    d.nb = nlink;
    d.u = format::kNullAddr;
    return d;
  }

  // Writes the inode at `nid`, then `ibody` and `data` right after it.
  void put_inode(uint64_t nid, format::DiskInode d, const std::vector<uint8_t>& ibody, std::string_view data) {
    d.xattr_icount = ibody.empty() ? 0 : uint16_t((ibody.size() - format::kXattrIbodyHeaderSize) / 4 + 1);
    uint8_t* p = bytes.data() + nid * 32;
    d.encode(std::span(p, d.disk_size()));
    std::copy(ibody.begin(), ibody.end(), p + d.disk_size());
    std::copy(data.begin(), data.end(), p + d.disk_size() + ibody.size());
  }

  std::string build() {
    std::vector<uint8_t> dir(4096);
    size_t nameoff = 3 * format::kDirentSize;
    const std::pair<const char*, uint64_t> entries[] = {{".", kRootNid}, {"..", kRootNid}, {"file", kFileNid}};
    for (size_t i = 0; i < 3; ++i) {
      const uint8_t type = i < 2 ? 2 : 1;
      format::Dirent{entries[i].second, uint16_t(nameoff), type}.encode(dir.data() + i * format::kDirentSize);
      std::memcpy(dir.data() + nameoff, entries[i].first, std::strlen(entries[i].first));
      nameoff += std::strlen(entries[i].first);
    }
    put_inode(kRootNid, flat_inline(S_IFDIR | 0755, nameoff, 2), {}, {reinterpret_cast<char*>(dir.data()), nameoff});
    put_inode(kFileNid, flat_inline(S_IFREG | 0644, 5, 1), file_ibody, "hello");
    sb.encode(std::span(bytes.data() + format::kSuperblockOffset, sb.size()));
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }
};

inline std::unique_ptr<reader::Image> open_built(Builder& b) { return reader::Image::open(write_scratch_image("synthetic.img", b.build())); }

inline std::vector<std::pair<std::string, std::string>> xattr_list(const reader::Image& image, uint64_t nid) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& x : image.xattrs(image.inode(nid))) out.emplace_back(x.name, x.value);
  return out;
}

}  // namespace erofs::test
