#include <cstdio>
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "tools/command.h"

namespace erofs::tools {

std::map<std::string, Command>& commands() {
  static std::map<std::string, Command> table;
  return table;
}

}  // namespace erofs::tools

namespace {

void usage(FILE* out) {
  fmt::print(out, "usage: erofs COMMAND [OPTIONS] ...\n\nBuild, check and read EROFS images.\n\nCommands:\n");
  for (auto& [name, cmd] : erofs::tools::commands()) fmt::print(out, "  {:<9} {}\n", name, cmd.summary);
  fmt::print(out, "\nRun 'erofs COMMAND --help' for the options of one command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return erofs::tools::kExitError;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(stdout);
    return 0;
  }
  if (name == "--version") {
    fmt::print("erofs-kit 0.1.0\n");
    return 0;
  }
  auto& table = erofs::tools::commands();
  auto it = table.find(name);
  if (it == table.end()) {
    fmt::print(stderr, "erofs: unknown command '{}'\n", name);
    usage(stderr);
    return erofs::tools::kExitError;
  }
  try {
    return it->second.run(argc - 1, argv + 1);
  } catch (const std::exception& e) {
    fmt::print(stderr, "erofs {}: {}\n", name, e.what());
    return erofs::tools::kExitError;
  }
}
