#include "vigil/telemetry/file_source.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <utime.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/testing/scoped_env.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::telemetry {
namespace {

// Every field of a point, ids by their names, as two normalisers that met the names in another
// order agree on.
std::string Describe(const Normalizer& names, const Point& p) {
  const std::string& group = names.groups().Name(p.group);
  return fmt::format("{} {} {} {} {}{}{}{}", p.time, names.machines().Name(p.machine),
                     names.signals()[p.signal].name, names.components().Name(p.component), p.value,
                     group.empty() ? "" : " group=" + group, p.held ? " held" : "",
                     p.rescraped ? " rescraped" : "");
}

struct Streamed {
  Status status;
  std::vector<std::string> points;
  size_t peak_buffered = 0;
  size_t spilled = 0;
  int64_t skipped = 0;
  size_t batches = 0;
};

// Runs a source over `o`; `after_batch` (may be empty) answers for the sink after each batch.
Streamed Stream(const FileSourceOptions& o, const std::function<Status()>& after_batch = {}) {
  Normalizer names(SignalMap::Default(), true);
  FileSource source(o, names);
  Streamed out;
  double last = -1;
  out.status = source.Run([&](std::span<const Point> points, double until) {
    EXPECT_TRUE(std::isnan(until));
    ++out.batches;
    for (const Point& p : points) {
      EXPECT_GE(p.time, last);
      last = p.time;
      out.points.push_back(Describe(names, p));
    }
    return after_batch ? after_batch() : Status::Ok();
  });
  out.peak_buffered = source.peak_buffered();
  out.spilled = source.spilled_points();
  out.skipped = source.skipped();
  return out;
}

Streamed Stream(const std::vector<std::string>& paths, size_t chunk_bytes, bool lenient = false) {
  FileSourceOptions o;
  o.paths = paths;
  o.chunk_bytes = chunk_bytes;
  o.lenient = lenient;
  return Stream(o);
}

// What reading every file whole, one after the other, and sorting all points by time gives.
std::vector<std::string> WholeAndSorted(const std::vector<std::string>& paths) {
  Normalizer names(SignalMap::Default(), true);
  std::vector<Point> points;
  Point p;
  for (const std::string& path : paths) {
    ReadOptions o;
    o.source = path;
    EXPECT_TRUE(ParseLongCsv(*ReadFile(path), o, [&](const RawSample& r) {
                  if (names.Normalize(r, &p)) points.push_back(p);
                }).ok());
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const Point& a, const Point& b) { return a.time < b.time; });
  std::vector<std::string> out;
  for (const Point& q : points) out.push_back(Describe(names, q));
  return out;
}

// A job's CSV: `machines` machines (m<first>, ...) x 2 GPUs, a sample each second from `from` to
// `to`, each machine's scrape `stagger` x its number seconds late (0: at the whole second).
std::string JobCsv(int machines, int from, int to, double stagger = 0, int first = 0) {
  std::string text = "timestamp,machine,metric,value,component\n";
  for (int t = from; t < to; ++t) {
    for (int m = first; m < first + machines; ++m) {
      for (int g = 0; g < 2; ++g) {
        text += fmt::format("{},m{},gpu_power,{},gpu{}\n", t + stagger * (m - first), m,
                            500 + (t * 7 + m * 3 + g) % 13, g);
      }
    }
  }
  return text;
}

// The lines of a CSV (header first) sorted by series: machine, metric, component; stable, so
// each series keeps its time order.
std::string SortedBySeries(const std::string& csv) {
  std::vector<std::string> lines;
  for (size_t at = csv.find('\n') + 1; at < csv.size();) {
    const size_t end = csv.find('\n', at);
    lines.push_back(csv.substr(at, end + 1 - at));
    at = end + 1;
  }
  const auto series = [](const std::string& l) {  // machine,metric,...,component
    const size_t machine = l.find(',') + 1, value = l.find(',', l.find(',', machine) + 1);
    return l.substr(machine, value - machine) + l.substr(l.find(',', value + 1));
  };
  std::stable_sort(lines.begin(), lines.end(), [&](const std::string& a, const std::string& b) {
    return series(a) < series(b);
  });
  std::string out = csv.substr(0, csv.find('\n') + 1);
  for (const std::string& l : lines) out += l;
  return out;
}

// The lines of a CSV (header first), each made up to `seconds` late in a fixed pseudo-random way
// and written in the order they would arrive: scrapes written as they came in.
std::string Jittered(const std::string& csv, double seconds) {
  std::vector<std::pair<double, std::string>> lines;
  uint64_t state = 11;
  for (size_t at = csv.find('\n') + 1; at < csv.size();) {
    const size_t end = csv.find('\n', at);
    std::string line = csv.substr(at, end + 1 - at);
    state = state * 6364136223846793005u + 1442695040888963407u;
    const double late = static_cast<double>(state >> 11) * 0x1p-53 * seconds;
    lines.emplace_back(std::strtod(line.c_str(), nullptr) + late, std::move(line));
    at = end + 1;
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = csv.substr(0, csv.find('\n') + 1);
  for (const auto& l : lines) out += l.second;
  return out;
}

class FileSourceTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    dir_.Write(name, text);
    return dir_.File(name);
  }
  vigil::testing::TempDir dir_;
  vigil::testing::TempDir spill_;  // where runs are written
};

TEST_F(FileSourceTest, AFileInTimeOrderHoldsAboutOnePiece) {
  const std::string path = Write("t.csv", JobCsv(8, 0, 300));
  const Streamed s = Stream({path}, 4096);
  ASSERT_TRUE(s.status.ok()) << s.status.ToString();
  EXPECT_EQ(s.points, WholeAndSorted({path}));
  EXPECT_EQ(s.points.size(), 8u * 2 * 300);
  EXPECT_LE(s.peak_buffered, 4096u / 20);  // a piece of lines of 20 bytes or more
  EXPECT_GT(s.batches, 1u);
}

// Staggered scrapes: a sample comes up to 8 x 0.7 s after one of a later second; the buffer
// holds those seconds, not the file.
TEST_F(FileSourceTest, StaggeredScrapesHoldTheirDisorderOnly) {
  const std::string path = Write("t.csv", JobCsv(8, 0, 300, 0.7));
  const Streamed s = Stream({path}, 4096);
  ASSERT_TRUE(s.status.ok()) << s.status.ToString();
  EXPECT_EQ(s.points, WholeAndSorted({path}));
  EXPECT_LT(s.peak_buffered, 8u * 2 * 20);
}

// A file sorted by series is in no time order: it is held whole, and comes out as sorting did.
TEST_F(FileSourceTest, AFileSortedBySeriesGivesWhatSortingGave) {
  const std::string path = Write("t.csv", SortedBySeries(JobCsv(8, 0, 300, 0.25)));
  const Streamed s = Stream({path}, 512);
  ASSERT_TRUE(s.status.ok()) << s.status.ToString();
  EXPECT_EQ(s.points, WholeAndSorted({path}));
  EXPECT_GT(s.peak_buffered, 8u * 2 * 250);
}

TEST_F(FileSourceTest, FilesAreMergedByTime) {
  // Per machine: equal times keep the order the files were given.
  std::vector<std::string> machines;
  std::string job = JobCsv(3, 0, 100);
  for (int m = 0; m < 3; ++m) {
    std::string text = "timestamp,machine,metric,value,component\n";
    for (size_t at = job.find('\n') + 1; at < job.size();) {
      const size_t end = job.find('\n', at);
      const std::string line = job.substr(at, end + 1 - at);
      if (line.find(fmt::format(",m{},", m)) != std::string::npos) text += line;
      at = end + 1;
    }
    machines.push_back(Write(fmt::format("m{}.csv", m), text));
  }
  const Streamed merged = Stream(machines, 256);
  ASSERT_TRUE(merged.status.ok()) << merged.status.ToString();
  EXPECT_EQ(merged.points, WholeAndSorted(machines));
  // By hour, given in any order: each file is opened when the merge reaches it, so that a
  // series continued in a later file is read in time order.
  const std::string first = Write("a.csv", JobCsv(4, 0, 100));
  const std::string second = Write("b.csv", JobCsv(4, 100, 200));
  const Streamed reversed = Stream({second, first}, 256);
  ASSERT_TRUE(reversed.status.ok());
  EXPECT_EQ(reversed.points, WholeAndSorted({first, second}));
  EXPECT_EQ(reversed.points.size(), 4u * 2 * 200);
}

// Files read side by side share the pieces' budget: sixteen files of 200 KB hold a 64 KB piece
// each, not 1 MB (the whole file).
TEST_F(FileSourceTest, FilesReadSideBySideShareOnePieceBudget) {
  std::vector<std::string> paths;
  for (int f = 0; f < 16; ++f) {
    paths.push_back(Write(fmt::format("m{}.csv", f), JobCsv(4, 0, 900, 0, 4 * f)));
  }
  const Streamed s = Stream(paths, 1 << 20);
  ASSERT_TRUE(s.status.ok()) << s.status.ToString();
  EXPECT_EQ(s.points.size(), 16u * 4 * 2 * 900);
  EXPECT_LT(s.peak_buffered, 16u * (64 << 10) / 20);  // lines of 20 bytes or more
}

TEST_F(FileSourceTest, ErrorsNameFileLineAndFieldBeforeAnyPoint) {
  const std::string good = Write("good.csv", JobCsv(2, 0, 50));
  const std::string bad = Write("bad.csv", JobCsv(2, 0, 50) + "60,m0,gpu_power,oops,gpu0\n");
  const Streamed s = Stream({good, bad}, 128);
  EXPECT_EQ(s.status.message(), bad + ":202: value: \"oops\" is not a number");
  EXPECT_TRUE(s.points.empty());
  // Lenient: the line is skipped and counted once, though read twice.
  const Streamed lenient = Stream({good, bad}, 128, true);
  ASSERT_TRUE(lenient.status.ok());
  EXPECT_EQ(lenient.skipped, 1);
  EXPECT_EQ(Stream({good, Write("t.xml", "")}, 128).status.message(),
            dir_.File("t.xml") +
                ": cannot tell the format from the name; give --format csv, "
                "jsonl or prom");
  EXPECT_EQ(Stream({Write("empty.csv", "")}, 128).status.message(),
            dir_.File("empty.csv") + ":1: header: empty file, expected a header line");
  EXPECT_EQ(Stream({dir_.path() + "/none.csv"}, 128).status.code(), StatusCode::kNotFound);
}

TEST_F(FileSourceTest, AScrapeWithoutTimestampsTakesTheFilesTime) {
  const std::string path =
      Write("s.prom", "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",Hostname=\"h\"} 300\n");
  const utimbuf times{1700000000, 1700000000};
  ASSERT_EQ(utime(path.c_str(), &times), 0);
  const Streamed s = Stream({path}, 128);
  ASSERT_TRUE(s.status.ok()) << s.status.ToString();
  EXPECT_EQ(s.points, std::vector<std::string>{"1700000000 h gpu_power gpu0 300"});
}

TEST_F(FileSourceTest, APipeIsReadOnceAndWhole) {
  const std::string path = dir_.File("pipe.csv");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const std::string text = SortedBySeries(JobCsv(4, 0, 60));
  std::thread writer([&] { EXPECT_TRUE(WriteFileAtomic(path, text).ok()); });
  const Streamed s = Stream({path}, 128);
  writer.join();
  ASSERT_TRUE(s.status.ok()) << s.status.ToString();
  EXPECT_EQ(s.points, WholeAndSorted({Write("copy.csv", text)}));
}

// Points beyond max_buffered_points go to runs on disk and come back merged in the order holding
// them gave, for any disorder; memory holds the bound, not one point more.
TEST_F(FileSourceTest, SpillingGivesWhatHoldingGave) {
  const std::string series = Write("series.csv", SortedBySeries(JobCsv(8, 0, 300, 0.25)));
  const std::string jitter = Write("jitter.csv", Jittered(JobCsv(8, 0, 300), 20));
  // Several files in mixed order: the second hour before the first (sorted by series), and two
  // more machines' jittered samples across both.
  const std::string second = Write("h2.csv", JobCsv(4, 100, 200));
  const std::string first = Write("h1.csv", SortedBySeries(JobCsv(4, 0, 100, 0.5)));
  const std::string more = Write("m.csv", Jittered(JobCsv(2, 50, 150, 0, 4), 3));
  const std::vector<std::vector<std::string>> inputs = {{series}, {jitter}, {second, first, more}};
  for (const std::vector<std::string>& paths : inputs) {
    SCOPED_TRACE(paths.front());
    FileSourceOptions o;
    o.paths = paths;
    o.chunk_bytes = 512;
    o.spill_directory = spill_.path();
    const Streamed held = Stream(o);
    ASSERT_TRUE(held.status.ok()) << held.status.ToString();
    EXPECT_EQ(held.spilled, 0u);
    EXPECT_GT(held.peak_buffered, 100u);
    // 1: every point goes to a run of its own, and runs are merged into runs of 16, 256, 4,096.
    for (const size_t bound : {1, 7, 100}) {
      SCOPED_TRACE(bound);
      o.max_buffered_points = bound;
      const Streamed spilled = Stream(o);
      ASSERT_TRUE(spilled.status.ok()) << spilled.status.ToString();
      EXPECT_EQ(spilled.points, held.points);
      EXPECT_LE(spilled.peak_buffered, bound);
      EXPECT_GT(spilled.spilled, 0u);
      EXPECT_EQ(spill_.EntryCount(), 0u);
    }
  }
}

// A run's file leaves its directory as soon as it is made: none is there while the points are
// merged, after the end, after a sink that fails, after a malformed line.
TEST_F(FileSourceTest, NoSpillFileIsLeftBehind) {
  const testing::ScopedEnv tmpdir("TMPDIR", spill_.path());
  const std::string text = SortedBySeries(JobCsv(8, 0, 300));
  FileSourceOptions o;
  o.paths = {Write("t.csv", text)};
  o.max_buffered_points = 100;
  size_t files_seen = 0;
  const Streamed done = Stream(o, [&] {
    files_seen = std::max(files_seen, spill_.EntryCount());
    return Status::Ok();
  });
  ASSERT_TRUE(done.status.ok()) << done.status.ToString();
  EXPECT_GT(done.spilled, 0u);
  EXPECT_EQ(files_seen, 0u);
  EXPECT_EQ(spill_.EntryCount(), 0u);

  const Streamed stopped = Stream(o, [] { return Status::Cancelled("stop"); });
  EXPECT_EQ(stopped.status.code(), StatusCode::kCancelled);
  EXPECT_EQ(stopped.batches, 1u);
  EXPECT_EQ(spill_.EntryCount(), 0u);

  // A pipe is read once, without the first pass that checks every line: its malformed last line
  // comes after runs were written.
  const std::string pipe = dir_.File("pipe.csv");
  ASSERT_EQ(mkfifo(pipe.c_str(), 0600), 0);
  std::thread writer([&] { EXPECT_TRUE(WriteFileAtomic(pipe, text + "9,m0,x,oops\n").ok()); });
  o.paths = {pipe};
  const Streamed failed = Stream(o);
  writer.join();
  EXPECT_TRUE(failed.status.message().starts_with(pipe + ":4802: ")) << failed.status.ToString();
  EXPECT_GT(failed.spilled, 0u);
  EXPECT_TRUE(failed.points.empty());
  EXPECT_EQ(spill_.EntryCount(), 0u);
}

TEST_F(FileSourceTest, ASpillThatCannotBeWrittenIsAnError) {
  FileSourceOptions o;
  o.paths = {Write("t.csv", SortedBySeries(JobCsv(8, 0, 300)))};
  o.max_buffered_points = 1000;
  o.spill_directory = dir_.File("none");
  const Streamed missing = Stream(o);
  EXPECT_EQ(missing.status.code(), StatusCode::kIoError);
  EXPECT_EQ(missing.status.message(), fmt::format("cannot make a spill file in {}: No such file "
                                                  "or directory",
                                                  o.spill_directory));
  EXPECT_TRUE(missing.points.empty());

  // A full disk, as a file size limit gives it (EFBIG): runs of 1,000 points are 40 KB.
  o.spill_directory = spill_.path();
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &limit), 0);
  rlimit small = limit;
  small.rlim_cur = std::min<rlim_t>(4096, limit.rlim_max);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // else the limit kills the process
  const int limited = setrlimit(RLIMIT_FSIZE, &small);
  const Streamed full = Stream(o);
  setrlimit(RLIMIT_FSIZE, &limit);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_EQ(limited, 0);
  EXPECT_EQ(full.status.code(), StatusCode::kIoError);
  EXPECT_EQ(full.status.message(),
            fmt::format("cannot write a spill file in {}: File too large", spill_.path()));
  EXPECT_EQ(spill_.EntryCount(), 0u);

  o.max_buffered_points = 0;
  EXPECT_EQ(Stream(o).status.message(), "max_buffered_points must be at least 1");
}

TEST(FormatOfTest, ByNameOrAsGiven) {
  EXPECT_EQ(*FormatOf("a.csv", "auto"), TelemetryFormat::kLongCsv);
  EXPECT_EQ(*FormatOf("a.json", "auto"), TelemetryFormat::kJsonl);
  EXPECT_EQ(*FormatOf("a.metrics", "auto"), TelemetryFormat::kExposition);
  EXPECT_EQ(*FormatOf("a.txt", "jsonl"), TelemetryFormat::kJsonl);
  EXPECT_FALSE(FormatOf("a.csv", "xml").ok());
}

}  // namespace
}  // namespace vigil::telemetry
