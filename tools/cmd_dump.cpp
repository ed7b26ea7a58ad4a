// erofs dump: the superblock, feature names, inode counts by type and layout, bytes of metadata
// and data, and an appended dm-verity tree's parameters with the root hash its top block gives.
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format/superblock.h"
#include "reader/stats.h"
#include "reader/verity_tree.h"
#include "tools/cli.h"
#include "tools/command.h"
#include "tools/format_util.h"
#include "tools/open_image.h"
#include "tools/verity_text.h"

namespace erofs::tools {
namespace {

// The tree after the filesystem, as its superblock and top block describe it (fsck checks it
// against the data), or why they describe none.
struct AppendedVerity {
  std::optional<VeritySummary> summary;
  uint64_t hash_offset = 0;
  std::string damage;
};

std::optional<AppendedVerity> appended_verity(const reader::Image& img) {
  const auto stored = reader::find_appended_superblock(img);
  if (!stored) return std::nullopt;
  try {
    if (!stored->superblock) throw std::runtime_error(stored->damage);
    const reader::HashDevice device(img);
    return AppendedVerity{
        verity_summary(*stored->superblock, stored->offset, reader::stored_root_hash(img, device, *stored)),
        stored->offset, ""};
  } catch (const std::exception& e) {
    return AppendedVerity{std::nullopt, stored->offset, e.what()};
  }
}

std::string appended_json(const std::optional<AppendedVerity>& v) {
  if (!v) return "null";
  if (v->summary) return verity_json(*v->summary);
  return fmt::format("{{\"hash_offset\": {}, \"damage\": \"{}\"}}", v->hash_offset, json_escape(v->damage));
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
  const reader::ImageStats c = reader::count_image(*img);
  uint64_t data_bytes = c.data_blocks * img->block_size();
  // The filesystem's own bytes: an appended hash tree is neither data nor metadata.
  const uint64_t fs_bytes = reader::filesystem_bytes(*img);
  uint64_t meta_bytes = fs_bytes > data_bytes ? fs_bytes - data_bytes : 0;
  const std::optional<AppendedVerity> verity = appended_verity(*img);
  const std::string uuid = sb.uuid_text();
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
        "\"data_bytes\": {}, \"metadata_bytes\": {}, \"verity\": {}}}\n",
        json_escape(image), img->block_size(), sb.blocks(), img->image_size(), uuid, json_escape(sb.label()),
        img->root_nid(), c.inodes, sb.epoch, sb.meta_blkaddr, sb.xattr_blkaddr, arr(compat), arr(incompat),
        obj(c.by_type), obj(c.by_layout), c.compact_inodes, c.extended_inodes, c.file_bytes, data_bytes, meta_bytes,
        appended_json(verity));
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
  fmt::print("Inodes found:        {} ({} compact, {} extended)\n", c.inodes, c.compact_inodes, c.extended_inodes);
  for (auto& [k, v] : c.by_type) fmt::print("  {:<18} {}\n", k, v);
  fmt::print("Data layouts:\n");
  for (auto& [k, v] : c.by_layout) fmt::print("  {:<18} {}\n", k, v);
  fmt::print("File bytes:          {} ({})\n", c.file_bytes, human_bytes(c.file_bytes));
  fmt::print("Data bytes:          {} ({})\n", data_bytes, human_bytes(data_bytes));
  fmt::print("Metadata bytes:      {} ({})\n", meta_bytes, human_bytes(meta_bytes));
  if (verity && verity->summary)
    for (const auto& [label, value] : verity_lines(*verity->summary, "the image"))
      fmt::print("{:<21}{}\n", fmt::format("Verity {}:", label), value);
  else if (verity)
    fmt::print("Verity superblock:   at byte {}, damaged: {} (erofs fsck reports it)\n", verity->hash_offset,
               verity->damage);
  return kExitOk;
}

RegisterCommand reg("dump", "show the superblock, features and statistics of an image", run_dump);

}  // namespace
}  // namespace erofs::tools
