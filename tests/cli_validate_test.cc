// End-to-end tests of vigil diagnose, baseline, learn, validate, simulate fleet and
// run --criteria: the built binary, its files, its output and its exit codes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

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

const std::string kData = std::string(VIGIL_SOURCE_DIR) + "/tests/data/";

// A SuperBench user gets SuperBench's own expected files from SuperBench's own inputs.
TEST(CliValidateTest, DiagnoseMatchesSuperBench) {
  TempDir dir;
  for (const std::string format : {"md", "jsonl", "html"}) {
    ProcessResult r = RunVigil({"diagnose", "-d", kData + "superbench_test_results.jsonl", "-r",
                                kData + "superbench_test_rules.yaml", "-b",
                                kData + "superbench_test_baseline.json", "--output-dir", dir.path(),
                                "--output-file-format", format, "--strict-missing=false"});
    EXPECT_EQ(r.exit_code, 1) << r.err;  // two nodes are defective
    EXPECT_EQ(*ReadFile(dir.File("diagnosis_summary." + format)),
              *ReadFile(kData + "superbench_diagnosis_summary." + format))
        << format;
  }
  ProcessResult r =
      RunVigil({"diagnose", "-d", kData + "superbench_test_results.jsonl", "-r",
                kData + "superbench_test_rules.yaml", "-b", kData + "superbench_test_baseline.json",
                "--output-dir", dir.path(), "--json", "--output-all"});
  EXPECT_EQ(r.exit_code, 1);
  Result<Json> j = ParseJson(r.out, "stdout");
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ((*j)["defective"], 2);
  EXPECT_EQ((*j)["defective_nodes"][0]["node"], "sb-validation-01");
  EXPECT_EQ(ParseJson(*ReadFile(dir.File("diagnosis_summary.json")), "all")->size(), 3u);
}

TEST(CliValidateTest, DiagnoseRejectsBadInputAndWritesNothing) {
  TempDir dir;
  dir.Write("bad.jsonl", "{\"node\": \"a\", \"m/x\": 1}\n{\"node\": \"b\", \"m/x\": \"fast\"}\n");
  dir.Write("ok.jsonl", "{\"node\": \"a\", \"m/x\": 1}\n");
  dir.Write("unknown.yaml",
            "superbench:\n  rules:\n    r1: {categories: C, function: abb, "
            "criteria: 'lambda x:x>0', metrics: [m/x]}\n");
  dir.Write("unsafe.yaml",
            "superbench:\n  rules:\n    r1: {categories: C, function: value, "
            "criteria: 'lambda x: __import__(\"os\").system(\"true\")', metrics: [m/x]}\n");
  dir.Write("variance.yaml",
            "superbench:\n  rules:\n    r1: {categories: C, function: variance, "
            "criteria: 'lambda x:x<-0.1', metrics: [m/x]}\n");
  dir.Write("zero.json", "{\"m/x\": 0}");
  const std::string out = dir.path() + "/out";
  dir.Write("out/.keep", "");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"-d", dir.File("bad.jsonl"), "-r", dir.File("variance.yaml")},
       "bad.jsonl:2: field \"m/x\": expected a number or null"},
      {{"-d", dir.File("ok.jsonl"), "-r", dir.File("unknown.yaml")},
       "unknown.yaml:3: rule \"r1\": unknown function \"abb\""},
      {{"-d", dir.File("ok.jsonl"), "-r", dir.File("unsafe.yaml")},
       "unsafe.yaml:3: rule \"r1\": criteria"},
      {{"-d", dir.File("ok.jsonl"), "-r", dir.File("variance.yaml")},
       "rule \"r1\": no baseline for \"m/x\""},
      {{"-d", dir.File("ok.jsonl"), "-r", dir.File("variance.yaml"), "-b", dir.File("zero.json")},
       "rule \"r1\": the baseline of \"m/x\" is 0"},
      {{"-d", dir.File("ok.jsonl"), "-r", dir.File("variance.yaml"), "--output-file-format",
        "xlsx"},
       "unknown output format 'xlsx'"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"diagnose", "--output-dir", out};
    args.insert(args.end(), c.args.begin(), c.args.end());
    ProcessResult r = RunVigil(args);
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.err;
    EXPECT_TRUE(Contains(r.err, c.message)) << r.err;
  }
  EXPECT_FALSE(ReadFile(out + "/diagnosis_summary.json").ok());  // nothing was written
}

TEST(CliValidateTest, BaselineMeanAndWithRules) {
  TempDir dir;
  ProcessResult r = RunVigil(
      {"baseline", "-d", kData + "superbench_test_results.jsonl", "-o", dir.File("b.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<Json> b = ParseJson(*ReadFile(dir.File("b.json")), "b.json");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->size(), 462u);
  r = RunVigil({"baseline", "-d", kData + "superbench_test_generate_baseline_results.jsonl", "-r",
                kData + "superbench_test_generate_baseline_diagnosis_rules.yaml", "-o",
                dir.File("fixed.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "outlying values left out")) << r.out;
  // The generated baseline drives a diagnosis with the same rules.
  r = RunVigil({"diagnose", "-d", kData + "superbench_test_generate_baseline_results.jsonl", "-r",
                kData + "superbench_test_generate_baseline_diagnosis_rules.yaml", "-b",
                dir.File("fixed.json"), "--output-dir", dir.path()});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
}

// Rules written for SuperBench v0.4 (NDv4's quick scan) against a v0.3 summary: each rule that
// selects nothing is named with a hint, and is an error with --strict. The output directory is
// created as SuperBench creates it.
TEST(CliValidateTest, DiagnoseWarnsOfRulesThatSelectNothing) {
  TempDir dir;
  const std::string out = dir.File("new/report");
  const std::vector<std::string> args = {"diagnose",
                                         "-d",
                                         kData + "superbench_test_results.jsonl",
                                         "-r",
                                         kData + "superbench_ndv4_rule.yaml",
                                         "-b",
                                         kData + "superbench_ndv4_baseline.json",
                                         "--output-dir",
                                         out};
  ProcessResult r = RunVigil(args);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_TRUE(Contains(
      r.err, "warning: " + kData + "superbench_ndv4_rule.yaml: rule \"rdma_loopback\" (line"))
      << r.err;
  EXPECT_TRUE(Contains(r.err,
                       "'ib-loopback/ib_write_8388608_ib\\d+_bw:\\d*' has SuperBench v0.4-v0.5 "
                       "names but the data's ib-loopback keys have v0.3 names"))
      << r.err;
  EXPECT_TRUE(Contains(r.err, "rule \"mem_bw\"")) << r.err;
  EXPECT_TRUE(ReadFile(out + "/diagnosis_summary.json").ok());

  std::vector<std::string> strict = args;
  strict.push_back("--strict");
  strict[8] = dir.File("strict");
  r = RunVigil(strict);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "superbench_ndv4_rule.yaml: rule \"kernel_launch\" (line")) << r.err;
  EXPECT_FALSE(ReadFile(dir.File("strict/diagnosis_summary.json")).ok());

  // A file where the directory should be.
  dir.Write("file", "");
  std::vector<std::string> blocked = args;
  blocked[8] = dir.File("file");
  r = RunVigil(blocked);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "cannot create directory " + dir.File("file"))) << r.err;
}

// A node tested again and appended by `vigil run --summary` is listed twice: its later line is
// the one judged, with a warning naming the file, the node and both lines.
TEST(CliValidateTest, RepeatedNodeKeepsItsLaterLine) {
  TempDir dir;
  dir.Write("fleet.jsonl",
            "{\"node\": \"a\", \"m/x\": 1}\n{\"node\": \"b\", \"m/x\": 3}\n"
            "{\"node\": \"a\", \"m/x\": 5}\n");
  ProcessResult r = RunVigil({"baseline", "-d", dir.File("fleet.jsonl"), "-o", dir.File("b.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "warning: " + dir.File("fleet.jsonl") +
                                  ": node \"a\" is on lines 1 and 3: the later line (3) wins"))
      << r.err;
  EXPECT_EQ((*ParseJson(*ReadFile(dir.File("b.json")), "b.json"))["m/x"], 4);  // (3 + 5) / 2
  EXPECT_TRUE(Contains(r.out, "from 2 nodes")) << r.out;
}

// A summary with a key per node and value would need a column each: exit 2 with the line.
TEST(CliValidateTest, TooManyDistinctKeysIsBadInput) {
  TempDir dir;
  std::string text;
  constexpr int kPerLine = 20'000;
  for (int line = 0; line < 6; ++line) {
    text += fmt::format("{{\"node\": \"n{}\"", line);
    for (int k = 0; k < kPerLine; ++k) text += fmt::format(", \"b/m{}_{}\": 1", line, k);
    text += "}\n";
  }
  dir.Write("keys.jsonl", text);
  for (const char* command : {"baseline", "diagnose"}) {
    std::vector<std::string> args = {command, "-d", dir.File("keys.jsonl")};
    if (std::string(command) == "baseline") {
      args.insert(args.end(), {"-o", dir.File("b.json")});
    } else {
      dir.Write("rules.yaml",
                "superbench:\n  rules:\n    r: {categories: C, function: value, "
                "criteria: 'lambda x:x>0', metrics: [b/m0_0]}\n");
      args.insert(args.end(), {"-r", dir.File("rules.yaml"), "--output-dir", dir.path()});
    }
    ProcessResult r = RunVigil(args);
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, dir.File("keys.jsonl") +
                                    ":6: field \"b/m5_0\": more than 100000 distinct metric keys"))
        << r.err;
  }
  EXPECT_FALSE(ReadFile(dir.File("b.json")).ok());
}

// `vigil baseline` writes numbers JSON can read back: values beyond any metric are bad input,
// and Python's NaN and Infinity are missing values, not means.
TEST(CliValidateTest, BaselineNeverWritesInfOrNaN) {
  TempDir dir;
  dir.Write("huge.jsonl", "{\"node\": \"a\", \"m/x\": 1}\n{\"node\": \"b\", \"m/x\": 1e300}\n");
  ProcessResult r = RunVigil({"baseline", "-d", dir.File("huge.jsonl"), "-o", dir.File("b.json")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, dir.File("huge.jsonl") + ":2: field \"m/x\"")) << r.err;
  EXPECT_FALSE(ReadFile(dir.File("b.json")).ok());

  dir.Write("python.jsonl",
            "{\"node\": \"a\", \"m/x\": NaN, \"m/y\": Infinity, \"m/z\": 2}\n"
            "{\"node\": \"b\", \"m/x\": 4, \"m/y\": -Infinity, \"m/z\": 4}\n");
  r = RunVigil({"baseline", "-d", dir.File("python.jsonl"), "-o", dir.File("b.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string written = *ReadFile(dir.File("b.json"));
  for (const char* bad : {"inf", "nan", "NaN", "Infinity"}) {
    EXPECT_FALSE(Contains(written, bad)) << written;
  }
  EXPECT_EQ(written, "{\n  \"m/x\": 4,\n  \"m/z\": 3\n}\n");
}

TEST(CliValidateTest, SimulateLearnValidate) {
  TempDir dir;
  ProcessResult r =
      RunVigil({"simulate", "fleet", "--nodes", "400", "--defect-rate", "0.1", "--seed", "3",
                "--out", dir.File("fleet.jsonl"), "--truth", dir.File("truth.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunVigil(
      {"learn", "--data", dir.File("fleet.jsonl"), "--out", dir.File("criteria.json"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json learned = *ParseJson(r.out, "stdout");
  EXPECT_EQ(learned["classes"].size(), 2u);
  // What the criteria find, part by part: a slowdown each, in both classes.
  std::set<std::string> classes_reached;
  for (const Json& reach : learned["reach"]) {
    classes_reached.insert(reach["hardware"].get<std::string>());
    ASSERT_TRUE(reach["slowdown"].is_number()) << reach.dump();
    EXPECT_GT(reach["slowdown"].get<double>(), 0) << reach.dump();
    EXPECT_LT(reach["slowdown"].get<double>(), 0.5) << reach.dump();
  }
  EXPECT_EQ(classes_reached.size(), 2u) << learned["reach"].dump();
  r = RunVigil({"learn", "--data", dir.File("fleet.jsonl"), "--out", dir.File("criteria.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "What the criteria find")) << r.out;
  EXPECT_TRUE(Contains(r.out, "FLAGGED FROM")) << r.out;
  EXPECT_FALSE(Contains(r.out, "flagged by no slowdown")) << r.out;
  // Criteria that flag almost nothing say which parts no slowdown finds, under the table.
  r = RunVigil({"learn", "--data", dir.File("fleet.jsonl"), "--out", dir.File("blind.json"),
                "--budget", "1e-100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "flagged by no slowdown up to 95% (8x NVIDIA")) << r.out;
  r = RunVigil({"validate", "--data", dir.File("fleet.jsonl"), "--criteria",
                dir.File("criteria.json"), "--truth", dir.File("truth.csv")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.out, "COMPONENT")) << r.out;
  EXPECT_TRUE(Contains(r.out, "SUPERBENCH RECALL")) << r.out;
  // Findings of the class and component tests read as sentences under the table, not as rows.
  EXPECT_TRUE(Contains(r.out, "metrics together lie")) << r.out;
  for (const char* test : {"  component\n", "  class\n"}) {
    EXPECT_FALSE(Contains(r.out, test)) << test << " in " << r.out;
  }
  r = RunVigil({"validate", "--data", dir.File("fleet.jsonl"), "--criteria",
                dir.File("criteria.json"), "--truth", dir.File("truth.csv"), "--json"});
  Result<Json> j = ParseJson(r.out, "stdout");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["nodes"].size(), 400u);
  EXPECT_GE((*j)["score"]["learned"]["rows"].back()["recall"].get<double>(), 0.8);

  // Criteria from another version, and a truth file that is not one, are bad input.
  dir.Write("old.json", "{\"schema\": \"vigil.criteria/0\"}");
  r = RunVigil({"validate", "--data", dir.File("fleet.jsonl"), "--criteria", dir.File("old.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "old.json: criteria of schema \"vigil.criteria/0\"")) << r.err;
  r = RunVigil({"validate", "--data", dir.File("fleet.jsonl"), "--criteria",
                dir.File("criteria.json"), "--truth", dir.File("fleet.jsonl")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "fleet.jsonl:1: expected the header")) << r.err;
}

// A node of a hardware class the criteria did not learn is told so in a sentence, not as a table
// row "node  8xB200  0  0..0  -  critical  class".
TEST(CliValidateTest, ANodeOfNoLearnedClassIsToldSoInASentence) {
  TempDir dir;
  std::string fleet;
  for (int n = 0; n < 20; ++n) {
    fleet +=
        fmt::format("{{\"node\": \"n{}\", \"hardware\": \"{}\", \"gpu-gemm/bf16_tflops:0\": {}}}\n",
                    n, n < 10 ? "2xH100" : "2xA100", (n < 10 ? 700 : 300) + n % 5);
  }
  dir.Write("fleet.jsonl", fleet);
  ProcessResult r =
      RunVigil({"learn", "--data", dir.File("fleet.jsonl"), "--out", dir.File("criteria.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  dir.Write("new.jsonl",
            "{\"node\": \"b1\", \"hardware\": \"8xB200\", \"gpu-gemm/bf16_tflops:0\": 2000}\n");
  r = RunVigil(
      {"validate", "--data", dir.File("new.jsonl"), "--criteria", dir.File("criteria.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.out,
                       "b1: no criteria were learned for its hardware class \"8xB200\": judged "
                       "by the fixed rules only (critical)\n"))
      << r.out;
  EXPECT_FALSE(Contains(r.out, "0..0")) << r.out;
  EXPECT_FALSE(Contains(r.out, "NODE")) << r.out;  // no table of one empty row
}

// A GPU with an uncorrectable ECC error is named by its health counter, which must be clear: the
// table shows what was expected (0), no deviation from a centre, and the test.
TEST(CliValidateTest, AHealthCounterThatMustBeClearNamesTheGpu) {
  TempDir dir;
  std::string fleet;
  for (int n = 0; n < 10; ++n) {
    fleet += fmt::format(
        "{{\"node\": \"n{}\", \"hardware\": \"2xH100\", "
        "\"gpu-health/ecc_uncorrected_volatile:0\": 0, "
        "\"gpu-health/ecc_uncorrected_volatile:1\": {}, \"gpu-health/ecc_corrected_aggregate:0\": "
        "{}, \"gpu-health/pcie_width:0\": 16, \"gpu-health/pcie_width:1\": 16}}\n",
        n, n == 4 ? 1 : 0, n * 17);
  }
  dir.Write("fleet.jsonl", fleet);
  ProcessResult r =
      RunVigil({"learn", "--data", dir.File("fleet.jsonl"), "--out", dir.File("criteria.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunVigil(
      {"validate", "--data", dir.File("fleet.jsonl"), "--criteria", dir.File("criteria.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const size_t at = r.out.find("\nn4 ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  for (const char* part :
       {"GPU 1", "gpu-health/ecc_uncorrected_volatile:1", " 0 ", " - ", "critical  health"}) {
    EXPECT_TRUE(Contains(line, part)) << part << " in " << line;
  }
  EXPECT_TRUE(Contains(r.out, "1 of 10 nodes defective")) << r.out;  // corrected counts are not
}

// A fleet whose values of one metric span the whole range a result may take gives criteria that
// no file holds: `vigil learn` exits 2 naming the file and the family, and writes nothing.
TEST(CliValidateTest, LearnRefusesAFleetWhoseValuesLieTooFarApart) {
  TempDir dir;
  std::string fleet;
  for (int n = 0; n < 9; ++n) {
    Json row = {{"node", "n" + std::to_string(n)}};
    for (int g = 0; g < 8; ++g) {
      row["gemm-flops/fp16_tc_flops:" + std::to_string(g)] = n < 4 ? -1e100 : n == 4 ? 0 : 1e100;
    }
    fleet += DumpJson(row) + "\n";
  }
  dir.Write("fleet.jsonl", fleet);
  const ProcessResult r =
      RunVigil({"learn", "--data", dir.File("fleet.jsonl"), "--out", dir.File("c.json")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, dir.File("fleet.jsonl") + ": ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "family gemm-flops/fp16_tc_flops: spread")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("c.json")));
}

// `vigil run --criteria` judges what it just measured. A fleet of this node's own results, with
// a tiny budget of false findings (generous limits), finds it healthy; criteria that expect ten
// times its figures do not.
TEST(CliValidateTest, RunJudgesTheNodeByLearnedCriteria) {
  TempDir dir;
  ProcessResult r =
      RunVigil({"run", "--bench", "cpu-latency", "--set", "cpu-latency.buffer_size=8M", "--out",
                dir.File("r.json"), "--summary", dir.File("one.jsonl"), "--node", "n0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string line = *ReadFile(dir.File("one.jsonl"));
  std::string fleet;
  for (int i = 0; i < 8; ++i) {
    std::string l = line;
    l.replace(l.find("\"n0\""), 4, "\"n" + std::to_string(i) + "\"");
    fleet += l;
  }
  dir.Write("fleet.jsonl", fleet);
  r = RunVigil({"learn", "--data", dir.File("fleet.jsonl"), "--out", dir.File("c.json"), "--budget",
                "1e-100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunVigil({"run", "--bench", "cpu-latency", "--set", "cpu-latency.buffer_size=8M", "--out",
                dir.File("r2.json"), "--criteria", dir.File("c.json"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Result<Json> j = ParseJson(r.out, "stdout");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["validation"]["verdict"], "healthy");

  // Criteria that expect ten times the node's figures, either way, with no room: it fails them.
  Json c = *ParseJson(*ReadFile(dir.File("c.json")), "c.json");
  for (Json& cls : c["classes"]) {
    for (Json& f : cls["families"]) {
      if (f["direction"] == "zero") continue;
      f["direction"] = "either";
      for (Json& m : f["modes"]) {
        m["centre"] = m["centre"].get<double>() * 10 + 1;
        m["spread"] = 1e-9;
      }
      f["limit"] = 6;
      f.erase("balance_centre");
      f.erase("balance_spread");
      f.erase("balance_limit");
    }
  }
  dir.Write("strict.json", DumpJson(c));
  r = RunVigil({"run", "--bench", "cpu-latency", "--set", "cpu-latency.buffer_size=8M", "--out",
                dir.File("r3.json"), "--criteria", dir.File("strict.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_TRUE(Contains(r.out, "Verdict by")) << r.out;
  EXPECT_TRUE(Contains(r.out, "defective")) << r.out;
}

}  // namespace
}  // namespace vigil
