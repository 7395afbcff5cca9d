#include "vigil/telemetry/file_source.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::telemetry {
namespace {

// A point by its names, as two normalisers that met the names in another order agree on.
std::string Describe(const Normalizer& names, const Point& p) {
  return fmt::format("{} {} {} {} {}{}", p.time, names.machines().Name(p.machine),
                     names.signals()[p.signal].name, names.components().Name(p.component), p.value,
                     p.held ? " held" : "");
}

struct Streamed {
  Status status;
  std::vector<std::string> points;
  size_t peak_buffered = 0;
  int64_t skipped = 0;
  size_t batches = 0;
};

Streamed Stream(const std::vector<std::string>& paths, size_t chunk_bytes, bool lenient = false) {
  Normalizer names(SignalMap::Default(), true);
  FileSourceOptions o;
  o.paths = paths;
  o.chunk_bytes = chunk_bytes;
  o.lenient = lenient;
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
    return Status::Ok();
  });
  out.peak_buffered = source.peak_buffered();
  out.skipped = source.skipped();
  return out;
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

class FileSourceTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    dir_.Write(name, text);
    return dir_.File(name);
  }
  vigil::testing::TempDir dir_;
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

TEST(FormatOfTest, ByNameOrAsGiven) {
  EXPECT_EQ(*FormatOf("a.csv", "auto"), TelemetryFormat::kLongCsv);
  EXPECT_EQ(*FormatOf("a.json", "auto"), TelemetryFormat::kJsonl);
  EXPECT_EQ(*FormatOf("a.metrics", "auto"), TelemetryFormat::kExposition);
  EXPECT_EQ(*FormatOf("a.txt", "jsonl"), TelemetryFormat::kJsonl);
  EXPECT_FALSE(FormatOf("a.csv", "xml").ok());
}

}  // namespace
}  // namespace vigil::telemetry
