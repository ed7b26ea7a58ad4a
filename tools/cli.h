// Argument parsing shared by the subcommands, so every usage error is one line on stderr.
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

namespace erofs::tools {

// Returns nothing when the command should go on, or the exit code to return now (after --help, or
// after printing a usage error as "erofs CMD: message (see 'erofs CMD --help')").
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

}  // namespace erofs::tools
