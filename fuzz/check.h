// Helpers shared by the fuzz targets.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace erofs::fuzz {

// A broken promise of the library under test: print it and abort, so libFuzzer records the input.
template <typename... Args>
[[noreturn]] void violation(fmt::format_string<Args...> f, Args&&... args) {
  std::fprintf(stderr, "fuzz: contract violation: %s\n", fmt::format(f, std::forward<Args>(args)...).c_str());
  std::abort();
}

}  // namespace erofs::fuzz
