#include "cli/command.h"

#include <string>

namespace vigil::cli {

CLI::App& CommandTable::Group(std::string_view name, std::string_view description) {
  CLI::App* group = app_.add_subcommand(std::string(name), std::string(description));
  group->require_subcommand(1);
  return *group;
}

CommandResult CommandTable::RunChosen() const {
  for (const std::unique_ptr<Command>& c : commands_) {
    if (c->chosen()) return c->Run();
  }
  return Status::Internal("no subcommand chosen");
}

}  // namespace vigil::cli
