// End-to-end tests of hostile and unlucky input: numbers beyond their documented ranges are exit 2
// before anything runs, empty telemetry is not a healthy job, and an output path that is a device
// or a FIFO is written, never replaced.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/testing/fifo.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil {
namespace {

using testing::Contains;
using testing::ProcessResult;
using testing::RunVigil;
using testing::TempDir;

// Runs vigil and says how long it took, in seconds.
ProcessResult RunTimed(const std::vector<std::string>& args, double* seconds) {
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = RunVigil(args);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// `simulate job --gpus 1e12` ran for minutes.
TEST(CliBoundsTest, SimulateJobWithATrillionGpusIsExitTwoAtOnce) {
  for (const char* gpus : {"1e12", "1000000000000"}) {
    double seconds = 0;
    const ProcessResult r = RunTimed({"simulate", "job", "--gpus", gpus}, &seconds);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(Contains(r.err, std::string("--gpus: ") + gpus + " is outside [1, 1048576]"))
        << r.err;
    EXPECT_LT(seconds, 5);
  }
  // Flags fine one by one, too much work together.
  double seconds = 0;
  const ProcessResult r = RunTimed(
      {"simulate", "job", "--nodes", "1048576", "--days", "3650d", "--rate", "100"}, &seconds);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "fewer runs, nodes or days")) << r.err;
  EXPECT_LT(seconds, 5);
}

// `serve --max-body-mb 1e14` overflowed to a limit of 0 bytes.
TEST(CliBoundsTest, ServeWithAnAbsurdBodyLimitIsExitTwo) {
  TempDir dir;
  const ProcessResult r = RunVigil(
      {"serve", "--max-body-mb", "1e14", "--db", dir.File("v.db"), "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "--max-body-mb: 1e14 is outside [0.01, 4096]")) << r.err;
  EXPECT_EQ(dir.EntryCount(), 0u);  // refused before the database was opened
}

// Nothing judged is not "every machine behaves like its peers".
TEST(CliBoundsTest, DetectOnAHeaderOnlyFileIsNoSamples) {
  TempDir dir;
  dir.Write("empty.csv", "timestamp,machine,metric,value\n");
  const ProcessResult r = RunVigil({"detect", "--input", dir.File("empty.csv")});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "no samples")) << r.err;
  EXPECT_FALSE(Contains(r.out, "No alert")) << r.out;
  // Lines that are all missing values are no samples either.
  dir.Write("nan.csv", "timestamp,machine,metric,value\n1,a,power,\n2,a,power,NaN\n");
  const ProcessResult nan = RunVigil({"detect", "--input", dir.File("nan.csv"), "--json"});
  EXPECT_EQ(nan.exit_code, 2) << nan.err;
  EXPECT_TRUE(Contains(nan.err, "no samples to judge (dropped: 0 unmapped, 2 missing values"))
      << nan.err;
}

TEST(CliBoundsTest, DetectRefusesATimestampThatWouldOverflowTheFrameIndex) {
  TempDir dir;
  dir.Write("t.csv", "timestamp,machine,metric,value\n1,a,power,5\n9.2e18,a,power,5\n");
  const ProcessResult r = RunVigil({"detect", "--input", dir.File("t.csv")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, dir.File("t.csv") + ":3: timestamp: 9.2e18 is outside")) << r.err;
  const ProcessResult step = RunVigil({"detect", "--input", dir.File("t.csv"), "--step", "0s"});
  EXPECT_EQ(step.exit_code, 2);
  EXPECT_TRUE(Contains(step.err, "--step: 0s is outside [10ms, 1h]")) << step.err;
}

// The commands that write an output file, each with its output at `out`.
std::vector<std::vector<std::string>> WritersTo(const std::string& out, const TempDir& dir) {
  return {
      {"simulate", "fleet", "--nodes", "20", "--out", out},
      {"simulate", "telemetry", "--machines", "4", "--duration", "2m", "--out", out},
      {"detect", "--input", dir.File("t.csv"), "--out", out},
  };
}

// `--out /dev/null` as root renamed a file over the device node.
TEST(CliBoundsTest, OutputToDevNullLeavesTheDevice) {
  if (geteuid() != 0) GTEST_SKIP() << "only root could replace /dev/null";
  TempDir dir;
  ASSERT_EQ(RunVigil({"simulate", "telemetry", "--machines", "4", "--duration", "2m", "--out",
                      dir.File("t.csv")})
                .exit_code,
            0);
  for (const auto& args : WritersTo("/dev/null", dir)) {
    const ProcessResult r = RunVigil(args);
    EXPECT_LE(r.exit_code, 1) << args[0] << " " << args[1] << ": " << r.err;
    ASSERT_EQ(testing::FileTypeOf("/dev/null"), S_IFCHR) << args[0] << " " << args[1];
  }
  for (const auto& e : std::filesystem::directory_iterator("/dev")) {
    EXPECT_NE(e.path().filename().string().rfind("null.tmp.", 0), 0u) << e.path();
  }
}

// The same for anyone: a FIFO gets the output and stays a FIFO.
TEST(CliBoundsTest, OutputToAFifoIsWrittenInPlace) {
  TempDir dir;
  ASSERT_EQ(RunVigil({"simulate", "telemetry", "--machines", "4", "--duration", "2m", "--out",
                      dir.File("t.csv")})
                .exit_code,
            0);
  const std::string fifo = dir.File("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& args : WritersTo(fifo, dir)) {
    testing::FifoReader reader(fifo);
    const ProcessResult r = RunVigil(args);
    const size_t bytes = reader.Take().size();
    EXPECT_LE(r.exit_code, 1) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_GT(bytes, 0u) << args[0] << " " << args[1];
    ASSERT_EQ(testing::FileTypeOf(fifo), S_IFIFO) << args[0] << " " << args[1];
  }
  EXPECT_EQ(dir.EntryCount(), 2u);  // t.csv and the FIFO: no temporary file left
}

}  // namespace
}  // namespace vigil
