// End-to-end tests of `--plot FILE.svg` on `vigil model mttf`, `simulate job` and `fleet stats`
// through the built binary: the file is a well-formed SVG (Python's XML parser reads it, where
// Python is installed; the checks of testing/svg_check.h always) with what the command computed
// on it, and a path that cannot be written is exit 2 with a message naming --plot, before any
// work, leaving nothing behind.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/testing/svg_check.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

// The SVG at `path`, checked: well-formed, no NaN or negative size, and read by Python's own XML
// parser when there is a Python.
std::string SoundSvg(const std::string& path) {
  Result<std::string> svg = ReadFile(path);
  EXPECT_TRUE(svg.ok()) << path;
  if (!svg.ok()) return "";
  EXPECT_EQ(svg->rfind("<?xml", 0), 0u);
  EXPECT_NE(svg->find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_EQ(XmlProblem(*svg), "");
  EXPECT_EQ(SvgNonsense(*svg), "");
  if (std::system("python3 -c '' 2>/dev/null") == 0) {
    const std::string parse =
        "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " + path;
    EXPECT_EQ(std::system(parse.c_str()), 0) << path;
  }
  return *svg;
}

// A --plot that cannot be written (no such directory, or a directory) is exit 2 naming --plot,
// and leaves the temporary directory as it was.
void ExpectBadPlotPathRefused(const std::vector<std::string>& command) {
  TempDir dir;
  for (const std::string& bad : {dir.File("no/such/dir/plot.svg"), dir.path()}) {
    std::vector<std::string> args = command;
    args.insert(args.end(), {"--plot", bad});
    const ProcessResult r = RunVigil(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--plot: "), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "nothing is printed before the check";
    EXPECT_EQ(dir.EntryCount(), 0u);
  }
}

TEST(PlotCliTest, MttfPlotsEverySizeOnLogAxes) {
  TempDir dir;
  const std::string path = dir.File("mttf.svg");
  const ProcessResult r = RunVigil({"model", "mttf", "--plot", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Plot written to " + path), std::string::npos) << r.out;
  const std::string svg = SoundSvg(path);
  EXPECT_EQ(Occurrences(svg, "<circle"), 9u);  // the 9 default sizes, 8 to 131072 GPUs
  for (const char* text : {"<title>16384, 1.803</title>", ">MTTF (hours, log scale)</text>"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  // --json prints only JSON, and the plot is written all the same.
  const std::string json_path = dir.File("mttf-json.svg");
  const ProcessResult j =
      RunVigil({"model", "mttf", "--gpus", "8,64", "--json", "--plot", json_path});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.out.find("Plot written"), std::string::npos);
  EXPECT_EQ(Occurrences(SoundSvg(json_path), "<circle"), 2u);
  ExpectBadPlotPathRefused({"model", "mttf"});
}

TEST(PlotCliTest, SimulateJobPlotsWhereTheTimeWent) {
  TempDir dir;
  const std::string path = dir.File("job.svg");
  const ProcessResult r = RunVigil(
      {"simulate", "job", "--nodes", "512", "--runs", "50", "--queue", "30m", "--plot", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Plot written to " + path), std::string::npos) << r.out;
  const std::string svg = SoundSvg(path);
  // Six parts stacked in one bar, each in the legend with its share and hours.
  EXPECT_EQ(Occurrences(svg, "<title>mean of 50 runs, "), 6u) << svg;
  for (const char* text : {">hours of the run</text>", ">productive ", ">recompute ", ">queue ",
                           "30 d on 512 nodes"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  ExpectBadPlotPathRefused({"simulate", "job", "--nodes", "8", "--runs", "10"});
}

TEST(PlotCliTest, FleetStatsPlotsRateBySizeAndLemons) {
  TempDir dir;
  const std::string sacct = dir.File("sacct.txt"), events = dir.File("events.csv");
  ProcessResult r = RunVigil({"simulate", "cluster", "--nodes", "512", "--days", "30", "--lemons",
                              "5", "--seed", "3", "--out-sacct", sacct, "--out-events", events});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string path = dir.File("fleet.svg");
  r = RunVigil({"fleet", "stats", "--sacct", sacct, "--events", events, "--plot", path});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // lemons are defects; the plot is written all the same
  EXPECT_NE(r.out.find("Plot written to " + path), std::string::npos) << r.out;
  const std::string svg = SoundSvg(path);
  EXPECT_NE(svg.find(">Infrastructure failure rate by job size</text>"), std::string::npos);
  EXPECT_NE(svg.find(">failures per 1000 node-days</text>"), std::string::npos);
  EXPECT_NE(svg.find("Lemon nodes: "), std::string::npos);
  EXPECT_GE(Occurrences(svg, ", failed jobs: "), 5u) << svg;  // a bar per lemon found
  EXPECT_GE(Occurrences(svg, "<circle"), 3u);                 // size classes and the fleet's line
  ExpectBadPlotPathRefused({"fleet", "stats", "--sacct", sacct});
}

}  // namespace
}  // namespace vigil::testing
