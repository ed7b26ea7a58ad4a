// --exclude-path and --exclude-regex, shared by every source (directory walk, tar stream).
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "writer/options.h"

namespace erofs::writer {

class Exclusions {
 public:
  // Throws BuildError for a regex that does not compile.
  explicit Exclusions(const SourceOptions& options);
  bool empty() const { return paths_.empty() && regexes_.empty(); }
  // `rel`: the path in the image without its leading '/'.
  bool excluded(const std::string& rel) const;

 private:
  std::vector<std::regex> regexes_;
  std::vector<std::string> paths_;  // normalised: no "./" or '/' in front, no '/' behind
};

}  // namespace erofs::writer
