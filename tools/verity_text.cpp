#include "tools/verity_text.h"

#include <fmt/format.h>

#include "verity/layout.h"
#include "verity/params.h"

namespace erofs::tools {

VeritySummary verity_summary(const format::VeritySuperblock& sb, uint64_t hash_offset,
                             std::span<const uint8_t> root_hash) {
  const verity::Params params = verity::params_of(sb);
  const verity::Layout layout = verity::compute_layout(params, sb.data_blocks);
  const uint64_t head = verity::tree_offset(hash_offset, params.hash_block_size) - hash_offset;
  return {verity::to_hex(root_hash), verity::to_hex(sb.salt), sb.algorithm, hash_offset, sb.data_block_size,
          sb.hash_block_size, sb.data_blocks, head + layout.tree_bytes};
}

std::string verity_json(const VeritySummary& v) {
  return fmt::format(
      "{{\"root_hash\": \"{}\", \"salt\": \"{}\", \"hash_offset\": {}, \"hash_algorithm\": \"{}\", "
      "\"data_block_size\": {}, \"hash_block_size\": {}, \"data_blocks\": {}, \"tree_bytes\": {}{}}}",
      v.root_hash, v.salt, v.hash_offset, v.hash_algorithm, v.data_block_size, v.hash_block_size, v.data_blocks,
      v.tree_bytes, v.seconds > 0 ? fmt::format(", \"seconds\": {:.3f}", v.seconds) : "");
}

std::vector<std::pair<std::string, std::string>> verity_lines(const VeritySummary& v, const std::string& hash_device) {
  return {{"root hash", v.root_hash},
          {"salt", v.salt.empty() ? "none" : v.salt},
          {"hash offset", fmt::format("{} (in {})", v.hash_offset, hash_device)},
          {"algorithm", v.hash_algorithm},
          {"block sizes", fmt::format("{} data, {} hash", v.data_block_size, v.hash_block_size)},
          {"data blocks", fmt::format("{}", v.data_blocks)}};
}

}  // namespace erofs::tools
