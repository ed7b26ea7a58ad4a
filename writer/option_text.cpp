#include "writer/option_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace erofs::writer {
namespace {

CompressionOptions& compression(BuildOptions& o) {
  if (!o.compression) o.compression.emplace();
  return *o.compression;
}

}  // namespace

void apply_uuid(const std::string& text, BuildOptions& o) {
  if (text.empty()) return;
  if (text == "random") {
    o.uuid_mode = UuidMode::Random;
    return;
  }
  if (text == "clear") {
    o.uuid_mode = UuidMode::Clear;
    return;
  }
  std::string hex;
  for (char c : text)
    if (c != '-') hex += c;
  if (hex.size() != 32 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    throw OptionError("invalid UUID '" + text + "' (expected random, clear or xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
  for (int i = 0; i < 16; ++i) o.uuid[i] = uint8_t(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  o.uuid_mode = UuidMode::Fixed;
}

void apply_extended_options(const std::string& list, BuildOptions& o) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string opt = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (opt.empty()) continue;
    if (opt == "force-inode-compact") o.inode_form = InodeForm::Compact;
    else if (opt == "force-inode-extended") o.inode_form = InodeForm::Extended;
    else if (opt == "legacy-compress") compression(o).full_indexes = true;
    else if (opt == "ztailpacking") compression(o).ztailpacking = true;
    else if (opt == "fragments") compression(o).fragments = true;
    else if (opt == "all-fragments") compression(o).all_fragments = compression(o).fragments = true;
    else if (opt == "dedupe") compression(o).dedupe = true;
    else throw OptionError("unknown extended option '" + opt + "'");
  }
}

void apply_algorithms(const std::string& text, BuildOptions& o) {
  if (text.empty()) return;
  auto& c = compression(o);
  size_t colon = text.find(':');
  try {
    c.algorithms.push_back(compress::parse_spec(text.substr(0, colon)));
    if (colon != std::string::npos) c.algorithms.push_back(compress::parse_spec(text.substr(colon + 1)));
  } catch (const compress::SpecError& e) {
    throw OptionError(std::string("-z: ") + e.what());
  }
}

std::vector<CompressHint> read_compress_hints(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw OptionError("cannot read compress hints " + path + ": " + std::strerror(errno));
  std::vector<CompressHint> hints;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream fields(line);
    std::string size;
    if (!(fields >> size) || size.starts_with("#")) continue;
    CompressHint h;
    try {
      h.pcluster_bytes = uint32_t(std::stoul(size));
    } catch (const std::exception&) {
      throw OptionError(fmt::format("{}:{}: '{}' is not a pcluster size", path, n, size));
    }
    if (!(fields >> h.pattern)) throw OptionError(fmt::format("{}:{}: missing the path pattern", path, n));
    std::string alg;
    if (fields >> alg) {
      if (alg.find_first_not_of("0123456789") != std::string::npos)
        throw OptionError(fmt::format("{}:{}: '{}' is not an algorithm index", path, n, alg));
      h.algorithm = unsigned(std::stoul(alg));
    }
    hints.push_back(std::move(h));
  }
  return hints;
}

std::vector<std::string> read_hot_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw OptionError("cannot read hot list " + path + ": " + std::strerror(errno));
  std::vector<std::string> files;
  std::string line;
  while (std::getline(in, line)) {
    const size_t start = line.find_first_not_of(" \t/");
    if (start == std::string::npos || line[start] == '#') continue;
    const size_t end = line.find_last_not_of(" \t");
    files.push_back(line.substr(start, end - start + 1));
  }
  return files;
}

void finish_compression_options(BuildOptions& o, uint32_t pcluster_bytes, unsigned workers,
                                std::vector<CompressHint> hints) {
  if (!o.compression) {
    if (pcluster_bytes) throw OptionError("-C needs a compression algorithm (-z)");
    if (!hints.empty()) throw OptionError("--compress-hints needs a compression algorithm (-z)");
    return;
  }
  if (o.compression->algorithms.empty()) throw OptionError("-E options that compress need a compression algorithm (-z)");
  o.compression->pcluster_bytes = pcluster_bytes;
  o.compression->workers = workers;
  o.compression->hints = std::move(hints);
}

}  // namespace erofs::writer
