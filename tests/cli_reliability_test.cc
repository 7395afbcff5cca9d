// End-to-end tests of `vigil model`, `vigil simulate job|cluster` and `vigil fleet stats` through
// the built binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

TEST(ModelCliTest, MttfReproducesMetasProjections) {
  const ProcessResult r = RunVigil({"model", "mttf", "--gpus", "16384,131072", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  EXPECT_NEAR(j[0]["mttf_s"].get<double>() / 3600, 1.8, 0.01);
  EXPECT_NEAR(j[1]["mttf_s"].get<double>() / 3600, 0.23, 0.01);
  const ProcessResult table = RunVigil({"model", "mttf"});
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("131072"), std::string::npos);
}

TEST(ModelCliTest, CheckpointReproducesDaly) {
  for (const auto& [mtbf, minutes] :
       {std::pair{"24h", 116.7}, std::pair{"6h", 56.7}, std::pair{"15m", 9.14}}) {
    const ProcessResult r =
        RunVigil({"model", "checkpoint", "--write", "5m", "--mtbf", mtbf, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NEAR(JsonOf(r)["daly_interval_s"].get<double>() / 60, minutes, 0.1) << mtbf;
  }
  // From a job size and rate instead of an MTBF.
  const ProcessResult r = RunVigil({"model", "checkpoint", "--write", "1m", "--gpus", "16384"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Daly"), std::string::npos);
}

TEST(ModelCliTest, EttrInsideAndOutsideItsDomain) {
  ProcessResult r = RunVigil({"model", "ettr", "--nodes", "128", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  EXPECT_TRUE(j["in_domain"].get<bool>());
  EXPECT_GT(j["ettr"].get<double>(), 0.9);
  EXPECT_LT(j["ettr"].get<double>(), 1);
  // 16,384 GPUs with hourly checkpoints and 10-minute restarts: outside, and the simulated job
  // answers beside the formula (docs/reliability.md: 0.668 at 2,048 nodes), exit 0.
  r = RunVigil({"model", "ettr", "--gpus", "16384"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ETTR by the formula"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not trusted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simulated job's mean"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vigil simulate job --nodes 2048"), std::string::npos) << r.out;
  r = RunVigil({"model", "ettr", "--gpus", "16384", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json one = JsonOf(r);
  EXPECT_FALSE(one["in_domain"].get<bool>());
  EXPECT_EQ(one["ettr_from"], "simulation");
  EXPECT_NEAR(one["ettr"].get<double>(), 0.668, 0.01);
  EXPECT_LT(one["formula_ettr"].get<double>(), one["ettr"].get<double>());
  // The sweep answers every row, the simulation where the formula leaves its domain.
  r = RunVigil({"model", "ettr", "--sweep", "gpus=1024..131072", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json sweep = JsonOf(r);
  ASSERT_EQ(sweep.size(), 8u);
  EXPECT_TRUE(sweep[0]["in_domain"].get<bool>());
  EXPECT_EQ(sweep[0]["ettr_from"], "formula");
  EXPECT_FALSE(sweep[7]["in_domain"].get<bool>());
  EXPECT_EQ(sweep[7]["ettr_from"], "simulation");
  EXPECT_LT(sweep[7]["formula_ettr"].get<double>(), 0);
  EXPECT_GT(sweep[0]["ettr"].get<double>(), sweep[7]["ettr"].get<double>());
  for (const Json& row : sweep) {
    EXPECT_GE(row["ettr"].get<double>(), 0) << row.dump();
    EXPECT_GE(row["ettr_at_optimal"].get<double>(), 0) << row.dump();
  }
}

// The sweep's table never prints a negative ETTR; a column says where the simulation answered.
TEST(ModelCliTest, EttrSweepTableNeverNegative) {
  const ProcessResult r = RunVigil({"model", "ettr", "--sweep", "gpus=1024..131072"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ETTR_FROM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simulation (formula: -"), std::string::npos) << r.out;
  size_t rows = 0;
  for (size_t at = r.out.find("\n1024 "); at != std::string::npos && at < r.out.size();) {
    const size_t end = r.out.find('\n', at + 1);
    const std::string line = r.out.substr(at + 1, end - at - 1);
    if (line.empty()) break;
    // Up to ETTR_FROM, whose text may quote the formula's negative value.
    EXPECT_EQ(line.substr(0, std::min(line.find("formula"), line.find("simulation"))).find(" -"),
              std::string::npos)
        << line;
    ++rows;
    at = end;
  }
  EXPECT_EQ(rows, 8u) << r.out;
}

// --plot draws the sweep as SVG: a well-formed document (Python's XML parser reads it) with a
// point per size, the simulated ones included.
TEST(ModelCliTest, EttrSweepPlotIsAWellFormedSvgWithEveryPoint) {
  TempDir dir;
  const std::string svg_path = dir.File("ettr.svg");
  ProcessResult r = RunVigil({"model", "ettr", "--sweep", "gpus=1024..131072", "--plot", svg_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Plot written to " + svg_path), std::string::npos) << r.out;
  Result<std::string> svg = ReadFile(svg_path);
  ASSERT_TRUE(svg.ok());
  EXPECT_EQ(svg->rfind("<?xml", 0), 0u);
  EXPECT_NE(svg->find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  const size_t line = svg->find("<polyline points=\"");
  ASSERT_NE(line, std::string::npos) << *svg;
  const std::string points = svg->substr(line, svg->find("/>", line) - line);
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 8) << points;
  for (const char* gpus : {"<title>1024, ", "<title>131072, "}) {
    EXPECT_NE(svg->find(gpus), std::string::npos) << gpus;
  }
  const std::string parse =
      "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " + svg_path;
  if (std::system("python3 -c '' 2>/dev/null") == 0) {
    EXPECT_EQ(std::system(parse.c_str()), 0);
  }
  // --plot draws a sweep only.
  r = RunVigil({"model", "ettr", "--gpus", "1024", "--plot", svg_path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--plot draws a --sweep"), std::string::npos) << r.err;
}

TEST(ModelCliTest, BadInputIsExitTwoWithTheFlag) {
  ProcessResult r = RunVigil({"model", "ettr", "--nodes", "8", "--restart", "ten minutes"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--restart: bad duration"), std::string::npos) << r.err;
  r = RunVigil({"model", "ettr", "--nodes", "8", "--rate", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--rate: -1 is outside [0.001, 100000]"), std::string::npos) << r.err;
  r = RunVigil({"model", "ettr", "--nodes", "8", "--interval", "0s"});
  EXPECT_EQ(r.exit_code, 2);
  r = RunVigil({"model", "ettr"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpus or --nodes"), std::string::npos) << r.err;
  EXPECT_EQ(RunVigil({"model", "ettr", "--sweep", "gpus=10..1"}).exit_code, 2);
  EXPECT_EQ(RunVigil({"model", "mttf", "--gpus", "0"}).exit_code, 2);
  EXPECT_EQ(RunVigil({"model", "checkpoint", "--write", "5m"}).exit_code, 2);
}

TEST(SimulateJobCliTest, MatchesTheFormulaInsideItsDomain) {
  const ProcessResult r =
      RunVigil({"simulate", "job", "--nodes", "256", "--detect", "0s", "--runs", "200", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  ASSERT_TRUE(j["formula"]["in_domain"].get<bool>());
  EXPECT_NEAR(j["ettr"]["mean"].get<double>() / j["formula"]["ettr"].get<double>(), 1, 0.02);
  double sum = 0;
  for (const auto& [part, fraction] : j["time_fractions"].items()) sum += fraction.get<double>();
  EXPECT_NEAR(sum, 1, 1e-9);
  const ProcessResult table = RunVigil({"simulate", "job", "--gpus", "1024", "--runs", "10",
                                        "--distribution", "weibull", "--spares", "2"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("recompute"), std::string::npos);
  EXPECT_EQ(RunVigil({"simulate", "job", "--gpus", "1001", "--gpus-per-node", "8"}).exit_code, 2);
  EXPECT_EQ(RunVigil({"simulate", "job", "--nodes", "8", "--runs", "0"}).exit_code, 2);
}

TEST(FleetStatsCliTest, FindsThePlantedLemons) {
  TempDir dir;
  const std::string sacct = dir.File("sacct.txt"), events = dir.File("events.csv"),
                    truth = dir.File("truth.csv");
  ProcessResult r =
      RunVigil({"simulate", "cluster", "--nodes", "512", "--days", "30", "--lemons", "5", "--seed",
                "3", "--out-sacct", sacct, "--out-events", events, "--truth", truth});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunVigil(
      {"fleet", "stats", "--sacct", sacct, "--events", events, "--truth", truth, "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // lemons are defects
  const Json j = JsonOf(r);
  EXPECT_GE(j["score"]["precision"].get<double>(), 0.8);
  EXPECT_EQ(j["score"]["recall"].get<double>(), 1);
  EXPECT_GT(j["failure_rate"]["per_1000_node_days"].get<double>(), 0);
  EXPECT_LT(j["failure_rate"]["lower"].get<double>(),
            j["failure_rate"]["per_1000_node_days"].get<double>());
  r = RunVigil({"fleet", "stats", "--sacct", sacct});
  EXPECT_NE(r.out.find("Lemon nodes"), std::string::npos);
  EXPECT_NE(r.out.find("MTTF projection"), std::string::npos);
}

TEST(FleetStatsCliTest, HealthyFleetIsExitZero) {
  TempDir dir;
  const std::string sacct = dir.File("sacct.txt");
  ASSERT_TRUE(WriteFileAtomic(sacct,
                              "JobID|State|NNodes|AllocTRES|Start|End|NodeList|ExitCode\n"
                              "1|COMPLETED|2|gres/gpu=16|2026-01-01T00:00:00|2026-01-02T00:00:00|"
                              "n[1-2]|0:0\n")
                  .ok());
  const ProcessResult r = RunVigil({"fleet", "stats", "--sacct", sacct});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Lemon nodes: none"), std::string::npos) << r.out;
}

TEST(FleetStatsCliTest, BrokenLinesNameFileLineAndField) {
  TempDir dir;
  const std::string sacct = dir.File("bad.txt");
  ASSERT_TRUE(WriteFileAtomic(sacct,
                              "JobID|State|NNodes|AllocTRES|Start|End|NodeList|ExitCode\n"
                              "1|COMPLETED|1||2026-01-01T00:00:00|2026-01-01T01:00:00|n1|0:0\n"
                              "2|MELTED|1||2026-01-01T00:00:00|2026-01-01T01:00:00|n1|0:0\n")
                  .ok());
  ProcessResult r = RunVigil({"fleet", "stats", "--sacct", sacct});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(sacct + ":3: field State: unknown job state \"MELTED\""), std::string::npos)
      << r.err;
  r = RunVigil({"fleet", "stats", "--sacct", sacct, "--lenient"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("skipped 1 broken line"), std::string::npos) << r.err;
  EXPECT_EQ(RunVigil({"fleet", "stats", "--sacct", dir.File("missing.txt")}).exit_code, 2);
  EXPECT_EQ(RunVigil({"fleet", "stats", "--sacct", sacct, "--lenient", "--fdr", "2"}).exit_code, 2);
  EXPECT_EQ(RunVigil({"fleet", "stats", "--sacct", sacct, "--window", "-5m"}).exit_code, 2);
}

// A log written in the cluster's zone and read in it gives what UTC gives; read in another zone,
// the times shift; a zone the database does not know is exit 2 naming the flag.
TEST(FleetStatsCliTest, TimesAreReadInTheClustersZone) {
  TempDir dir;
  const auto simulate = [&](const std::string& zone, const std::string& out) {
    return RunVigil({"simulate", "cluster", "--nodes", "64", "--days", "10", "--seed", "4",
                     "--out-sacct", out, "--time-zone", zone});
  };
  ASSERT_EQ(simulate("UTC", dir.File("utc.txt")).exit_code, 0);
  ASSERT_EQ(simulate("America/Chicago", dir.File("chicago.txt")).exit_code, 0);
  EXPECT_NE(*ReadFile(dir.File("utc.txt")), *ReadFile(dir.File("chicago.txt")));
  // 2026-01-01T00:00:00Z, the span's start, is 2025-12-31T18:00:00 in Chicago.
  EXPECT_NE(ReadFile(dir.File("chicago.txt"))->find("|2025-12-31T18:"), std::string::npos);
  const ProcessResult utc =
      RunVigil({"fleet", "stats", "--sacct", dir.File("utc.txt"), "--time-zone", "UTC", "--json"});
  const ProcessResult chicago = RunVigil({"fleet", "stats", "--sacct", dir.File("chicago.txt"),
                                          "--time-zone", "America/Chicago", "--json"});
  ASSERT_EQ(utc.exit_code, chicago.exit_code) << chicago.err;
  EXPECT_EQ(utc.out, chicago.out);
  const ProcessResult bad =
      RunVigil({"fleet", "stats", "--sacct", dir.File("utc.txt"), "--time-zone", "Mars/Base"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--time-zone: time zone \"Mars/Base\": not in the tz database"),
            std::string::npos)
      << bad.err;
}

TEST(SimulateClusterCliTest, UnwritableOutputLeavesNothing) {
  TempDir dir;
  const ProcessResult r = RunVigil({"simulate", "cluster", "--out-sacct", dir.File("s.txt"),
                                    "--truth", dir.File("no/such/dir/t.csv")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(dir.EntryCount(), 0);
}

}  // namespace
}  // namespace vigil::testing
