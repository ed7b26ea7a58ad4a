#include "tools/cli.h"

#include <fmt/format.h>

#include "tools/command.h"

namespace erofs::tools {

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "{}: {} (see '{} --help')\n", app.get_name(), e.what(), app.get_name());
    return kExitError;
  }
}

}  // namespace erofs::tools
