// End-to-end tests of `vigil run`, `vigil bench list` and `vigil version` through the built binary.
#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/lines.h"
#include "vigil/results/document.h"
#include "vigil/results/summary.h"
#include "vigil/testing/fake_sysfs.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

namespace fs = std::filesystem;

TEST(CliTest, Version) {
  ProcessResult r = RunVigil({"version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("vigil 0.1.0", 0), 0u) << r.out;
  // The build says whether it holds the CUDA benchmarks (it said "off" in CUDA builds).
  EXPECT_NE(r.out.find(VIGIL_BUILT_WITH_CUDA ? "CUDA on" : "CUDA off"), std::string::npos) << r.out;
  r = RunVigil({"version", "--json"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ((*ParseJson(r.out, "stdout"))["version"], "0.1.0");
  EXPECT_EQ((*ParseJson(r.out, "stdout"))["cuda"], VIGIL_BUILT_WITH_CUDA != 0);
}

TEST(CliTest, UsageErrorsAreExitTwo) {
  EXPECT_EQ(RunVigil({}).exit_code, 2);
  EXPECT_EQ(RunVigil({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunVigil({"run", "--suite", "huge"}).exit_code, 2);
  EXPECT_EQ(RunVigil({"--help"}).exit_code, 0);
}

TEST(CliTest, BenchListJson) {
  ProcessResult r = RunVigil({"bench", "list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json list = *ParseJson(r.out, "stdout");
  std::vector<std::string> names;
  for (const Json& b : list) names.push_back(b["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"cpu-stream", "cpu-latency", "cpu-flops", "disk",
                                             "host-health", "gpu-health", "gpu-gemm", "gpu-stress",
                                             "gpu-membw", "gpu-memtest", "gpu-launch", "gpu-copy",
                                             "nccl"}));
  // The health suite: what reads a fault in seconds.
  for (const Json& b : list) {
    const bool health =
        b["name"] == "host-health" || b["name"] == "gpu-health" || b["name"] == "gpu-gemm";
    EXPECT_EQ(b["health"], health) << b["name"];
  }
  EXPECT_FALSE(list[3]["params"].empty());
  r = RunVigil({"bench", "list"});
  EXPECT_NE(r.out.find("disk.file_size"), std::string::npos);
  EXPECT_NE(r.out.find("health,quick,full"), std::string::npos);
}

TEST(CliTest, TheHealthSuiteSaysOneLine) {
  TempDir dir;
  ProcessResult r = RunVigil({"run", "--suite", "health", "--scratch", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");
  // No document unless asked: it runs every few minutes on every node.
  EXPECT_TRUE(fs::is_empty(dir.path()));

  // A filesystem with less free than the minimum: the line names it, exit 1.
  const std::string out = dir.File("health.json");
  r = RunVigil({"run", "--suite", "health", "--scratch", dir.path(), "--set",
                "host-health.min_free=16T", "--out", out});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "vigil: filesystem / root_full=1 (+1 more)\n");
  Result<NodeResults> doc = ParseNodeResults(*ReadFile(out), out);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->suite, "health");
  EXPECT_EQ(doc->benchmarks[0].name, "host-health");

  r = RunVigil({"run", "--suite", "health", "--scratch", dir.path(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ((*ParseJson(r.out, "stdout"))["validation"]["line"], "OK");
}

// `promtool check metrics` on `file` (Prometheus' own parser and linter); the output of a
// failure. Empty when it passes, or when promtool is not installed (then the check is skipped).
std::string PromtoolCheckMetrics(const std::string& file) {
  if (access("/usr/bin/promtool", X_OK) != 0) return "";
  const ProcessResult r =
      RunProgram("/bin/sh", {"-c", "/usr/bin/promtool check metrics < \"$0\"", file});
  return r.exit_code == 0 ? "" : r.out + r.err;
}

TEST(CliTest, TextfileHoldsTheVerdictAndFiguresForNodeExporter) {
  TempDir dir;
  const std::string prom = dir.File("vigil.prom");
  // A directory that is not there: exit 2 before any benchmark (no document either).
  ProcessResult r = RunVigil({"run", "--suite", "health", "--scratch", dir.path(), "--out",
                              dir.File("r.json"), "--textfile", dir.File("missing")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--textfile " + dir.File("missing") + ": no such directory"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("[1/"), std::string::npos) << "a benchmark started: " << r.err;
  EXPECT_TRUE(fs::is_empty(dir.path()));

  const double before = static_cast<double>(std::time(nullptr));
  r = RunVigil({"run", "--suite", "health", "--scratch", dir.path(), "--node", "n1", "--textfile",
                dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");
  Result<std::string> text = ReadFile(prom);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(PromtoolCheckMetrics(prom), "");
  EXPECT_NE(text->find("vigil_node_verdict{node=\"n1\",suite=\"health\",verdict=\"healthy\"} 1\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("vigil_run_benchmarks{node=\"n1\",suite=\"health\",status=\"failed\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text->find("benchmark=\"host-health\",component=\"memory\",metric=\"root_full\","
                       "index=\"\",unit=\"\"} 0\n"),
            std::string::npos);
  const std::string end = "vigil_run_end_time_seconds{node=\"n1\",suite=\"health\"} ";
  const size_t at = text->find(end);
  ASSERT_NE(at, std::string::npos);
  const double end_time = std::stod(text->substr(at + end.size()));
  EXPECT_GE(end_time, before - 1);
  EXPECT_LE(end_time, static_cast<double>(std::time(nullptr)));

  // A fault replaces the file whole: defective, its finding counted, nothing left beside it.
  r = RunVigil({"run", "--suite", "health", "--scratch", dir.path(), "--node", "n1", "--set",
                "host-health.min_free=16T", "--textfile", dir.path()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  text = ReadFile(prom);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(PromtoolCheckMetrics(prom), "");
  EXPECT_NE(text->find("verdict=\"defective\"} 1\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("metric=\"root_full\",index=\"\",unit=\"\"} 1\n"), std::string::npos);
  EXPECT_EQ(text->find("severity=\"critical\"} 0\n"), std::string::npos) << *text;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(CliTest, RunNamesTheNodeAsSlurmDoes) {
  TempDir dir;
  const std::string out = dir.File("r.json");
  setenv("SLURMD_NODENAME", "gpu-017", 1);
  ProcessResult r = RunVigil({"run", "--suite", "health", "--scratch", dir.path(), "--out", out});
  unsetenv("SLURMD_NODENAME");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseNodeResults(*ReadFile(out), out)->node, "gpu-017");
  // --slurm with a Slurm that cannot be reached (no slurm.conf): the line is printed, then the
  // error, exit 3.
  r = RunVigil({"run", "--suite", "health", "--scratch", dir.path(), "--slurm", "--set",
                "host-health.min_free=16T", "--node", "n1", "--max-drained-share", "0.5"});
  EXPECT_EQ(r.out.rfind("vigil: filesystem /", 0), 0u) << r.out;
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 1) << r.err;
  r = RunVigil({"run", "--suite", "health", "--slurm", "--max-drained-share", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--max-drained-share"), std::string::npos) << r.err;
}

TEST(CliTest, UnknownBenchmarkListsValidNames) {
  TempDir dir;
  ProcessResult r =
      RunVigil({"run", "--bench", "cpu-stream,gpu-warp", "--out", dir.File("r.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown benchmark \"gpu-warp\"; valid names: cpu-stream, cpu-latency"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.File("r.json")));
}

TEST(CliTest, AGpuThatDoesNotExistIsExit2BeforeAnyBenchmark) {
  TempDir dir;
  ProcessResult r =
      RunVigil({"run", "--bench", "gpu-health", "--gpus", "0,99", "--out", dir.File("r.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpus: GPU "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" does not exist"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.File("r.json")));
  r = RunVigil({"run", "--bench", "gpu-health", "--gpus", "zero", "--out", dir.File("r.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpus"), std::string::npos) << r.err;
}

TEST(CliTest, BadOutputPathFailsBeforeAnyBenchmark) {
  TempDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  ProcessResult r = RunVigil({"run", "--out", dir.File("no/such/dir/r.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("[1/"), std::string::npos) << "a benchmark started: " << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  r = RunVigil({"run", "--out", dir.path()});  // a directory
  EXPECT_EQ(r.exit_code, 2);
  r = RunVigil({"run", "--out", dir.File("r.json"), "--summary", dir.File("x/fleet.jsonl")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--summary"), std::string::npos) << r.err;
}

TEST(CliTest, BadParametersAndScratchAreExitTwo) {
  TempDir dir;
  const std::string out = dir.File("r.json");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"run", "--out", out, "--set", "disk.file_size=lots"},
           {"run", "--out", out, "--set", "disk.colour=red"},
           {"run", "--out", out, "--set", "nonsense"},
           {"run", "--out", out, "--bench", "cpu-flops", "--set", "disk.file_size=1M"},
           {"run", "--out", out, "--scratch", dir.File("missing")}}) {
    ProcessResult r = RunVigil(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_FALSE(r.err.empty());
  }
  EXPECT_FALSE(fs::exists(out));
}

void ExpectPositiveFigures(const NodeResults& doc) {
  for (const BenchmarkRecord& b : doc.benchmarks) {
    if (b.status == BenchStatus::kSkipped) continue;
    EXPECT_EQ(b.status, BenchStatus::kOk) << b.name << ": " << b.error;
    EXPECT_FALSE(b.metrics.empty()) << b.name;
    // Counters and flags, for which zero is the healthy figure: gpu-health's and gpu-presence's
    // readings, and counts of errors or lanes short (lower is better: gpu-stress/miscompares,
    // gpu-memtest/errors, gpu-presence/pcie_lanes_missing).
    const auto count = [&](const Metric& m) {
      return b.name == "gpu-health" || b.name == "gpu-presence" ||
             (!m.higher_is_better && (m.unit.empty() || m.unit == "lanes"));
    };
    for (const Metric& m : b.metrics) {
      EXPECT_TRUE(std::isfinite(m.value) && (m.value > 0 || (count(m) && m.value == 0)))
          << m.key.ToString() << " " << m.value;
      // A count, a flag or a link generation (gpu-stress/pcie_gen) has no unit.
      EXPECT_TRUE(count(m) || m.key.metric == "pcie_gen" || !m.unit.empty()) << m.key.ToString();
    }
  }
}

// The whole quick suite, as `make run` does it, with --json.
TEST(CliTest, QuickSuiteJson) {
  TempDir dir;
  const std::string out = dir.File("results.json");
  const std::string fleet = dir.File("fleet.jsonl");
  ProcessResult r = RunVigil({"run", "--suite", "quick", "--json", "--out", out, "--summary", fleet,
                              "--node", "node-7", "--scratch", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<NodeResults> doc = ParseNodeResults(r.out, "stdout");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->node, "node-7");
  EXPECT_EQ(doc->suite, "quick");
  EXPECT_GT(doc->inventory.threads, 0);
  // The suite's 13, and on a node with NVIDIA GPUs on PCI the run's own gpu-presence record.
  ASSERT_GE(doc->benchmarks.size(), 13u);
  ASSERT_EQ(doc->benchmarks.size(), doc->inventory.pci_gpus.empty() ? 13u : 14u);
  EXPECT_EQ(doc->benchmarks[0].name, "cpu-stream");
  ExpectPositiveFigures(*doc);
  // A node without an NVIDIA driver skips the GPU benchmarks, with the reason, and still passes.
  for (size_t i = 5; i < 13; ++i) {
    if (doc->benchmarks[i].status != BenchStatus::kSkipped) continue;
    EXPECT_FALSE(doc->benchmarks[i].error.empty()) << doc->benchmarks[i].name;
  }
  // Progress went to stderr, one line per start and finish.
  EXPECT_NE(r.err.find("[4/13] disk"), std::string::npos) << r.err;

  // The file holds the same document; the summary got one line for this node.
  Result<NodeResults> file = ReadNodeResults(out);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(ToJson(*file), ToJson(*doc));
  Result<FleetTable> rows = ReadFleetTable(fleet);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->node_count(), 1u);
  EXPECT_EQ(rows->node(0), "node-7");
  EXPECT_EQ(rows->metrics().front(), "cpu-stream/copy_gbps");
  // Nothing left in the scratch directory but what we asked for.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 2);
}

TEST(CliTest, TableAndResultsPath) {
  TempDir dir;
  ProcessResult r = RunVigil({"run", "--bench", "cpu-latency", "--set",
                              "cpu-latency.buffer_size=8M", "--out", dir.File("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("BENCHMARK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("idle_latency_ns"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Results: " + dir.File("r.json")), std::string::npos) << r.out;
}

// Each row of the table says what its figure is read against, never a bare "ok" that reads as
// "healthy": without criteria the last column is the row's reference and STATUS is RUN ("ran").
TEST(CliTest, TableRowsSayWhatTheirFigureIsReadAgainst) {
  TempDir dir;
  ProcessResult r = RunVigil({"run", "--bench", "cpu-latency", "--set",
                              "cpu-latency.buffer_size=8M", "--out", dir.File("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(header.rfind("BENCHMARK    RUN  METRIC", 0), 0u) << r.out;
  EXPECT_NE(header.find("REFERENCE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu-latency  ran  idle_latency_ns"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no reference"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" ok "), std::string::npos) << r.out;
}

// With criteria learned from a fleet (here, this node's line copied to 30 nodes with a spread of
// +-2%), the last column is each row's verdict against the learned range.
TEST(CliTest, TableRowsWithCriteriaSayTheirVerdict) {
  TempDir dir;
  const std::vector<std::string> run = {
      "run",   "--bench",         "cpu-latency", "--set", "cpu-latency.buffer_size=8M",
      "--out", dir.File("r.json")};
  std::vector<std::string> args = run;
  args.insert(args.end(), {"--summary", dir.File("one.jsonl")});
  ProcessResult r = RunVigil(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<std::string> line = ReadFile(dir.File("one.jsonl"));
  ASSERT_TRUE(line.ok());
  const Json row = *ParseJson(*line, "one.jsonl");
  std::string fleet;
  for (int i = 0; i < 30; ++i) {
    Json copy = row;
    copy["node"] = fmt::format("n{}", i);
    for (auto& [key, value] : copy.items()) {
      if (value.is_number() && key.find("return_code") == std::string::npos) {
        value = value.get<double>() * (1 + 0.01 * (i % 5 - 2));
      }
    }
    fleet += copy.dump() + "\n";
  }
  ASSERT_TRUE(WriteFileAtomic(dir.File("fleet.jsonl"), fleet).ok());
  r = RunVigil({"learn", "--data", dir.File("fleet.jsonl"), "--out", dir.File("c.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  args = run;
  args.insert(args.end(), {"--criteria", dir.File("c.json")});
  r = RunVigil(args);
  ASSERT_LE(r.exit_code, 1) << r.err;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(header.find("VERDICT"), std::string::npos) << r.out;
  const size_t at = r.out.find("idle_latency_ns");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string row_text = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_TRUE(row_text.find("within ") != std::string::npos ||
              row_text.find("ceiling ") != std::string::npos ||
              row_text.find("floor ") != std::string::npos)
      << row_text;
}

// Benchmarks skipped for one reason share one line under the table, which a long reason does
// not widen.
TEST(CliTest, SkippedBenchmarksShareOneLineOfReason) {
  TempDir dir;
  ProcessResult r = RunVigil({"run", "--bench", "cpu-latency,gpu-membw,gpu-launch", "--set",
                              "cpu-latency.buffer_size=8M", "--out", dir.File("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<NodeResults> doc = ReadNodeResults(dir.File("r.json"));
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  const BenchmarkRecord& membw = doc->benchmarks[1];
  if (membw.status != BenchStatus::kSkipped) GTEST_SKIP() << "this node has a GPU";
  EXPECT_NE(r.out.find("gpu-membw    skipped  -"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nskipped gpu-membw, gpu-launch: " + membw.error + "\n"), std::string::npos)
      << r.out;
  LineReader table(std::string_view(r.out).substr(0, r.out.find("\n\n")));
  std::string_view line;
  while (table.Next(line)) EXPECT_LT(line.size(), 80u) << line;
}

// Runs vigil with `args` where the NVIDIA driver is src/vigil/bench/cuda/fake_nvml.cc (two GPUs)
// and CUDA_VISIBLE_DEVICES is `visible`.
ProcessResult RunWithFakeDriver(const std::vector<std::string>& args, const char* visible) {
  TempDir lib;
  fs::create_symlink(VIGIL_FAKE_NVML, lib.File("libnvidia-ml.so.1"));
  setenv("LD_LIBRARY_PATH", lib.path().c_str(), 1);
  setenv("CUDA_VISIBLE_DEVICES", visible, 1);
  ProcessResult r = RunVigil(args);
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("LD_LIBRARY_PATH");
  return r;
}

// The GPU indices of a results document's metrics.
std::set<int> GpusIn(const std::string& path) {
  Result<NodeResults> doc = ReadNodeResults(path);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  std::set<int> gpus;
  if (!doc.ok()) return gpus;
  for (const BenchmarkRecord& b : doc->benchmarks) {
    for (const Metric& m : b.metrics) gpus.insert(m.key.index->first);
  }
  return gpus;
}

// CUDA_VISIBLE_DEVICES would renumber the GPUs of the CUDA benchmarks' processes but not NVML's:
// its GPUs become the run's, by nvidia-smi's numbering, unless --gpus chooses; what cannot be
// numbered so, or names a GPU the node lacks, is exit 2 before any benchmark.
TEST(CliTest, CudaVisibleDevicesChoosesGpusByNvidiaSmisNumbering) {
  TempDir dir;
  const std::string out = dir.File("r.json");
  ProcessResult r = RunWithFakeDriver({"run", "--bench", "gpu-health", "--out", out}, "1");
  ASSERT_EQ(r.exit_code, 1) << r.err;  // fake_nvml's GPU 1 has a page retirement pending
  EXPECT_NE(r.err.find("CUDA_VISIBLE_DEVICES=1: measuring GPUs 1"), std::string::npos) << r.err;
  EXPECT_EQ(GpusIn(out), std::set<int>{1});

  r = RunWithFakeDriver({"run", "--bench", "gpu-health", "--gpus", "0", "--out", out}, "1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(GpusIn(out), std::set<int>{0});

  fs::remove(out);
  r = RunWithFakeDriver({"run", "--bench", "gpu-health", "--out", out}, "GPU-5d3f6a0e");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("CUDA_VISIBLE_DEVICES: \"GPU-5d3f6a0e\" is not a GPU index"),
            std::string::npos)
      << r.err;
  r = RunWithFakeDriver({"run", "--bench", "gpu-health", "--out", out}, "0,4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("CUDA_VISIBLE_DEVICES: GPU 4 does not exist: this node has 2 (0-1)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// Where there is no NVIDIA driver, CUDA_VISIBLE_DEVICES means nothing: the GPU benchmarks are
// skipped and the run exits 0.
TEST(CliTest, CudaVisibleDevicesWithoutADriverIsNoError) {
  TempDir dir;
  setenv("CUDA_VISIBLE_DEVICES", "GPU-5d3f6a0e", 1);
  ProcessResult r = RunVigil({"run", "--bench", "gpu-health", "--out", dir.File("r.json")});
  unsetenv("CUDA_VISIBLE_DEVICES");
  if (r.exit_code == 2 && r.err.find("is not a GPU index") != std::string::npos) {
    GTEST_SKIP() << "this node has an NVIDIA driver";
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<NodeResults> doc = ReadNodeResults(dir.File("r.json"));
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  ASSERT_EQ(doc->benchmarks.size(), 1u);
  EXPECT_EQ(doc->benchmarks[0].status, BenchStatus::kSkipped);
}

// Runs vigil with `args` where the NVIDIA driver is fake_nvml.cc showing `count` GPUs (0: no
// driver at all), with `--host-root root`, whose PCI holds fake_nvml's GPUs (bus 0x10 * (i + 1)).
ProcessResult RunOnFakeNode(std::vector<std::string> args, const TempDir& root, int count) {
  TempDir lib;
  if (count > 0) fs::create_symlink(VIGIL_FAKE_NVML, lib.File("libnvidia-ml.so.1"));
  setenv("LD_LIBRARY_PATH", lib.path().c_str(), 1);
  setenv("FAKE_NVML_COUNT", std::to_string(count).c_str(), 1);
  args.insert(args.end(), {"--host-root", root.path()});
  ProcessResult r = RunVigil(args);
  unsetenv("FAKE_NVML_COUNT");
  unsetenv("LD_LIBRARY_PATH");
  return r;
}

void AddPciGpus(const TempDir& root, int gpus, int narrow = -1) {
  for (int i = 0; i < gpus; ++i) {
    AddFakePciDevice(root, {fmt::format("0000:{:02x}:00.0", 0x10 * (i + 1)), "0x10de", "0x030200",
                            i == narrow ? 8 : 16, 16});
  }
}

// The gpu-presence record of a results document.
const BenchmarkRecord* PresenceOf(const NodeResults& doc) {
  for (const BenchmarkRecord& b : doc.benchmarks) {
    if (b.name == "gpu-presence") return &b;
  }
  return nullptr;
}

// GPUs on PCI and no driver: not "skipped" and healthy, but a critical finding naming the bus ids,
// and exit 1, without any criteria.
TEST(CliTest, GpusOnPciWithoutADriverAreMissing) {
  if (void* nvml = dlopen("libnvidia-ml.so.1", RTLD_LAZY); nvml != nullptr) {
    dlclose(nvml);
    GTEST_SKIP() << "this node has an NVIDIA driver";
  }
  TempDir root, dir;
  AddPciGpus(root, 2);
  const std::string out = dir.File("r.json");
  ProcessResult r = RunOnFakeNode({"run", "--bench", "gpu-health", "--out", out}, root, 0);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 0 (0000:10:00.0) missing: no NVIDIA driver"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GPU 1 (0000:20:00.0) missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Verdict by the rules that need no fleet: defective"), std::string::npos)
      << r.out;
  Result<NodeResults> doc = ReadNodeResults(out);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->inventory.pci_gpus.size(), 2u);
  const BenchmarkRecord* presence = PresenceOf(*doc);
  ASSERT_NE(presence, nullptr);
  EXPECT_EQ(presence->status, BenchStatus::kFailed);
  // The summary line carries the finding to a fleet service or `vigil validate`.
  const std::string row = FormatFleetRow(FleetRowOf(*doc));
  EXPECT_NE(row.find("\"gpu-presence/missing:1\": 1"), std::string::npos) << row;

  r = RunOnFakeNode({"run", "--bench", "gpu-health", "--out", out, "--json"}, root, 0);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json j = *ParseJson(r.out, "stdout");
  EXPECT_EQ(j["validation"]["verdict"], "defective");
  EXPECT_EQ(j["validation"]["criteria"], nullptr);
  EXPECT_EQ(j["validation"]["findings"][0]["component"], "GPU 0");
  EXPECT_EQ(j["validation"]["findings"][0]["test"], "health");
  EXPECT_EQ(j["validation"]["findings"][0]["severity"], "critical");
}

// Eight GPUs on PCI, seven in the driver: the eighth is named; a link trained at x8 is named.
TEST(CliTest, AGpuTheDriverLacksAndANarrowLinkAreDefects) {
  TempDir root, dir;
  AddPciGpus(root, 8);
  const std::string out = dir.File("r.json");
  // gpu-health on GPU 0 alone is healthy; the presence check looks at the whole node.
  ProcessResult r = RunOnFakeNode({"run", "--bench", "gpu-health", "--out", out}, root, 7);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 7 (0000:80:00.0) missing: the driver sees 7 GPU(s), not this one"),
            std::string::npos)
      << r.out;

  TempDir narrow;
  AddPciGpus(narrow, 2, 1);
  r = RunOnFakeNode({"run", "--bench", "gpu-health", "--out", out, "--json"}, narrow, 2);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json j = *ParseJson(r.out, "stdout");
  std::set<std::string> named;
  for (const Json& f : j["validation"]["findings"]) named.insert(f["metric"].get<std::string>());
  EXPECT_TRUE(named.contains("gpu-presence/pcie_lanes_missing:1")) << j["validation"].dump();
}

// Without criteria, what has a fixed meaning still judges the node: fake_nvml's GPU 1 has a page
// retirement pending and a hardware slowdown (exit 1, both named); its GPU 0 is sound (exit 0),
// and choosing GPUs leaves the whole-node presence check out.
TEST(CliTest, FixedMeaningsJudgeWithoutCriteria) {
  TempDir root, dir;
  AddPciGpus(root, 2);
  const std::string out = dir.File("r.json");
  ProcessResult r =
      RunOnFakeNode({"run", "--bench", "gpu-health", "--out", out, "--json"}, root, 2);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  Json j = *ParseJson(r.out, "stdout");
  std::set<std::string> named;
  for (const Json& f : j["validation"]["findings"]) named.insert(f["metric"].get<std::string>());
  const std::set<std::string> expected = {"gpu-health/retired_pages_pending:1",
                                          "gpu-health/throttle_hw_slowdown:1"};
  EXPECT_EQ(named, expected) << j["validation"].dump();
  Result<NodeResults> doc = ReadNodeResults(out);
  ASSERT_TRUE(doc.ok());
  ASSERT_NE(PresenceOf(*doc), nullptr);
  EXPECT_EQ(PresenceOf(*doc)->status, BenchStatus::kOk) << PresenceOf(*doc)->error;

  r = RunOnFakeNode({"run", "--bench", "gpu-health", "--gpus", "0", "--out", out}, root, 2);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  doc = ReadNodeResults(out);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(PresenceOf(*doc), nullptr);
}

// A scratch directory without room fails `disk` with a clear error; the others still run.
TEST(CliTest, DiskWithoutSpaceFailsAloneAndExitsOne) {
  TempDir dir;
  ProcessResult r = RunVigil({"run", "--bench", "cpu-latency,disk", "--json", "--set",
                              "cpu-latency.buffer_size=8M", "--set", "disk.file_size=16T",
                              "--scratch", dir.path(), "--out", dir.File("r.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Result<NodeResults> doc = ReadNodeResults(dir.File("r.json"));
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  ASSERT_EQ(doc->benchmarks.size(), 2u);
  EXPECT_EQ(doc->benchmarks[0].status, BenchStatus::kOk);
  const BenchmarkRecord& disk = doc->benchmarks[1];
  if (disk.status == BenchStatus::kSkipped) GTEST_SKIP() << disk.error;  // no O_DIRECT here
  EXPECT_EQ(disk.status, BenchStatus::kFailed);
  EXPECT_EQ(disk.return_code, 1);
  EXPECT_NE(disk.error.find("not enough free space in " + dir.path()), std::string::npos)
      << disk.error;
}

// The pid of a child of `parent` that holds the disk benchmark's file open, or 0. The file has no
// name once open, so its open descriptor is what shows that the benchmark is writing.
pid_t DiskChildOf(pid_t parent) {
  std::error_code ec;
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const Result<std::string> stat = ReadFile(proc.path() / "stat");
    if (!stat.ok()) continue;
    // pid (comm) state ppid ...: the command may hold spaces, so read from its closing ')'.
    const size_t close = stat->rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat->substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    if (!(rest >> state >> ppid) || ppid != parent) continue;
    for (const auto& fd : fs::directory_iterator(proc.path() / "fd", ec)) {
      if (fs::read_symlink(fd.path(), ec).string().find("vigil-disk.dat") != std::string::npos) {
        return static_cast<pid_t>(std::stoi(name));
      }
    }
  }
  return 0;
}

// Waits for `vigil run` of the disk benchmark to open its file; returns its disk child, or 0.
pid_t StartDisk(VigilProcess& p) {
  pid_t child = 0;
  for (int i = 0; i < 200 && child == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    child = DiskChildOf(p.pid());
  }
  return child;
}

std::vector<std::string> DiskRunArgs(const std::string& scratch, const TempDir& dir) {
  return {"run",
          "--bench",
          "disk",
          "--set",
          "disk.file_size=64M",
          "--set",
          "disk.repetitions=100000",
          "--scratch",
          scratch,
          "--out",
          dir.File("r.json"),
          "--summary",
          dir.File("fleet.jsonl")};
}

// A run stopped by a signal: exit 3, "interrupted", its scratch directory empty, no --out.
void ExpectInterrupted(const ProcessResult& r, const std::string& scratch, const TempDir& dir) {
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(scratch));
  EXPECT_FALSE(fs::exists(dir.File("r.json")));
}

// Ctrl-C stops the run, removes the scratch files and writes no output.
TEST(CliTest, InterruptRemovesScratchAndWritesNothing) {
  TempDir dir;
  const std::string scratch = dir.File("scratch");
  fs::create_directory(scratch);
  VigilProcess p(DiskRunArgs(scratch, dir));
  ASSERT_NE(StartDisk(p), 0) << "the disk benchmark never opened its file";
  p.Signal(SIGINT);
  ExpectInterrupted(p.Wait(), scratch, dir);
  EXPECT_FALSE(fs::exists(dir.File("fleet.jsonl")));
  // No temporary output either.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// One stop delivered twice at once (pkill reaching `vigil run` and a `timeout` that forwards it)
// is one request: the run still removes its scratch files and exits 3. A second stop exits at
// once only when it comes later.
TEST(CliTest, AStopDeliveredTwiceAtOnceStillCleansUp) {
  TempDir dir;
  const std::string scratch = dir.File("scratch");
  fs::create_directory(scratch);
  VigilProcess p(DiskRunArgs(scratch, dir));
  ASSERT_NE(StartDisk(p), 0) << "the disk benchmark never opened its file";
  p.Signal(SIGTERM);
  // Apart enough to be delivered as two (one still pending absorbs another), and soon enough to
  // reach the run while it still stops its benchmark.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  p.Signal(SIGTERM);
  ExpectInterrupted(p.Wait(), scratch, dir);
}

// A `vigil run` killed outright (the OOM killer, a launcher ending its ranks) cannot remove its
// scratch directory, and its benchmark child dies with it: the disk file's blocks still go back to
// the filesystem, and only the empty directory is left.
TEST(CliTest, AKilledRunLeavesNoDiskFileBehind) {
  TempDir dir;
  const std::string scratch = dir.File("scratch");
  fs::create_directory(scratch);
  VigilProcess p(DiskRunArgs(scratch, dir));
  const pid_t child = StartDisk(p);
  ASSERT_NE(child, 0) << "the disk benchmark never opened its file";
  p.Signal(SIGKILL);
  p.Wait();
  // The child ends (PR_SET_PDEATHSIG); a zombie has closed its files, so its fd table is gone.
  const std::string fds = fmt::format("/proc/{}/fd", child);
  for (int i = 0; i < 200 && access(fds.c_str(), F_OK) == 0; ++i) {
    std::error_code ec;
    if (fs::is_empty(fds, ec) && !ec) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(scratch)) {
    if (!e.is_directory()) files.push_back(e.path());
  }
  EXPECT_TRUE(files.empty()) << files.front();
}

}  // namespace
}  // namespace vigil::testing
