#include "cli/command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace vigil::cli {
namespace {

struct CountOptions {
  int count = 0;
};

CLI::App* SetupCount(CLI::App& parent, CountOptions& o) {
  CLI::App* c = parent.add_subcommand("count", "Exit with --n");
  c->add_option("--n", o.count);
  return c;
}

CommandResult RunCount(const CountOptions& o) { return static_cast<ExitCode>(o.count); }

struct FailOptions {};

CLI::App* SetupFail(CLI::App& parent, FailOptions&) { return parent.add_subcommand("fail"); }

CommandResult RunFail(const FailOptions&) { return Status::InvalidArgument("failed"); }

// The app of a table with `count` at the top level and `fail` in the group `g`, parsed from
// `args`; the result of its chosen command.
CommandResult RunTable(std::vector<std::string> args) {
  CLI::App app;
  app.require_subcommand(1);
  CommandTable table(app);
  table.Add(app, SetupCount, RunCount);
  CLI::App& group = table.Group("g", "A group");
  table.Add(group, SetupFail, RunFail);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return table.RunChosen();
}

TEST(CommandTableTest, RunsTheChosenCommandWithItsOptions) {
  const CommandResult r = RunTable({"count", "--n", "1"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, ExitCode::kDefect);
}

TEST(CommandTableTest, RunsACommandOfAGroup) {
  const CommandResult r = RunTable({"g", "fail"});
  EXPECT_EQ(r.status().message(), "failed");
}

TEST(CommandTableTest, AGroupRequiresOneOfItsCommands) {
  EXPECT_THROW(RunTable({"g"}), CLI::ParseError);
}

TEST(CommandTableTest, NoneChosenIsInternal) {
  CLI::App app;
  CommandTable table(app);
  table.Add(app, SetupCount, RunCount);
  app.parse(std::vector<std::string>{});
  EXPECT_EQ(table.RunChosen().status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace vigil::cli
