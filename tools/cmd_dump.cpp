// erofs dump: the superblock, feature names, inode counts by type and layout, bytes of metadata
// and data.
#include <sys/stat.h>

#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format/constants.h"
#include "format/endian.h"
#include "format/superblock.h"
#include "tools/cli.h"
#include "tools/command.h"
#include "tools/format_util.h"
#include "tools/open_image.h"

namespace erofs::tools {
namespace {

struct Counts {
  std::map<std::string, uint64_t> by_type, by_layout;
  uint64_t inodes = 0, compact = 0, extended = 0, file_bytes = 0, data_blocks = 0;
};

const char* type_name(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "regular";
    case S_IFDIR: return "directory";
    case S_IFLNK: return "symlink";
    case S_IFCHR: return "chardev";
    case S_IFBLK: return "blockdev";
    case S_IFIFO: return "fifo";
    case S_IFSOCK: return "socket";
  }
  return "unknown";
}

// Blocks an inode's data occupies outside its metadata: flat layouts count whole blocks, compressed
// layouts record their block count in i_u.
uint64_t data_blocks(const reader::Inode& ino, uint32_t bs) {
  switch (ino.layout()) {
    case format::Layout::FlatPlain: return ino.startblk == format::kNullAddr ? 0 : (ino.size + bs - 1) / bs;
    case format::Layout::FlatInline: return ino.size / bs;
    case format::Layout::CompressedFull:
    case format::Layout::CompressedCompact: return ino.disk.u | (uint64_t(ino.disk.extended ? ino.disk.nb : 0) << 32);
    case format::Layout::ChunkBased: return 0;  // counted by chunk_blocks(), which reads the chunk table
  }
  return 0;
}

// Blocks of the chunks that are mapped (holes take none).
uint64_t chunk_blocks(const reader::Image& img, const reader::Inode& ino) {
  const uint32_t bs = img.block_size();
  const uint16_t fmt = uint16_t(ino.disk.u);
  const unsigned chunk_bits = unsigned(__builtin_ctz(bs)) + (fmt & format::kChunkFormatBlkbitsMask);
  const uint64_t chunk = 1ull << chunk_bits, count = (ino.size + chunk - 1) >> chunk_bits;
  const uint64_t unit = (fmt & format::kChunkFormatIndexes) ? 8 : 4;
  std::vector<uint8_t> table(size_t(count * unit));
  img.read_raw((ino.meta_end() + unit - 1) / unit * unit, table);
  uint64_t blocks = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* e = table.data() + i * unit;
    bool hole = unit == 4 ? format::get_le32(e) == format::kNullAddr
                          : (format::get_le32(e + 4) | (uint64_t(format::get_le16(e)) << 32)) ==
                                ((fmt & format::kChunkFormat48Bit) ? (1ull << 48) - 1 : format::kNullAddr);
    if (!hole) blocks += (std::min(chunk, ino.size - (i << chunk_bits)) + bs - 1) / bs;
  }
  return blocks;
}

void walk(const reader::Image& img, const reader::Inode& dir, Counts& c, std::set<uint64_t>& seen) {
  img.read_dir(dir, [&](const reader::DirEntry& e) {
    if (e.name == "." || e.name == ".." || !seen.insert(e.nid).second) return true;
    reader::Inode ino = img.inode(e.nid);
    ++c.inodes;
    ++c.by_type[type_name(ino.mode)];
    if (S_ISREG(ino.mode) || S_ISDIR(ino.mode) || S_ISLNK(ino.mode)) {
      ++c.by_layout[format::layout_name(ino.layout())];
      c.data_blocks += ino.layout() == format::Layout::ChunkBased ? chunk_blocks(img, ino)
                                                                  : data_blocks(ino, img.block_size());
    }
    (ino.disk.extended ? c.extended : c.compact)++;
    if (S_ISREG(ino.mode)) c.file_bytes += ino.size;
    if (ino.is_dir()) walk(img, ino, c, seen);
    return true;
  });
}

int run_dump(int argc, char** argv) {
  CLI::App app{"Show an EROFS image's superblock, features and statistics.", "erofs dump"};
  std::string image;
  bool json = false;
  app.add_option("IMAGE", image, "Image to read")->required();
  app.add_flag("--json", json, "Print as JSON");
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  auto img = open_image(image);
  const auto& sb = img->superblock();
  Counts c;
  std::set<uint64_t> seen = {img->root_nid()};
  reader::Inode root = img->inode(img->root_nid());
  c.inodes = 1;
  ++c.by_type["directory"];
  ++c.by_layout[format::layout_name(root.layout())];
  (root.disk.extended ? c.extended : c.compact)++;
  c.data_blocks += data_blocks(root, img->block_size());
  walk(*img, root, c, seen);
  uint64_t data_bytes = c.data_blocks * img->block_size();
  uint64_t meta_bytes = img->image_size() > data_bytes ? img->image_size() - data_bytes : 0;
  std::string uuid;
  for (int i = 0; i < 16; ++i) uuid += fmt::format("{}{:02x}", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "", sb.uuid[i]);
  auto incompat = format::incompat_feature_names(sb.feature_incompat);
  auto compat = format::compat_feature_names(sb.feature_compat);

  if (json) {
    auto obj = [](const std::map<std::string, uint64_t>& m) {
      std::string s;
      for (auto& [k, v] : m) s += fmt::format("{}\"{}\": {}", s.empty() ? "" : ", ", k, v);
      return "{" + s + "}";
    };
    auto arr = [](const std::vector<std::string>& v) {
      std::string s;
      for (auto& x : v) s += fmt::format("{}\"{}\"", s.empty() ? "" : ", ", x);
      return "[" + s + "]";
    };
    fmt::print(
        "{{\"image\": \"{}\", \"block_size\": {}, \"blocks\": {}, \"image_bytes\": {}, \"uuid\": \"{}\", "
        "\"label\": \"{}\", \"root_nid\": {}, \"inodes\": {}, \"epoch\": {}, \"meta_blkaddr\": {}, "
        "\"xattr_blkaddr\": {}, \"compat_features\": {}, \"incompat_features\": {}, \"by_type\": {}, "
        "\"by_layout\": {}, \"compact_inodes\": {}, \"extended_inodes\": {}, \"file_bytes\": {}, "
        "\"data_bytes\": {}, \"metadata_bytes\": {}}}\n",
        json_escape(image), img->block_size(), sb.blocks(), img->image_size(), uuid, json_escape(sb.label()),
        img->root_nid(), c.inodes, sb.epoch, sb.meta_blkaddr, sb.xattr_blkaddr, arr(compat), arr(incompat),
        obj(c.by_type), obj(c.by_layout), c.compact, c.extended, c.file_bytes, data_bytes, meta_bytes);
    return kExitOk;
  }
  fmt::print("Image:               {}\n", image);
  fmt::print("Block size:          {}\n", img->block_size());
  fmt::print("Blocks:              {} ({})\n", sb.blocks(), human_bytes(img->image_size()));
  fmt::print("UUID:                {}\n", uuid);
  fmt::print("Label:               {}\n", sb.label());
  fmt::print("Root nid:            {}\n", img->root_nid());
  fmt::print("Inodes (superblock): {}\n", sb.inos);
  fmt::print("Epoch:               {}\n", sb.epoch);
  fmt::print("Meta / xattr block:  {} / {}\n", sb.meta_blkaddr, sb.xattr_blkaddr);
  fmt::print("Compat features:     {}\n", fmt::join(compat, " "));
  fmt::print("Incompat features:   {}\n", incompat.empty() ? "none" : fmt::format("{}", fmt::join(incompat, " ")));
  fmt::print("Inodes found:        {} ({} compact, {} extended)\n", c.inodes, c.compact, c.extended);
  for (auto& [k, v] : c.by_type) fmt::print("  {:<18} {}\n", k, v);
  fmt::print("Data layouts:\n");
  for (auto& [k, v] : c.by_layout) fmt::print("  {:<18} {}\n", k, v);
  fmt::print("File bytes:          {} ({})\n", c.file_bytes, human_bytes(c.file_bytes));
  fmt::print("Data bytes:          {} ({})\n", data_bytes, human_bytes(data_bytes));
  fmt::print("Metadata bytes:      {} ({})\n", meta_bytes, human_bytes(meta_bytes));
  return kExitOk;
}

RegisterCommand reg("dump", "show the superblock, features and statistics of an image", run_dump);

}  // namespace
}  // namespace erofs::tools
