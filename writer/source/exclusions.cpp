#include "writer/source/exclusions.h"

#include <algorithm>

#include "writer/errors.h"

namespace erofs::writer {

Exclusions::Exclusions(const SourceOptions& o) {
  for (auto& r : o.exclude_regexes) {
    try {
      regexes_.emplace_back(r, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw BuildError("invalid --exclude-regex '" + r + "': " + e.what());
    }
  }
  for (auto p : o.exclude_paths) {
    while (p.starts_with("./")) p.erase(0, 2);
    while (p.starts_with("/")) p.erase(0, 1);
    while (p.size() > 1 && p.ends_with("/")) p.pop_back();
    paths_.push_back(p);
  }
}

bool Exclusions::excluded(const std::string& rel) const {
  if (std::find(paths_.begin(), paths_.end(), rel) != paths_.end()) return true;
  return std::any_of(regexes_.begin(), regexes_.end(), [&](const std::regex& re) { return std::regex_search(rel, re); });
}

}  // namespace erofs::writer
