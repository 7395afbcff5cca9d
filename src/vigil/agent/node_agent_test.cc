#include "vigil/agent/node_agent.h"

#include <gtest/gtest.h>

#include "vigil/agent/textfile.h"
#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::agent {
namespace {

NodeAgentOptions Health(const testing::TempDir& dir) {
  NodeAgentOptions o;
  o.suite = "health";
  o.scratch = dir.path();
  o.node = "n1";
  return o;
}

Result<NodeAgentResult> RunAgent(const NodeAgentOptions& o) {
  std::atomic<bool> interrupted{false};
  return RunNodeAgent(o, RunEvents{}, interrupted, SystemClock());
}

TEST(NodeAgentTest, AHealthCheckSaysOkAndWritesNothingUnasked) {
  testing::TempDir dir;
  const Result<NodeAgentResult> r = RunAgent(Health(dir));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->line, "OK");
  EXPECT_FALSE(r->failed);
  EXPECT_EQ(r->out, "");
  EXPECT_EQ(r->doc.node, "n1");
  EXPECT_EQ(r->doc.suite, "health");
  EXPECT_EQ(r->doc.benchmarks.front().name, "host-health");
  EXPECT_FALSE(r->slurm);
  EXPECT_EQ(dir.EntryCount(), 0);
}

TEST(NodeAgentTest, AFaultIsTheLineAndWritesTheDocumentAsked) {
  testing::TempDir dir;
  NodeAgentOptions o = Health(dir);
  o.set = {"host-health.min_free=16T"};
  o.out = dir.File("r.json");
  const Result<NodeAgentResult> r = RunAgent(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->failed);
  EXPECT_EQ(r->line, "vigil: filesystem / root_full=1 (+1 more)");
  EXPECT_EQ(r->out, o.out);
  EXPECT_TRUE(ReadNodeResults(o.out).ok());
}

TEST(NodeAgentTest, TheTextfileHoldsTheRunsFinalVerdict) {
  testing::TempDir dir;
  NodeAgentOptions o = Health(dir);
  o.set = {"host-health.min_free=16T"};
  o.textfile = dir.path();
  const Result<NodeAgentResult> r = RunAgent(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->textfile, dir.File("vigil.prom"));
  const Result<std::string> text = ReadFile(r->textfile);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, FormatTextfile(*r));
  EXPECT_NE(text->find("vigil_node_verdict{node=\"n1\",suite=\"health\",verdict=\"defective\"} 1"),
            std::string::npos)
      << *text;
  EXPECT_EQ(dir.EntryCount(), 1);
}

TEST(NodeAgentTest, BadOptionsNameTheirFlagBeforeAnythingRuns) {
  testing::TempDir dir;
  NodeAgentOptions o = Health(dir);
  o.scratch = dir.File("missing");
  EXPECT_EQ(RunAgent(o).status().message(),
            "--scratch " + dir.File("missing") + ": no such directory");
  o = Health(dir);
  o.set = {"nodot"};
  EXPECT_EQ(RunAgent(o).status().code(), StatusCode::kInvalidArgument);
  o = Health(dir);
  o.slurm = true;
  o.max_drained_share = 0;
  EXPECT_NE(RunAgent(o).status().message().find("--max-drained-share"), std::string::npos);
  o = Health(dir);
  o.textfile = dir.File("missing");
  EXPECT_EQ(RunAgent(o).status().message(),
            "--textfile " + dir.File("missing") + ": no such directory");
  o = Health(dir);
  o.suite = "fast";
  EXPECT_EQ(RunAgent(o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(dir.EntryCount(), 0);
}

}  // namespace
}  // namespace vigil::agent
