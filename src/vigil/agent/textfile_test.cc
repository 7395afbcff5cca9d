#include "vigil/agent/textfile.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>

#include "vigil/core/file.h"
#include "vigil/testing/document_parts.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::agent {
namespace {

using testing::Figure;
using testing::Record;

// A health run that found a fault: one benchmark ok with a node figure, a GPU's figure, a link's
// and a missing one; one failed; one skipped; one critical finding.
NodeAgentResult FaultyRun() {
  NodeAgentResult r;
  r.doc.node = "gpu-\"7\"";  // a quote, escaped in the label
  r.doc.suite = "health";
  r.doc.end_time = "2026-11-24T09:30:00.250Z";
  BenchmarkRecord ok = Record("host-health", "node", BenchStatus::kOk);
  ok.metrics = {Figure("host-health/root_full", 1, ""), Figure("host-health/temp_c:3", 71.5, "C"),
                Figure("host-health/p2p_gbps:0-3", 50, "GB/s"),
                Figure("host-health/fan_rpm", std::nan(""), "rpm")};
  BenchmarkRecord failed = Record("gpu-health", "gpu", BenchStatus::kFailed);
  failed.metrics = {Figure("gpu-health/ecc_dbe:0", 2, "")};  // a failed run's figures are not read
  BenchmarkRecord skipped = Record("gpu-gemm", "gpu", BenchStatus::kSkipped);
  r.doc.benchmarks = {ok, failed, skipped};
  learned::Finding f;
  f.severity = learned::Severity::kCritical;
  r.judged.findings = {.defective = true, .findings = {f}};
  r.failed = true;
  return r;
}

TEST(TextfileTest, AFaultyRunIsDefectiveWithItsCountsAndFigures) {
  EXPECT_EQ(
      FormatTextfile(FaultyRun()),
      R"(# HELP vigil_node_verdict The verdict of the node's latest vigil run: 1 on the verdict it got, 0 on the other (defective: the run exited 1).
# TYPE vigil_node_verdict gauge
vigil_node_verdict{node="gpu-\"7\"",suite="health",verdict="healthy"} 0
vigil_node_verdict{node="gpu-\"7\"",suite="health",verdict="defective"} 1
# HELP vigil_run_end_time_seconds When the node's latest vigil run ended.
# TYPE vigil_run_end_time_seconds gauge
vigil_run_end_time_seconds{node="gpu-\"7\"",suite="health"} 1795512600
# HELP vigil_run_findings Findings of the node's latest vigil run by severity (docs/validate.md).
# TYPE vigil_run_findings gauge
vigil_run_findings{node="gpu-\"7\"",suite="health",severity="minor"} 0
vigil_run_findings{node="gpu-\"7\"",suite="health",severity="major"} 0
vigil_run_findings{node="gpu-\"7\"",suite="health",severity="critical"} 1
# HELP vigil_run_benchmarks Benchmarks of the node's latest vigil run by status.
# TYPE vigil_run_benchmarks gauge
vigil_run_benchmarks{node="gpu-\"7\"",suite="health",status="ok"} 1
vigil_run_benchmarks{node="gpu-\"7\"",suite="health",status="failed"} 1
vigil_run_benchmarks{node="gpu-\"7\"",suite="health",status="skipped"} 1
# HELP vigil_run_figure A figure of the node's latest vigil run, in the unit its label names (index: the GPU, NIC or disk; empty for the node).
# TYPE vigil_run_figure gauge
vigil_run_figure{node="gpu-\"7\"",suite="health",benchmark="host-health",component="node",metric="root_full",index="",unit=""} 1
vigil_run_figure{node="gpu-\"7\"",suite="health",benchmark="host-health",component="node",metric="temp_c",index="3",unit="C"} 71.5
# HELP vigil_run_figures_left_out Figures of the node's latest vigil run not written: links between components, and those beyond the first 200.
# TYPE vigil_run_figures_left_out gauge
vigil_run_figures_left_out{node="gpu-\"7\"",suite="health"} 1
)");
}

TEST(TextfileTest, APassingRunIsHealthyAndAnUnreadableEndTimeHasNoLine) {
  NodeAgentResult r = FaultyRun();
  r.failed = false;
  r.doc.end_time = "";
  const std::string text = FormatTextfile(r);
  EXPECT_NE(text.find("verdict=\"healthy\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict=\"defective\"} 0\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("vigil_run_end_time_seconds"), std::string::npos) << text;
}

TEST(TextfileTest, FiguresStopAtTheCapAndTheRestAreCounted) {
  NodeAgentResult r = FaultyRun();
  BenchmarkRecord many = Record("gpu-gemm", "gpu", BenchStatus::kOk);
  for (size_t i = 0; i < kMaxTextfileFigures + 10; ++i) {
    many.metrics.push_back(Figure("gpu-gemm/tflops:" + std::to_string(i), 1, "TFLOP/s"));
  }
  r.doc.benchmarks = {many};
  const std::string text = FormatTextfile(r);
  size_t figures = 0;
  for (size_t at = 0; (at = text.find("\nvigil_run_figure{", at + 1)) != std::string::npos;) {
    ++figures;
  }
  EXPECT_EQ(figures, kMaxTextfileFigures);
  EXPECT_NE(text.find("index=\"199\""), std::string::npos);
  EXPECT_EQ(text.find("index=\"200\""), std::string::npos);
  EXPECT_NE(text.find("vigil_run_figures_left_out{node=\"gpu-\\\"7\\\"\",suite=\"health\"} 10\n"),
            std::string::npos)
      << text;
}

TEST(TextfileTest, WrittenWholeIntoTheDirectoryReadableByTheCollector) {
  testing::TempDir dir;
  ASSERT_TRUE(CheckTextfileDir(dir.path()).ok());
  ASSERT_TRUE(WriteTextfile(dir.path(), "a 1\n").ok());
  ASSERT_TRUE(WriteTextfile(dir.path(), "b 2\n").ok());
  EXPECT_EQ(*ReadFile(TextfilePath(dir.path())), "b 2\n");
  // No temporary file is left beside it, and node-exporter (another user) may read it.
  EXPECT_EQ(dir.EntryCount(), 1u);
  struct stat st {};
  ASSERT_EQ(stat(TextfilePath(dir.path()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(TextfileTest, ADirectoryThatIsMissingOrAFileIsRefused) {
  testing::TempDir dir;
  EXPECT_EQ(CheckTextfileDir(dir.File("missing")).message(),
            "--textfile " + dir.File("missing") + ": no such directory");
  ASSERT_TRUE(WriteFileAtomic(dir.File("file"), "").ok());
  EXPECT_EQ(CheckTextfileDir(dir.File("file")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckTextfileDir("").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil::agent
