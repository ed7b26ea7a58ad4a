// Small printing helpers shared by the tools.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace erofs::tools {

std::string human_bytes(uint64_t n);         // "12.3 MiB"
std::string json_escape(std::string_view s);  // quoted-string body for JSON output
std::string mode_string(uint32_t mode);      // "drwxr-xr-x"

}  // namespace erofs::tools
