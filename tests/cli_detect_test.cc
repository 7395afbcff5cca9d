// End-to-end tests of vigil simulate telemetry and vigil detect: files in every format, scoring
// against labels, bad input, and a Prometheus server that is down.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil {
namespace {

using testing::Contains;
using testing::ProcessResult;
using testing::RunVigil;
using testing::TempDir;

TEST(CliDetectTest, NamesTheFaultyMachinesOfASimulatedJob) {
  TempDir dir;
  ProcessResult sim =
      RunVigil({"simulate", "telemetry", "--machines", "12", "--duration", "15m", "--faults", "3",
                "--kinds", "hang,gpu_execution_error,nic_down", "--seed", "5", "--out",
                dir.File("t.csv"), "--labels", dir.File("labels.csv")});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  ProcessResult r = RunVigil({"detect", "--input", dir.File("t.csv"), "--labels",
                              dir.File("labels.csv"), "--out", dir.File("alerts.jsonl"), "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // alerts raised
  Result<Json> out = ParseJson(r.out, "stdout");
  ASSERT_TRUE(out.ok()) << r.out;
  EXPECT_EQ((*out)["score"]["recall"], 1.0) << r.out;
  EXPECT_EQ((*out)["score"]["precision"], 1.0) << r.out;
  // A hang is named once its peers' stall has settled (60 s) and the deviation has lasted the
  // persistence time (60 s): docs/detect.md.
  EXPECT_LE((*out)["score"]["latency"]["p95_s"].get<double>(), 150);
  Result<std::string> alerts = ReadFile(dir.File("alerts.jsonl"));
  ASSERT_TRUE(alerts.ok());
  Result<Json> first = ParseJson(alerts->substr(0, alerts->find('\n')), "alerts");
  ASSERT_TRUE(first.ok());
  for (const char* field : {"machine", "kind", "rule", "onset", "detected", "evidence"}) {
    EXPECT_TRUE(first->contains(field)) << field;
  }
  // The human report names the machines and scores itself per kind.
  ProcessResult text =
      RunVigil({"detect", "--input", dir.File("t.csv"), "--labels", dir.File("labels.csv")});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_TRUE(Contains(text.out, "ALERT node")) << text.out;
  EXPECT_TRUE(Contains(text.out, "precision 1.000  recall 1.000")) << text.out;
  EXPECT_TRUE(Contains(text.out, "nic_down")) << text.out;
}

// The simulator's file carries error counters as rates already (normalised signals): an
// uncorrectable ECC error and a failing NVLink are each named by their rule from it.
TEST(CliDetectTest, ErrorCountersInASimulatedFileAreNamedByTheirRules) {
  TempDir dir;
  ProcessResult sim =
      RunVigil({"simulate", "telemetry", "--machines", "8", "--duration", "10m", "--faults", "2",
                "--kinds", "ecc_uncorrectable,nvlink_error", "--seed", "3", "--no-events", "--out",
                dir.File("t.csv"), "--labels", dir.File("labels.csv")});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  ProcessResult r = RunVigil(
      {"detect", "--input", dir.File("t.csv"), "--labels", dir.File("labels.csv"), "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Result<Json> out = ParseJson(r.out, "stdout");
  ASSERT_TRUE(out.ok()) << r.out;
  std::vector<std::string> rules;
  for (const Json& a : (*out)["alerts"]) rules.push_back(a["rule"].get<std::string>());
  for (const char* rule : {"ecc_uncorrectable", "nvlink_crc_errors"}) {
    EXPECT_NE(std::find(rules.begin(), rules.end(), rule), rules.end()) << rule << "\n" << r.out;
  }
  EXPECT_EQ((*out)["score"]["precision"], 1.0) << r.out;
}

TEST(CliDetectTest, AHealthyJobRaisesNothingInAnyFormat) {
  TempDir dir;
  for (const std::string name : {"t.csv", "t.jsonl"}) {
    ProcessResult sim = RunVigil({"simulate", "telemetry", "--machines", "8", "--duration", "5m",
                                  "--faults", "0", "--out", dir.File(name)});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    ProcessResult r = RunVigil({"detect", "--input", dir.File(name)});
    EXPECT_EQ(r.exit_code, 0) << name << r.out << r.err;
    EXPECT_TRUE(Contains(r.out, "No alert")) << r.out;
  }
}

TEST(CliDetectTest, ReadsSavedPrometheusScrapes) {
  TempDir dir;
  std::string text;
  // Ten minutes: the detector learns a group over its first five.
  for (int t = 0; t < 600; ++t) {
    for (int m = 0; m < 6; ++m) {
      const double power = m == 2 && t >= 420 ? 150 : 600;
      text += "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",Hostname=\"h" + std::to_string(m) + "\"} " +
              std::to_string(power + (t * 7 + m * 13) % 11) + " " +
              std::to_string(1700000000000LL + t * 1000) + "\n";
    }
  }
  ASSERT_TRUE(WriteFileAtomic(dir.File("scrapes.prom"), text).ok());
  ProcessResult r = RunVigil({"detect", "--input", dir.File("scrapes.prom"), "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Result<Json> out = ParseJson(r.out, "stdout");
  ASSERT_TRUE(out.ok()) << r.out;
  ASSERT_EQ((*out)["alerts"].size(), 1u);
  EXPECT_EQ((*out)["alerts"][0]["machine"], "h2");
}

// A worker whose step takes twice its peers' (effect 1.0, at least twice --strong-effect) is named
// after half the persistence; with --strong-effect 0 after all of it; one taking 1.3 times
// theirs (under --strong-effect) after all of it either way. The step time is a duration: its
// run is proven only to the start of its latest slow iteration, up to one slow step later.
TEST(CliDetectTest, AStrongDeviationIsNamedAfterHalfThePersistence) {
  TempDir dir;
  for (const double slow : {2.0, 1.3}) {
    std::string csv = "timestamp,machine,metric,value\n";
    // Ten minutes at a 1-s cadence; worker w3 slows at 420 s.
    for (int t = 0; t < 600; ++t) {
      for (int m = 0; m < 8; ++m) {
        const double step =
            (m == 3 && t >= 420 ? slow : 1.0) * (1 + 0.002 * ((t * 7 + m * 13) % 5));
        csv += fmt::format("{},w{},step_time,{}\n", 1700000000 + t, m, step);
      }
    }
    const std::string name = fmt::format("slow{}.csv", slow);
    ASSERT_TRUE(WriteFileAtomic(dir.File(name), csv).ok());
    for (const char* strong : {"0.4", "0"}) {
      SCOPED_TRACE(fmt::format("x{} --strong-effect {}", slow, strong));
      ProcessResult r =
          RunVigil({"detect", "--input", dir.File(name), "--strong-effect", strong, "--json"});
      EXPECT_EQ(r.exit_code, 1) << r.err;
      Result<Json> out = ParseJson(r.out, "stdout");
      ASSERT_TRUE(out.ok()) << r.out;
      ASSERT_EQ((*out)["alerts"].size(), 1u) << r.out;
      const Json& a = (*out)["alerts"][0];
      EXPECT_EQ(a["machine"], "w3");
      const double after = a["detected"].get<double>() - 1700000420;
      const double needs = slow == 2.0 && std::string(strong) != "0" ? 30 : 60;
      EXPECT_GE(after, needs) << r.out;
      EXPECT_LE(after, needs + slow + 5) << r.out;
    }
  }
  ProcessResult bad =
      RunVigil({"detect", "--input", dir.File("slow2.csv"), "--strong-effect", "-1"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "--strong-effect")) << bad.err;
}

TEST(CliDetectTest, BadInputIsExitTwoWithFileLineAndField) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.File("bad.csv"),
                              "timestamp,machine,metric,value\n1,n1,m,1\n2,n1,m,oops\n")
                  .ok());
  ProcessResult r =
      RunVigil({"detect", "--input", dir.File("bad.csv"), "--out", dir.File("alerts.jsonl")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "bad.csv:3: value: \"oops\" is not a number")) << r.err;
  EXPECT_FALSE(ReadFile(dir.File("alerts.jsonl")).ok());  // nothing half-written
  ProcessResult lenient =
      RunVigil({"detect", "--input", dir.File("bad.csv"), "--lenient", "--json"});
  EXPECT_EQ(lenient.exit_code, 0) << lenient.err;
  EXPECT_EQ((*ParseJson(lenient.out, "stdout"))["dropped"]["malformed_lines"], 1);

  ASSERT_TRUE(WriteFileAtomic(dir.File("labels.csv"), "machine,onset\n").ok());
  ProcessResult labels = RunVigil(
      {"detect", "--input", dir.File("bad.csv"), "--lenient", "--labels", dir.File("labels.csv")});
  EXPECT_EQ(labels.exit_code, 2);
  EXPECT_TRUE(Contains(labels.err, "labels.csv:1: header: no kind column")) << labels.err;

  ASSERT_TRUE(WriteFileAtomic(dir.File("s.yaml"), "signals:\n  - {metric: x}\n").ok());
  ProcessResult signals =
      RunVigil({"detect", "--input", dir.File("bad.csv"), "--signals", dir.File("s.yaml")});
  EXPECT_EQ(signals.exit_code, 2);
  EXPECT_TRUE(Contains(signals.err, "s.yaml:2: signal: missing")) << signals.err;

  EXPECT_EQ(RunVigil({"detect"}).exit_code, 2);
  EXPECT_EQ(RunVigil({"detect", "--input", dir.File("bad.csv"), "--follow"}).exit_code, 2);
  EXPECT_EQ(RunVigil({"detect", "--prometheus", "http://127.0.0.1:1"}).exit_code, 2);
  EXPECT_EQ(RunVigil({"detect", "--input", dir.File("labels.csv"), "--format", "xml"}).exit_code,
            2);
  EXPECT_EQ(
      RunVigil({"simulate", "telemetry", "--out", dir.File("t.csv"), "--kinds", "flood"}).exit_code,
      2);
  EXPECT_EQ(RunVigil({"simulate", "telemetry", "--machines", "2", "--faults", "3", "--out",
                      dir.File("t.csv")})
                .exit_code,
            2);
}

TEST(CliDetectTest, PrometheusDownIsAClearErrorNotACrash) {
  // Port 1 on loopback: nothing listens there.
  ProcessResult r = RunVigil({"detect", "--prometheus", "http://127.0.0.1:1", "--selector",
                              "{job=\"x\"}", "--since", "1m"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(Contains(r.err, "http://127.0.0.1:1")) << r.err;
  // --follow retries until its --duration is up, then stops cleanly; having judged nothing, it
  // says so (exit 3) instead of "No alert".
  ProcessResult f = RunVigil({"detect", "--prometheus", "http://127.0.0.1:1", "--selector",
                              "{job=\"x\"}", "--follow", "--poll", "1s", "--duration", "3s"});
  EXPECT_EQ(f.exit_code, 3) << f.err;
  EXPECT_TRUE(Contains(f.err, "retrying")) << f.err;
  EXPECT_TRUE(Contains(f.err, "no samples to judge; the last query failed")) << f.err;
  EXPECT_FALSE(Contains(f.out, "No alert")) << f.out;
  EXPECT_EQ(RunVigil({"detect", "--prometheus", "ftp://x", "--selector", "{a=\"b\"}"}).exit_code,
            2);
}

}  // namespace
}  // namespace vigil
