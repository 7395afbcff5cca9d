#include "vigil/remediate/backend.h"

#include <gtest/gtest.h>

#include <memory>

namespace vigil::remediate {
namespace {

TEST(SubstituteTest, ReplacesTheNamedPlaceholdersInEachArgument) {
  EXPECT_EQ(Substitute("{action}", "drain", "n1", "r"), "drain");
  EXPECT_EQ(Substitute("--node={node}:{node}", "drain", "n1", "r"), "--node=n1:n1");
  EXPECT_EQ(Substitute("{reason} {other} {", "drain", "n1", "vigil: GPU 3"),
            "vigil: GPU 3 {other} {");
  EXPECT_EQ(Substitute("plain", "drain", "{node}", "r"), "plain");
  // A value holding a placeholder is not expanded again.
  EXPECT_EQ(Substitute("{node}", "drain", "{reason}", "x"), "{reason}");
}

TEST(CommandBackendTest, RunsTheProgramWithoutAShell) {
  const std::unique_ptr<cluster::CommandRunner> runner = cluster::MakeProcessRunner();
  CommandBackendOptions o;
  o.argv = {"printf", "%s|%s|%s", "{action}", "{node}", "{reason}"};
  const std::unique_ptr<Backend> b = MakeCommandBackend(*runner, o);
  const Attempt a = b->Drain("n1", "vigil: GPU 3; $(reboot) `x`");
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  EXPECT_EQ(a.outcome, BackendOutcome::kDone);
  EXPECT_EQ(a.output, "drain|n1|vigil: GPU 3; $(reboot) `x`");
  EXPECT_NE(a.command.find("printf"), std::string::npos);
  const Result<std::optional<BackendView>> view = b->View();
  ASSERT_TRUE(view.ok());
  EXPECT_FALSE(view->has_value());
}

TEST(CommandBackendTest, ANonZeroExitIsAFailureWithTheCommandAndItsOutput) {
  const std::unique_ptr<cluster::CommandRunner> runner = cluster::MakeProcessRunner();
  CommandBackendOptions o;
  o.argv = {"sh", "-c", "echo cordon refused for $0 >&2; exit 3", "{node}"};
  const Attempt a = MakeCommandBackend(*runner, o)->Resume("n7");
  ASSERT_FALSE(a.status.ok());
  EXPECT_NE(a.status.message().find("exit 3: cordon refused for n7"), std::string::npos)
      << a.status.message();
  EXPECT_NE(a.status.message().find("sh -c"), std::string::npos) << a.status.message();
  EXPECT_EQ(a.output, "cordon refused for n7");

  o.argv = {"/nonexistent/cordon", "{node}"};
  const Attempt missing = MakeCommandBackend(*runner, o)->Drain("n7", "vigil: x");
  ASSERT_FALSE(missing.status.ok());
  EXPECT_NE(missing.status.message().find("/nonexistent/cordon"), std::string::npos)
      << missing.status.message();
}

TEST(SlurmBackendTest, AMissingScontrolIsAFailureNamingIt) {
  const std::unique_ptr<cluster::CommandRunner> runner = cluster::MakeProcessRunner();
  cluster::SlurmOptions o;
  o.scontrol = "/nonexistent/scontrol";
  const std::unique_ptr<Backend> b = MakeSlurmBackend(*runner, o, 0.05);
  const Attempt a = b->Drain("n1", "vigil: GPU 3 hbm");
  ASSERT_FALSE(a.status.ok());
  EXPECT_NE(a.status.message().find("/nonexistent/scontrol"), std::string::npos)
      << a.status.message();
  EXPECT_NE(a.command.find("/nonexistent/scontrol show node --oneliner"), std::string::npos)
      << a.command;
  EXPECT_FALSE(b->View().ok());
}

}  // namespace
}  // namespace vigil::remediate
