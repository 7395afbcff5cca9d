#include "vigil/cluster/command.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "vigil/testing/scoped_env.h"

namespace vigil::cluster {
namespace {

Result<CommandOutput> RunArgs(std::vector<std::string> argv, double timeout_s = 10,
                              std::vector<std::string> env = {}) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.env = std::move(env);
  spec.timeout_s = timeout_s;
  return MakeProcessRunner()->Run(spec);
}

TEST(CommandTest, BothStreamsAndTheExitCodeComeBack) {
  const Result<CommandOutput> r = RunArgs({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(CommandTest, LastOutputIsTheEndOfStandardErrorOrElseOutput) {
  EXPECT_EQ(LastOutput({.exit_code = 1, .out = "out\n", .err = " err\n"}), "err");
  EXPECT_EQ(LastOutput({.exit_code = 1, .out = "out\n", .err = ""}), "out");
  EXPECT_EQ(LastOutput({.exit_code = 1, .out = "", .err = "0123456789"}, 4), "...6789");
  EXPECT_EQ(LastOutput({}), "");
}

TEST(CommandTest, ArgumentsReachTheProgramAsTheyAre) {
  // No shell between: what would be a command substitution or a second command is only text.
  const Result<CommandOutput> r = RunArgs({"printf", "%s", "vigil: GPU 3; $(reboot) `x` | y"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "vigil: GPU 3; $(reboot) `x` | y");
}

TEST(CommandTest, TheEnvironmentIsAddedTo) {
  const Result<CommandOutput> r =
      RunArgs({"sh", "-c", "echo $VIGIL_A-${PATH:+path}"}, 10, {"VIGIL_A=7"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "7-path\n");
}

TEST(CommandTest, VariablesOfAPrefixAreLeftOut) {
  const testing::ScopedEnv narrowed("VIGIL_NARROW_USERS", "daemon");
  const testing::ScopedEnv kept("VIGIL_KEPT", "k");
  CommandSpec spec;
  spec.argv = {"sh", "-c", "echo ${VIGIL_NARROW_USERS-unset} ${VIGIL_NARROW_X-unset} $VIGIL_KEPT"};
  spec.unset_prefixes = {"VIGIL_NARROW_"};
  spec.env = {"VIGIL_NARROW_X=added"};  // what the caller adds still reaches the program
  const Result<CommandOutput> r = MakeProcessRunner()->Run(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "unset added k\n");
}

TEST(CommandTest, ASignalIsAnExitCodeAbove128) {
  const Result<CommandOutput> r = RunArgs({"sh", "-c", "kill -9 $$"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 128 + 9);
}

TEST(CommandTest, AProgramThatDoesNotExistIsNotFound) {
  const Result<CommandOutput> r = RunArgs({"/nonexistent/scontrol", "show", "node"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/scontrol show node: cannot run"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(RunArgs({}).status().code(), StatusCode::kInvalidArgument);
}

TEST(CommandTest, ARunawayIsKilledWithItsChildrenAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  // The background sleep holds the pipes open: only killing the group ends the wait.
  const Result<CommandOutput> r = RunArgs({"sh", "-c", "sleep 30 & sleep 30"}, 0.3);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("still running after 0.3 s, killed"), std::string::npos);
  EXPECT_LT(took, 5);
}

TEST(CommandTest, CancellingTerminatesTheGroupAndSaysSo) {
  std::atomic<bool> cancel{false};
  CommandSpec spec;
  // The trap shows the group got SIGTERM first (a launcher tears its daemons down on it).
  spec.argv = {"sh", "-c", "trap 'echo terminated; exit 0' TERM; sleep 30 & wait"};
  spec.timeout_s = 60;
  spec.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const auto start = std::chrono::steady_clock::now();
  const Result<CommandOutput> r = MakeProcessRunner()->Run(spec);
  canceller.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            kTerminateGrace + 3);
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status().ToString();
}

TEST(CommandTest, OutputBeyondTheCapIsReadAndDropped) {
  const Result<CommandOutput> r = RunArgs({"head", "-c", "3000000", "/dev/zero"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out.size(), kMaxCommandOutput);
}

TEST(CommandTest, CommandTextQuotesWhatAShellWouldRead) {
  EXPECT_EQ(CommandText({"scontrol", "update", "NodeName=n1", "Reason=vigil: GPU 3"}),
            "scontrol update NodeName=n1 \"Reason=vigil: GPU 3\"");
  EXPECT_EQ(CommandText({"x", ""}), "x \"\"");
}

TEST(CommandTest, AShellWordIsReadBackAsItWas) {
  const std::unique_ptr<CommandRunner> runner = MakeProcessRunner();
  const std::vector<std::string> words = {
      "plain", "it's", "a b", "$(touch /x)`id`", "", "'\\''", "--wrap=x \"$HOME\"!"};
  for (const std::string& word : words) {
    CommandSpec spec;
    spec.argv = {"/bin/sh", "-c", "printf %s " + ShellWord(word)};
    const Result<CommandOutput> out = runner->Run(spec);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->out, word);
  }
  // A whole command line: each word comes back as it was, the plain ones unquoted.
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", "printf '%s|' " + ShellCommandText(words)};
  const Result<CommandOutput> line = runner->Run(spec);
  ASSERT_TRUE(line.ok());
  std::string expected;
  for (const std::string& word : words) expected += word + "|";
  EXPECT_EQ(line->out, expected);
  EXPECT_EQ(ShellCommandText({"sbatch", "--nodes=1", "a b"}), "sbatch --nodes=1 'a b'");
}

}  // namespace
}  // namespace vigil::cluster
