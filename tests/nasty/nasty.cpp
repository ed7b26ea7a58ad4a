#include "tests/nasty/nasty.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>

#include "compress/codec.h"
#include "format/constants.h"
#include "format/dirent.h"
#include "format/inode.h"
#include "format/superblock.h"
#include "format/xattr.h"
#include "format/zmap.h"
#include "reader/image.h"
#include "writer/build_image.h"

namespace erofs::nasty {
namespace {

using format::DiskInode;
using format::FileType;
using format::LclusterType;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("erofs-nasty-images: " + what); }

void make_dirs(const std::string& path) {
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    const std::string prefix = path.substr(0, at);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) fail("cannot create " + prefix + ": " + std::strerror(errno));
  }
}

void write_file(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!out.flush()) fail("cannot write " + path);
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::span<const uint8_t> as_bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// Deterministic contents (mt19937's output is fixed by the standard).
std::string words(size_t bytes, uint32_t seed) {
  static const char* const kWords[] = {"erofs", "block", "inode", "extent", "cluster", "hostile", "image",
                                       "reader", "zero",  "tail",  "packed", "xattr",   "symlink", "nid"};
  std::mt19937 rng(seed);
  std::string out;
  while (out.size() < bytes) {
    out += kWords[rng() % std::size(kWords)];
    out += rng() % 7 == 0 ? '\n' : ' ';
    if (rng() % 5 == 0) out += std::to_string(rng() % 100000);
  }
  out.resize(bytes);
  return out;
}

std::string random_bytes(size_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(bytes, '\0');
  for (auto& c : out) c = char(rng());
  return out;
}

// --- base trees ---------------------------------------------------------------------------------

class TreeMaker {
 public:
  explicit TreeMaker(std::string content_dir) : content_dir_(std::move(content_dir)) {
    make_dirs(content_dir_);
    root_ = add(S_IFDIR | 0755, nullptr, "");
  }
  writer::TreeInode* root() const { return root_; }
  writer::TreeInode* dir(writer::TreeInode* parent, const std::string& name) { return add(S_IFDIR | 0755, parent, name); }
  writer::TreeInode* file(writer::TreeInode* parent, const std::string& name, const std::string& content,
                      writer::XattrList xattrs = {}) {
    writer::TreeInode* f = add(S_IFREG | 0644, parent, name);
    f->size = content.size();
    const std::string path = content_dir_ + "/" + std::to_string(files_++);
    write_file(path, as_bytes(content));
    f->content = writer::FileContent::at_path(path);
    std::sort(xattrs.begin(), xattrs.end());
    f->xattrs = std::move(xattrs);
    return f;
  }
  writer::TreeInode* symlink(writer::TreeInode* parent, const std::string& name, const std::string& target) {
    writer::TreeInode* l = add(S_IFLNK | 0777, parent, name);
    l->symlink_target = target;
    l->size = target.size();
    return l;
  }
  writer::Tree& finish() {
    tree_.finish();
    return tree_;
  }

 private:
  writer::TreeInode* add(uint32_t mode, writer::TreeInode* parent, const std::string& name) {
    auto ino = std::make_unique<writer::TreeInode>();
    ino->mode = mode;
    ino->mtime = 1700000000;
    writer::TreeInode* p = tree_.add(std::move(ino));
    if (!parent) {
      tree_.root = p;
      return p;
    }
    parent->children.push_back({name, p});
    paths_[p] = paths_[parent].empty() ? name : paths_[parent] + "/" + name;
    p->image_path = paths_[p];
    return p;
  }

  std::string content_dir_;
  writer::Tree tree_;
  writer::TreeInode* root_ = nullptr;
  std::map<const writer::TreeInode*, std::string> paths_;
  unsigned files_ = 0;
};

constexpr int kChainDepth = 24;  // directories in chain/n/n/...: 2^24 paths once each "m" names the next one

struct Base {
  std::string name;  // base_plain, base_lz4_full, base_lz4_compact
  std::string what;
  std::string path;
  std::vector<uint8_t> bytes;
  std::unique_ptr<reader::Image> image;
};

writer::BuildOptions base_options() {
  writer::BuildOptions o;
  o.block_size = 4096;
  o.fixed_time = 1700000000;
  o.uuid_mode = writer::UuidMode::Clear;
  return o;
}

void finish_base(Base& b, TreeMaker& t, const writer::BuildOptions& o) {
  writer::build_image(t.finish(), b.path, o);
  b.bytes = read_file(b.path);
  b.image = reader::Image::open(b.path);
}

// Uncompressed, extended inodes (64-bit i_size), inline tails, shared and inline xattrs.
void make_plain(Base& b, const std::string& scratch) {
  TreeMaker t(scratch + "/plain-src");
  auto* root = t.root();
  auto* names = t.dir(root, "names");
  t.file(names, "a_b", "hello\n");
  for (const char* n : {"bb", "cc", "dd", "ee"}) t.file(names, n, std::string(n) + "\n");
  t.file(names, std::string(255, 'z'), "filler: room for longer names\n");
  auto* dir = t.dir(root, "dir");
  t.file(dir, "file.txt", "file\n");
  t.file(t.dir(dir, "sub"), "deep.txt", "deep\n");
  t.file(root, "big.bin", random_bytes(20000, 1));
  t.file(root, "empty", "");
  t.symlink(root, "link", "big.bin");
  t.file(root, "xattr.txt", "x\n", {{"user.one", "1"}, {"user.shared", "shared value"}, {"user.two", "value two"}});
  t.file(root, "xattr2.txt", "y\n", {{"user.shared", "shared value"}});
  auto* x = t.dir(root, "x");
  const std::string up = std::string("../../") + kCanaryDir;
  t.symlink(x, "r", up);
  t.symlink(x, "s", up + "/" + kCanaryFile);
  t.file(x, "t", "pwned\n");
  t.file(t.dir(x, "u"), "pwned", "pwned\n");
  auto* level = t.dir(root, "chain");
  for (int i = 0; i < kChainDepth; ++i) {
    t.file(level, "m", "m\n");
    if (i + 1 < kChainDepth) level = t.dir(level, "n");
  }
  auto o = base_options();
  o.inode_form = writer::InodeForm::Extended;
  finish_base(b, t, o);
}

// lz4 with full indexes and 1-block pclusters (every multi-lcluster extent has CBLKCNT 1), or
// compact indexes with 16 KiB pclusters and inline tails.
void make_lz4(Base& b, const std::string& scratch, bool full) {
  TreeMaker t(scratch + (full ? "/lz4-full-src" : "/lz4-compact-src"));
  t.file(t.root(), "small.txt", words(6000, 3));
  t.file(t.root(), "text.bin", words(200 * 1024, 4));
  std::string zeros(13 << 20, '\0');  // more than the 12 MiB extent limit
  for (size_t i = 0; i < zeros.size(); i += 4096) zeros[i] = char('a' + i / 4096 % 26);
  t.file(t.root(), "zeros.bin", zeros);
  auto o = base_options();
  // Full: 64-bit i_size for the size patches; compact: 32-byte inodes, whose mtime counts from the epoch.
  o.inode_form = full ? writer::InodeForm::Extended : writer::InodeForm::Compact;
  writer::CompressionOptions c;
  c.algorithms = {compress::parse_spec("lz4")};
  c.full_indexes = full;
  c.pcluster_bytes = full ? 0 : 16384;
  c.ztailpacking = !full;
  c.workers = 1;
  o.compression = c;
  finish_base(b, t, o);
}

// --- patching through the format layer ----------------------------------------------------------

class Patcher {
 public:
  explicit Patcher(const Base& base) : base_(base), bytes_(base.bytes) {}

  const reader::Image& image() const { return *base_.image; }
  uint32_t block_size() const { return base_.image->block_size(); }
  uint64_t size() const { return bytes_.size(); }
  reader::Inode inode(const std::string& path) const { return base_.image->resolve(path); }
  uint64_t nid(const std::string& path) const { return inode(path).nid; }

  std::span<uint8_t> at(uint64_t pos, uint64_t len) {
    if (pos > bytes_.size() || len > bytes_.size() - pos) fail("patch outside the base image");
    return std::span(bytes_).subspan(size_t(pos), size_t(len));
  }

  void superblock(const std::function<void(format::Superblock&)>& fn) {
    auto raw = at(format::kSuperblockOffset, format::Superblock::kEncodedSize);
    auto sb = format::Superblock::decode(raw);
    fn(sb);
    sb.encode(raw);
  }

  void edit_inode(const std::string& path, const std::function<void(DiskInode&)>& fn) {
    const reader::Inode ino = inode(path);
    auto raw = at(ino.pos, ino.disk.disk_size());
    DiskInode d = DiskInode::decode(raw);
    fn(d);
    if (d.disk_size() != ino.disk.disk_size()) fail(path + ": the patch changed the inode's form");
    d.encode(raw);
  }

  // --- directories ---
  struct Block {
    uint64_t pos, len;
  };
  struct Entry {
    std::string name;
    uint64_t nid;
    uint8_t type;
  };

  // Where each directory block's bytes lie: full blocks from startblk, an inline tail after the inode.
  std::vector<Block> dir_blocks(const reader::Inode& dir) const {
    const uint32_t bs = block_size();
    std::vector<Block> out;
    const bool inline_tail = dir.layout() == format::Layout::FlatInline;
    const uint64_t blocks = (dir.size + bs - 1) / bs;
    for (uint64_t i = 0; i < blocks; ++i) {
      const uint64_t len = std::min<uint64_t>(bs, dir.size - i * bs);
      if (inline_tail && i + 1 == blocks)
        out.push_back({dir.meta_end(), len});
      else
        out.push_back({(dir.startblk + i) * bs, len});
    }
    return out;
  }

  std::vector<Entry> entries(Block b) {
    const auto raw = at(b.pos, b.len);
    const auto first = format::Dirent::decode(raw.data());
    const size_t count = first.nameoff / format::kDirentSize;
    std::vector<Entry> out;
    for (size_t i = 0; i < count; ++i) {
      const auto d = format::Dirent::decode(raw.data() + i * format::kDirentSize);
      size_t end = i + 1 < count ? format::Dirent::decode(raw.data() + (i + 1) * format::kDirentSize).nameoff
                                 : size_t(std::find(raw.begin() + d.nameoff, raw.end(), 0) - raw.begin());
      out.push_back({std::string(reinterpret_cast<const char*>(raw.data()) + d.nameoff, end - d.nameoff), d.nid, d.file_type});
    }
    return out;
  }

  // Encodes `list` in order (whatever it holds) into the block, zero-padded; it must fit.
  void write_entries(Block b, const std::vector<Entry>& list) {
    auto raw = at(b.pos, b.len);
    size_t need = list.size() * format::kDirentSize;
    for (auto& e : list) need += e.name.size();
    if (need > b.len) fail("patched directory entries do not fit their block");
    std::fill(raw.begin(), raw.end(), 0);
    size_t nameoff = list.size() * format::kDirentSize;
    for (size_t i = 0; i < list.size(); ++i) {
      format::Dirent{list[i].nid, uint16_t(nameoff), list[i].type}.encode(raw.data() + i * format::kDirentSize);
      std::copy(list[i].name.begin(), list[i].name.end(), raw.begin() + nameoff);
      nameoff += list[i].name.size();
    }
  }

  Block only_block(const std::string& dir_path) {
    const auto blocks = dir_blocks(inode(dir_path));
    if (blocks.size() != 1) fail(dir_path + ": expected a directory of one block");
    return blocks.front();
  }

  void edit_dir(const std::string& dir_path, const std::function<void(std::vector<Entry>&)>& fn) {
    const Block b = only_block(dir_path);
    auto list = entries(b);
    fn(list);
    write_entries(b, list);
  }

  static Entry& entry(std::vector<Entry>& list, const std::string& name) {
    for (auto& e : list)
      if (e.name == name) return e;
    fail("no directory entry " + name);
  }

  // The raw dirent of `name` (nameoff included), decoded and encoded back.
  void edit_dirent(const std::string& dir_path, const std::string& name, const std::function<void(format::Dirent&)>& fn) {
    const Block b = only_block(dir_path);
    const auto list = entries(b);
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].name != name) continue;
      uint8_t* p = at(b.pos + i * format::kDirentSize, format::kDirentSize).data();
      auto d = format::Dirent::decode(p);
      fn(d);
      d.encode(p);
      return;
    }
    fail("no directory entry " + name + " in " + dir_path);
  }

  // --- xattrs ---
  uint64_t xattr_body(const reader::Inode& ino) const {
    if (ino.xattr_size == 0) fail("inode without xattrs");
    return ino.pos + ino.disk.disk_size();
  }
  void edit_xattr_header(const std::string& path, const std::function<void(format::XattrIbodyHeader&)>& fn) {
    uint8_t* p = at(xattr_body(inode(path)), format::kXattrIbodyHeaderSize).data();
    auto h = format::XattrIbodyHeader::decode(p);
    fn(h);
    h.encode(p);
  }
  uint64_t first_inline_xattr(const std::string& path) {
    const reader::Inode ino = inode(path);
    const uint64_t body = xattr_body(ino);
    const auto h = format::XattrIbodyHeader::decode(at(body, format::kXattrIbodyHeaderSize).data());
    const uint64_t pos = body + format::kXattrIbodyHeaderSize + 4ull * h.shared_count;
    if (pos >= ino.meta_end()) fail(path + " has no inline xattr entry");
    return pos;
  }
  void edit_first_inline_xattr(const std::string& path, const std::function<void(format::XattrEntryHeader&)>& fn) {
    uint8_t* p = at(first_inline_xattr(path), format::kXattrEntryHeaderSize).data();
    auto e = format::XattrEntryHeader::decode(p);
    fn(e);
    e.encode(p);
  }

  // --- compressed indexes ---
  struct ZInfo {
    reader::Inode ino;
    uint64_t header_pos;
    format::MapHeader header;
    unsigned lcluster_bits;
    uint64_t lclusters;
    format::CompactLayout compact;
  };
  ZInfo zinfo(const std::string& path) {
    ZInfo z{inode(path), 0, {}, 0, 0, {}};
    if (!format::is_compressed(z.ino.layout())) fail(path + " is not compressed");
    z.header_pos = format::map_header_position(z.ino.meta_end());
    z.header = format::MapHeader::decode(at(z.header_pos, format::kMapHeaderSize).data());
    const unsigned blkbits = image().superblock().blkszbits;
    z.lcluster_bits = blkbits + (z.header.cluster_bits & 15);
    z.lclusters = (z.ino.size + (1ull << z.lcluster_bits) - 1) >> z.lcluster_bits;
    if (z.ino.layout() == format::Layout::CompressedCompact) {
      z.lclusters = (z.ino.size + block_size() - 1) / block_size();
      z.compact = format::CompactLayout::compute(format::compact_index_base(z.header_pos), uint32_t(z.lclusters),
                                                 z.header.advise & format::kAdviseCompacted2B);
    }
    return z;
  }
  void edit_map_header(const std::string& path, const std::function<void(format::MapHeader&)>& fn) {
    const ZInfo z = zinfo(path);
    uint8_t* p = at(z.header_pos, format::kMapHeaderSize).data();
    auto h = format::MapHeader::decode(p);
    fn(h);
    h.encode(p);
  }
  format::LclusterIndex full_index(const ZInfo& z, uint64_t lcn) {
    return format::LclusterIndex::decode(at(format::full_index_position(z.header_pos, lcn), format::kFullIndexSize).data());
  }
  void set_full_index(const ZInfo& z, uint64_t lcn, const format::LclusterIndex& e) {
    e.encode(at(format::full_index_position(z.header_pos, lcn), format::kFullIndexSize).data());
  }
  struct CompactSlot {
    uint8_t* pack;
    uint32_t bits;
    format::CompactLayout::Slot slot;
  };
  CompactSlot compact_slot(const ZInfo& z, uint32_t lcn) {
    const auto s = z.compact.locate(lcn);
    const bool four = s.vcnt == format::kPack4BEntries;
    auto pack = at(format::compact_index_base(z.header_pos) + s.pack_offset, four ? format::kPack4BBytes : format::kPack2BBytes);
    return {pack.data(), four ? format::kPack4BBits : format::kPack2BBits, s};
  }
  format::CompactEntry compact_index(const ZInfo& z, uint32_t lcn) {
    const auto c = compact_slot(z, lcn);
    return format::CompactEntry::decode(format::compact_entry(c.pack, c.bits, c.slot.index),
                                        format::compact_lo_bits(z.lcluster_bits));
  }
  void set_compact_index(const ZInfo& z, uint32_t lcn, const format::CompactEntry& e) {
    const auto c = compact_slot(z, lcn);
    format::set_compact_entry(c.pack, c.bits, c.slot.index, e.encode(format::compact_lo_bits(z.lcluster_bits)));
  }

  // The patched image, with the superblock checksum recomputed over it.
  std::vector<uint8_t> finish() {
    superblock([&](format::Superblock& sb) {
      if (!(sb.feature_compat & format::kCompatSbChksum)) return;
      const uint32_t bs = 1u << sb.blkszbits;
      sb.encode(at(format::kSuperblockOffset, sb.size()));
      sb.checksum = format::compute_checksum(at(format::kSuperblockOffset, format::checksum_length(bs)));
    });
    return bytes_;
  }

 private:
  const Base& base_;
  std::vector<uint8_t> bytes_;
};

using Entries = std::vector<Patcher::Entry>;
constexpr uint8_t kReg = uint8_t(FileType::Regular), kDir = uint8_t(FileType::Directory);

void rename_entry(Patcher& p, const std::string& dir, const std::string& from, const std::string& to) {
  p.edit_dir(dir, [&](Entries& l) { Patcher::entry(l, from).name = to; });
}

void set_size(Patcher& p, const std::string& path, uint64_t size) {
  p.edit_inode(path, [&](DiskInode& d) {
    if (!d.extended && size > UINT32_MAX) fail(path + ": a compact inode cannot hold i_size " + std::to_string(size));
    d.size = size;
  });
}

// The first lcluster of `path` (full indexes) that matches `pred`.
uint64_t find_full(Patcher& p, const Patcher::ZInfo& z, const std::function<bool(uint64_t, const format::LclusterIndex&)>& pred) {
  for (uint64_t lcn = 0; lcn < z.lclusters; ++lcn)
    if (pred(lcn, p.full_index(z, lcn))) return lcn;
  fail("no lcluster index of the wanted kind");
}
uint32_t find_compact(Patcher& p, const Patcher::ZInfo& z,
                      const std::function<bool(uint32_t, const format::CompactEntry&, const format::CompactLayout::Slot&)>& pred) {
  for (uint32_t lcn = 0; lcn < z.lclusters; ++lcn)
    if (pred(lcn, p.compact_index(z, lcn), z.compact.locate(lcn))) return lcn;
  fail("no compact index of the wanted kind");
}
bool is_cblkcnt(const format::LclusterIndex& e) {
  return e.type == LclusterType::NonHead && (e.delta[0] & format::kDeltaCblkcnt);
}

struct Recipe {
  const char* name;
  const char* bug_class;
  const char* what;
  int base;  // index into the bases: 0 plain, 1 lz4 full indexes, 2 lz4 compact indexes
  std::function<void(Patcher&)> patch;
  Expect expect = Expect::Corrupt;
};

std::vector<Recipe> recipes() {
  std::vector<Recipe> r;
  // --- names ---
  r.push_back({"name_slash", "names", "names/a_b renamed a/b", 0, [](Patcher& p) { rename_entry(p, "names", "a_b", "a/b"); }});
  r.push_back({"name_dotdot_regular", "names", "the '..' entry of names/ names the regular file names/bb", 0, [](Patcher& p) {
                 const uint64_t bb = p.nid("names/bb");
                 p.edit_dir("names", [&](Entries& l) { Patcher::entry(l, "..") = {"..", bb, kReg}; });
               }});
  r.push_back({"name_dot_duplicate", "names", "names/.. renamed '.': two '.' entries", 0,
               [](Patcher& p) { rename_entry(p, "names", "..", "."); }});
  r.push_back({"name_nul", "names", "names/bb renamed \"b\\0\" (a NUL inside a name)", 0,
               [](Patcher& p) { rename_entry(p, "names", "bb", std::string("b\0", 2)); }});
  r.push_back({"name_empty", "names", "names/cc renamed to the empty name", 0, [](Patcher& p) { rename_entry(p, "names", "cc", ""); }});
  r.push_back({"name_too_long", "names", "names/ holds one entry with a 300-byte name", 0, [](Patcher& p) {
                 const uint64_t ee = p.nid("names/ee");
                 p.edit_dir("names", [&](Entries& l) { l = {l[0], l[1], {std::string(300, 'x'), ee, kReg}}; });
               }});
  // --- dirents ---
  r.push_back({"dirent_duplicate", "dirents", "names/cc renamed bb: two entries named bb", 0,
               [](Patcher& p) { rename_entry(p, "names", "cc", "bb"); }});
  r.push_back({"dirent_unsorted", "dirents", "the entries cc and dd of names/ swapped", 0, [](Patcher& p) {
                 p.edit_dir("names", [](Entries& l) { std::swap(Patcher::entry(l, "cc"), Patcher::entry(l, "dd")); });
               }});
  r.push_back({"dirent_nameoff_past_block", "dirents", "nameoff of names/dd points past the block", 0,
               [](Patcher& p) { p.edit_dirent("names", "dd", [](format::Dirent& d) { d.nameoff = 0xFFF0; }); }});
  r.push_back({"dirent_first_nameoff", "dirents", "the first nameoff of names/ is 13 (not a multiple of 12)", 0,
               [](Patcher& p) { p.edit_dirent("names", ".", [](format::Dirent& d) { d.nameoff = 13; }); }});
  r.push_back({"dirent_file_type", "dirents", "names/bb has dirent file type 127", 0,
               [](Patcher& p) { p.edit_dirent("names", "bb", [](format::Dirent& d) { d.file_type = 127; }); }});
  r.push_back({"dirent_type_mismatch", "dirents", "names/bb (a regular file) is listed as a directory", 0,
               [](Patcher& p) { p.edit_dirent("names", "bb", [](format::Dirent& d) { d.file_type = kDir; }); }});
  // --- '.' and '..' ---
  r.push_back({"dot_elsewhere", "dots", "the '.' entry of dir/ names dir/sub", 0, [](Patcher& p) {
                 const uint64_t sub = p.nid("dir/sub");
                 p.edit_dir("dir", [&](Entries& l) { Patcher::entry(l, ".").nid = sub; });
               }});
  r.push_back({"dotdot_elsewhere", "dots", "the '..' entry of dir/sub names dir/sub itself", 0, [](Patcher& p) {
                 const uint64_t sub = p.nid("dir/sub");
                 p.edit_dir("dir/sub", [&](Entries& l) { Patcher::entry(l, "..").nid = sub; });
               }});
  // --- loops ---
  r.push_back({"loop_ancestor", "loops", "dir/sub/deep.txt names dir/ (a directory containing its ancestor)", 0, [](Patcher& p) {
                 const uint64_t d = p.nid("dir");
                 p.edit_dir("dir/sub", [&](Entries& l) { Patcher::entry(l, "deep.txt") = {"deep.txt", d, kDir}; });
               }});
  r.push_back({"loop_self", "loops", "dir/file.txt names dir/ itself", 0, [](Patcher& p) {
                 const uint64_t d = p.nid("dir");
                 p.edit_dir("dir", [&](Entries& l) { Patcher::entry(l, "file.txt") = {"file.txt", d, kDir}; });
               }});
  r.push_back({"bomb_dir_dag", "bomb", "in each of 23 nested directories chain/n/.../n, the file m names the next directory too: 2^23 paths", 0,
               [](Patcher& p) {
                 std::string level = "chain";
                 for (int i = 0; i + 1 < kChainDepth; ++i) {
                   const uint64_t next = p.nid(level + "/n");
                   p.edit_dir(level, [&](Entries& l) { Patcher::entry(l, "m") = {"m", next, kDir}; });
                   level += "/n";
                 }
               }});
  // --- nids ---
  r.push_back({"nid_outside", "nids", "names/bb names nid 2^40", 0, [](Patcher& p) {
                 p.edit_dir("names", [&](Entries& l) { Patcher::entry(l, "bb").nid = 1ull << 40; });
               }});
  r.push_back({"nid_past_end", "nids", "names/bb names the first nid past the end of the image", 0, [](Patcher& p) {
                 const uint64_t n = p.size() / format::kSlotSize;
                 p.edit_dir("names", [&](Entries& l) { Patcher::entry(l, "bb").nid = n; });
               }});
  r.push_back({"nid_metabox_bit", "nids", "names/bb names a metabox nid (bit 63) in an image without a metabox", 0, [](Patcher& p) {
                 p.edit_dir("names", [&](Entries& l) { Patcher::entry(l, "bb").nid |= 1ull << 63; });
               }});
  r.push_back({"nid_root_outside", "nids", "the superblock's root nid is 65535, past the end of the image", 0, [](Patcher& p) {
                 if (p.image().superblock().meta_blkaddr * uint64_t(p.block_size()) + 0xFFFFull * format::kSlotSize < p.size())
                   fail("base image too large for nid_root_outside");
                 p.superblock([](format::Superblock& sb) { sb.root_nid_2b = 0xFFFF; });
               }});
  r.push_back({"nid_root_not_dir", "nids", "the superblock's root nid names the regular file names/bb", 0, [](Patcher& p) {
                 const uint64_t bb = p.nid("names/bb");
                 p.superblock([&](format::Superblock& sb) { sb.root_nid_2b = uint16_t(bb); });
               }});
  // --- sizes and offsets ---
  r.push_back({"size_negative", "sizes", "i_size of big.bin is 2^64-1", 0, [](Patcher& p) { set_size(p, "big.bin", ~0ull); }});
  r.push_back({"size_2p63", "sizes", "i_size of big.bin is 2^63-1, the largest non-negative size: 2^51 blocks past the image", 0,
               [](Patcher& p) { set_size(p, "big.bin", (1ull << 63) - 1); }});
  r.push_back({"nid_overflow", "sizes", "names/bb names nid 2^62+1: its byte offset (nid * 32) overflows 64 bits", 0, [](Patcher& p) {
                 p.edit_dir("names", [&](Entries& l) { Patcher::entry(l, "bb").nid = (1ull << 62) + 1; });
               }});
  r.push_back({"mtime_overflow", "sizes", "superblock epoch 2^63-1 and small.txt's compact i_mtime 1: the mtime overflows", 2,
               [](Patcher& p) {
                 p.superblock([](format::Superblock& sb) { sb.epoch = INT64_MAX; });
                 p.edit_inode("small.txt", [](DiskInode& d) {
                   if (d.extended) fail("small.txt is not a compact inode");
                   d.mtime = 1;
                 });
               }});
  r.push_back({"size_past_image", "sizes", "i_size of big.bin is 1 GiB: its blocks run past the image", 0,
               [](Patcher& p) { set_size(p, "big.bin", 1ull << 30); }});
  r.push_back({"blkaddr_near_2p48", "sizes", "big.bin starts at block 2^48-16 (48-bit address of an extended inode)", 0,
               [](Patcher& p) {
                 p.edit_inode("big.bin", [](DiskInode& d) {
                   d.nb = 0xFFFF;
                   d.u = 0xFFFFFFF0;
                 });
               }});
  r.push_back({"dir_size_huge", "sizes", "i_size of dir/ is 2^40", 0, [](Patcher& p) { set_size(p, "dir", 1ull << 40); }});
  // --- inline data ---
  r.push_back({"inline_file_cross_block", "inline", "names/a_b's inline tail made to end one byte past its block", 0, [](Patcher& p) {
                 const auto ino = p.inode("names/a_b");
                 if (ino.layout() != format::Layout::FlatInline) fail("names/a_b is not inline");
                 const uint64_t size = p.block_size() - ino.meta_end() % p.block_size() + 1;
                 if (size >= p.block_size()) fail("names/a_b's tail starts a block");
                 set_size(p, "names/a_b", size);
               }});
  r.push_back({"inline_dir_cross_block", "inline", "names/'s inline directory data made to end one byte past its block", 0,
               [](Patcher& p) {
                 const auto ino = p.inode("names");
                 if (ino.layout() != format::Layout::FlatInline || ino.size >= p.block_size()) fail("names/ is not inline");
                 const uint64_t size = p.block_size() - ino.meta_end() % p.block_size() + 1;
                 if (size >= p.block_size()) fail("names/'s tail starts a block");
                 set_size(p, "names", size);
               }});
  // --- xattrs ---
  r.push_back({"xattr_shared_count", "xattrs", "xattr.txt claims 255 shared xattr ids", 0,
               [](Patcher& p) { p.edit_xattr_header("xattr.txt", [](format::XattrIbodyHeader& h) { h.shared_count = 255; }); }});
  r.push_back({"xattr_name_len", "xattrs", "the first inline xattr of xattr.txt has a 255-byte name", 0,
               [](Patcher& p) { p.edit_first_inline_xattr("xattr.txt", [](format::XattrEntryHeader& e) { e.name_len = 255; }); }});
  r.push_back({"xattr_value_size", "xattrs", "the first inline xattr of xattr.txt has a 65535-byte value", 0,
               [](Patcher& p) { p.edit_first_inline_xattr("xattr.txt", [](format::XattrEntryHeader& e) { e.value_size = 0xFFFF; }); }});
  r.push_back({"xattr_icount", "xattrs", "xattr.txt's xattr_icount is 65535 (a 256 KiB ibody past the image)", 0, [](Patcher& p) {
                 const auto ino = p.inode("xattr.txt");
                 if (ino.pos + ino.disk.disk_size() + format::xattr_ibody_size(0xFFFF) <= p.size()) fail("base image too large for xattr_icount");
                 p.edit_inode("xattr.txt", [](DiskInode& d) { d.xattr_icount = 0xFFFF; });
               }});
  r.push_back({"xattr_shared_id", "xattrs", "xattr.txt's shared xattr id is 2^32-1", 0, [](Patcher& p) {
                 const auto ino = p.inode("xattr.txt");
                 const uint64_t body = p.xattr_body(ino);
                 if (format::XattrIbodyHeader::decode(p.at(body, format::kXattrIbodyHeaderSize).data()).shared_count != 1)
                   fail("xattr.txt has no shared xattr");
                 std::ranges::fill(p.at(body + format::kXattrIbodyHeaderSize, 4), 0xFF);
               }});
  r.push_back({"xattr_long_prefix", "xattrs", "the first inline xattr of xattr.txt uses long prefix 3 of none", 0, [](Patcher& p) {
                 p.edit_first_inline_xattr("xattr.txt", [](format::XattrEntryHeader& e) { e.name_index = format::kXattrLongPrefixBit | 3; });
               }});
  // --- symlinks ---
  r.push_back({"symlink_longer_than_block", "symlinks", "i_size of link is 8192 (two blocks)", 0,
               [](Patcher& p) { set_size(p, "link", 8192); }});
  r.push_back({"symlink_size_4096", "symlinks", "i_size of link is 4096 (one more than the longest target)", 0,
               [](Patcher& p) { set_size(p, "link", 4096); }});
  r.push_back({"symlink_empty", "symlinks", "i_size of link is 0", 0, [](Patcher& p) { set_size(p, "link", 0); }});
  r.push_back({"symlink_nul", "symlinks", "link's target has a NUL in its middle", 0, [](Patcher& p) {
                 const auto ino = p.inode("link");
                 if (ino.layout() != format::Layout::FlatInline) fail("link is not inline");
                 p.at(ino.meta_end() + 3, 1)[0] = 0;
               }});
  // --- extraction ---
  r.push_back({"extract_symlink_then_file", "extract",
               "x/ lists the symlink s -> ../../canary/victim, then a regular file s ('pwned')", 0,
               [](Patcher& p) { rename_entry(p, "x", "t", "s"); }});
  r.push_back({"extract_symlink_then_dir", "extract",
               "x/ lists the symlink r -> ../../canary, then a directory r holding a file pwned", 0, [](Patcher& p) {
                 p.edit_dir("x", [](Entries& l) {
                   std::erase_if(l, [](const Patcher::Entry& e) { return e.name == "s" || e.name == "t"; });
                   Patcher::entry(l, "u").name = "r";
                 });
               }});
  // --- hostile but valid ---
  r.push_back({"bomb_sparse_exabytes", "bomb",
               "48-bit image whose empty file becomes a 4 EiB hole (FLAT_PLAIN, NULL address)", 0,
               [](Patcher& p) {
                 p.superblock([](format::Superblock& sb) { sb.feature_incompat |= format::kIncompat48Bit; });
                 p.edit_inode("empty", [](DiskInode& d) {
                   if (d.layout != format::Layout::FlatPlain || d.u != format::kNullAddr) fail("empty is not a NULL FLAT_PLAIN file");
                   d.nb = 0xFFFF;
                   d.size = 1ull << 62;
                 });
               },
               Expect::Valid});

  // --- compressed: full indexes (base 1) ---
  r.push_back({"zfull_cblkcnt_zero", "compressed", "text.bin: a CBLKCNT of 1 block set to 0 blocks", 1, [](Patcher& p) {
                 const auto z = p.zinfo("text.bin");
                 const uint64_t lcn = find_full(p, z, [](uint64_t, const format::LclusterIndex& e) {
                   return is_cblkcnt(e) && (e.delta[0] & ~format::kDeltaCblkcnt) == 1;
                 });
                 auto e = p.full_index(z, lcn);
                 e.delta[0] = format::kDeltaCblkcnt;
                 p.set_full_index(z, lcn, e);
               }});
  r.push_back({"zfull_cblkcnt_past_limit", "compressed", "text.bin: a CBLKCNT of 2047 blocks (8 MiB, past the 1 MiB pcluster limit)", 1,
               [](Patcher& p) {
                 const auto z = p.zinfo("text.bin");
                 const uint64_t lcn = find_full(p, z, [](uint64_t, const format::LclusterIndex& e) { return is_cblkcnt(e); });
                 auto e = p.full_index(z, lcn);
                 e.delta[0] = format::kDeltaCblkcnt | 2047;
                 p.set_full_index(z, lcn, e);
               }});
  r.push_back({"zfull_cblkcnt_past_image", "compressed", "text.bin: a CBLKCNT of 255 blocks, past the end of the image", 1,
               [](Patcher& p) {
                 if (p.size() / p.block_size() > 200) fail("base image too large for zfull_cblkcnt_past_image");
                 const auto z = p.zinfo("text.bin");
                 const uint64_t lcn = find_full(p, z, [](uint64_t, const format::LclusterIndex& e) { return is_cblkcnt(e); });
                 auto e = p.full_index(z, lcn);
                 e.delta[0] = format::kDeltaCblkcnt | 255;
                 p.set_full_index(z, lcn, e);
               }});
  r.push_back({"zfull_lookback_zero", "compressed", "zeros.bin: a NONHEAD looks back 0 lclusters (to itself)", 1, [](Patcher& p) {
                 const auto z = p.zinfo("zeros.bin");
                 const uint64_t lcn = find_full(p, z, [](uint64_t, const format::LclusterIndex& e) {
                   return e.type == LclusterType::NonHead && !is_cblkcnt(e);
                 });
                 auto e = p.full_index(z, lcn);
                 e.delta[0] = 0;
                 p.set_full_index(z, lcn, e);
               }});
  r.push_back({"zfull_lookback_before_start", "compressed", "zeros.bin: a NONHEAD looks back 2047 lclusters, before lcluster 0", 1,
               [](Patcher& p) {
                 const auto z = p.zinfo("zeros.bin");
                 const uint64_t lcn = find_full(p, z, [](uint64_t lcn, const format::LclusterIndex& e) {
                   return lcn < 2047 && e.type == LclusterType::NonHead && !is_cblkcnt(e);
                 });
                 auto e = p.full_index(z, lcn);
                 e.delta[0] = 2047;
                 p.set_full_index(z, lcn, e);
               }});
  r.push_back({"zfull_extent_past_limit", "compressed", "zeros.bin: every HEAD after lcluster 0 made NONHEAD: one 13 MiB extent", 1,
               [](Patcher& p) {
                 const auto z = p.zinfo("zeros.bin");
                 for (uint64_t lcn = 1; lcn < z.lclusters; ++lcn) {
                   auto e = p.full_index(z, lcn);
                   if (e.type == LclusterType::NonHead) continue;
                   format::LclusterIndex n;
                   n.type = LclusterType::NonHead;
                   n.delta[0] = uint16_t(std::min<uint64_t>(lcn, 2047));
                   n.delta[1] = 1;
                   p.set_full_index(z, lcn, n);
                 }
               }});
  r.push_back({"zbomb_lcluster_bits", "bomb", "zeros.bin: 128 MiB lclusters and i_size 1 GiB (an extent declared 1 GiB long)", 1,
               [](Patcher& p) {
                 p.edit_map_header("zeros.bin", [](format::MapHeader& h) { h.cluster_bits = 15; });
                 set_size(p, "zeros.bin", 1ull << 30);
               }});
  r.push_back({"zbomb_size", "bomb", "text.bin: i_size 2^40 (2^28 lcluster indexes, far past the image)", 1,
               [](Patcher& p) { set_size(p, "text.bin", 1ull << 40); }});
  r.push_back({"zheader_algorithm_unknown", "compressed", "text.bin: HEAD1 algorithm 15", 1,
               [](Patcher& p) { p.edit_map_header("text.bin", [](format::MapHeader& h) { h.algorithm_type = 0x0F; }); }});
  r.push_back({"zheader_algorithm_absent", "compressed", "text.bin: HEAD1 algorithm lzma, which the superblock does not list", 1,
               [](Patcher& p) { p.edit_map_header("text.bin", [](format::MapHeader& h) { h.algorithm_type = 0x01; }); }});
  // --- compressed: compact indexes (base 2) ---
  r.push_back({"zcompact_lookback_zero", "compressed", "zeros.bin: a NONHEAD in a 2-byte pack looks back 0 lclusters", 2,
               [](Patcher& p) {
                 const auto z = p.zinfo("zeros.bin");
                 const uint32_t lcn = find_compact(p, z, [](uint32_t, const format::CompactEntry& e, const auto& s) {
                   return s.vcnt == format::kPack2BEntries && s.index + 1 < s.vcnt && e.type == LclusterType::NonHead &&
                          !(e.lo & format::kDeltaCblkcnt);
                 });
                 p.set_compact_index(z, lcn, {LclusterType::NonHead, 0});
               }});
  r.push_back({"zcompact_cblkcnt_past_limit", "compressed", "text.bin: a compact CBLKCNT of 2047 blocks", 2, [](Patcher& p) {
                 const auto z = p.zinfo("text.bin");
                 const uint32_t lcn = find_compact(p, z, [](uint32_t, const format::CompactEntry& e, const auto&) {
                   return e.type == LclusterType::NonHead && (e.lo & format::kDeltaCblkcnt);
                 });
                 p.set_compact_index(z, lcn, {LclusterType::NonHead, format::kDeltaCblkcnt | 2047});
               }});
  r.push_back({"zinline_cross_block", "inline", "small.txt: its inline (ztailpacking) pcluster claims 4096 bytes, crossing a block", 2,
               [](Patcher& p) {
                 p.edit_map_header("small.txt", [](format::MapHeader& h) {
                   if (!(h.advise & format::kAdviseInlinePcluster)) fail("small.txt has no inline pcluster");
                   h.set_idata_size(4096);
                 });
               }});
  return r;
}

}  // namespace

const char* expect_name(Expect e) { return e == Expect::Corrupt ? "corrupt" : "valid"; }

std::vector<NastyImage> generate(const std::string& scratch_dir) {
  make_dirs(scratch_dir);
  Base bases[3];
  bases[0] = {"base_plain", "uncompressed base image (extended inodes, inline tails, xattrs, symlinks)", scratch_dir + "/base_plain.img", {}, {}};
  bases[1] = {"base_lz4_full", "lz4 base image with full indexes and 1-block pclusters", scratch_dir + "/base_lz4_full.img", {}, {}};
  bases[2] = {"base_lz4_compact", "lz4 base image with compact indexes, 16 KiB pclusters and inline tails",
              scratch_dir + "/base_lz4_compact.img", {}, {}};
  make_plain(bases[0], scratch_dir);
  make_lz4(bases[1], scratch_dir, true);
  make_lz4(bases[2], scratch_dir, false);

  std::vector<NastyImage> out;
  for (auto& b : bases) out.push_back({b.name, "base", b.what, Expect::Valid, b.bytes});
  for (auto& r : recipes()) {
    Patcher p(bases[r.base]);
    try {
      r.patch(p);
    } catch (const std::exception& e) {
      fail(std::string(r.name) + ": " + e.what());
    }
    out.push_back({r.name, r.bug_class, r.what, r.expect, p.finish()});
  }
  return out;
}

void write_corpus(const std::vector<NastyImage>& images, const std::string& out_dir) {
  make_dirs(out_dir);
  std::string manifest = "# file\tclass\texpect\tdescription\n";
  for (auto& img : images) {
    write_file(out_dir + "/" + img.name + ".img", img.bytes);
    manifest += img.name + ".img\t" + img.bug_class + "\t" + expect_name(img.expect) + "\t" + img.what + "\n";
  }
  write_file(out_dir + "/manifest.tsv", as_bytes(manifest));
}

}  // namespace erofs::nasty
