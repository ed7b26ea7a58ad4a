// Subcommands register themselves here; main() dispatches on the first argument.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace erofs::tools {

struct Command {
  std::string summary;
  std::function<int(int argc, char** argv)> run;  // argv[0] is the subcommand name
};

std::map<std::string, Command>& commands();

struct RegisterCommand {
  RegisterCommand(const std::string& name, std::string summary, std::function<int(int, char**)> run) {
    commands()[name] = Command{std::move(summary), std::move(run)};
  }
};

// Exit codes shared by every tool.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitPartial = 2;  // finished, but some inputs were skipped

}  // namespace erofs::tools
