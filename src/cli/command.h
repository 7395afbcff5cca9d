// The table of subcommands that main wires together: each row is where a subcommand hangs (the
// top level or a group such as `model`), the Setup that adds it with its flags, and the Run that
// runs it on the options parsed (STYLE.md 9, CLI11's subcommands in files).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string_view>
#include <vector>

#include "cli/common.h"

namespace vigil::cli {

// One subcommand and the options its flags fill.
class Command {
 public:
  virtual ~Command() = default;
  // True when the command line chose this subcommand (after CLI::App::parse).
  virtual bool chosen() const = 0;
  virtual CommandResult Run() const = 0;
};

template <typename Options>
class CommandOf final : public Command {
 public:
  using Setup = CLI::App* (*)(CLI::App& parent, Options& options);
  using Runner = CommandResult (*)(const Options& options);

  // Adds the subcommand under `parent` (setup binds its flags to this object's options).
  CommandOf(CLI::App& parent, Setup setup, Runner run) : app_(setup(parent, options_)), run_(run) {}
  CommandOf(const CommandOf&) = delete;
  CommandOf& operator=(const CommandOf&) = delete;

  bool chosen() const override { return app_->parsed(); }
  CommandResult Run() const override { return run_(options_); }

 private:
  Options options_;  // before app_: setup binds to it
  CLI::App* app_;    // owned by the parent app
  Runner run_;
};

// The subcommands of one CLI::App, in the order they were added (the order of --help). Not
// thread-safe; lives no longer than the app.
class CommandTable {
 public:
  explicit CommandTable(CLI::App& app) : app_(app) {}

  // A group that holds subcommands of its own (`vigil model ...`), added to the app and requiring
  // one of them; the app owns it.
  CLI::App& Group(std::string_view name, std::string_view description);

  // Adds the subcommand `setup` makes under `parent` (the app or one of its groups).
  template <typename Options>
  void Add(CLI::App& parent, CLI::App* (*setup)(CLI::App&, Options&),
           CommandResult (*run)(const Options&)) {
    commands_.push_back(std::make_unique<CommandOf<Options>>(parent, setup, run));
  }

  // Runs the subcommand the command line chose; Internal when none was (the app requires one).
  CommandResult RunChosen() const;

 private:
  CLI::App& app_;
  std::vector<std::unique_ptr<Command>> commands_;
};

}  // namespace vigil::cli
