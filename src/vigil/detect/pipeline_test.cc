#include "vigil/detect/pipeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/telemetry/readers.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::detect {
namespace {

// Six machines with two GPUs each for `seconds`; n3's GPU 1 reports XID 79 from second 100.
std::string JobCsv(int seconds) {
  std::string text = "timestamp,machine,metric,value,component\n";
  for (int t = 0; t < seconds; ++t) {
    for (int m = 0; m < 6; ++m) {
      for (int g = 0; g < 2; ++g) {
        text += fmt::format("{},n{},gpu_power,{},gpu{}\n", 1.7e9 + t, m, 500 + (t + m + g) % 7, g);
        text += fmt::format("{},n{},xid,{},gpu{}\n", 1.7e9 + t, m,
                            m == 3 && g == 1 && t >= 100 ? 79 : 0, g);
      }
    }
  }
  return text;
}

std::string Jsonl(const std::vector<Alert>& alerts) {
  std::string out;
  for (const Alert& a : alerts) out += DumpJson(AlertToJson(a)) + "\n";
  return out;
}

class PipelineTest : public ::testing::Test {
 protected:
  DetectionOptions FilesOptions() {
    dir_.Write("t.csv", JobCsv(300));
    dir_.Write("labels.csv", "machine,onset,kind\nn3,1700000100,xid\n");
    DetectionOptions o;
    o.files.paths = {dir_.File("t.csv")};
    o.files.chunk_bytes = 4096;
    o.labels = dir_.File("labels.csv");
    o.out = dir_.File("alerts.jsonl");
    o.on_alert = [this](const Alert& a) { handed_.push_back(a); };
    return o;
  }
  vigil::testing::TempDir dir_;
  std::vector<Alert> handed_;
};

TEST_F(PipelineTest, FilesGiveTheDetectorsAlertsWrittenScoredAndHandedOver) {
  Result<DetectionReport> r = RunDetection(FilesOptions());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->alerts.size(), 1u);
  EXPECT_EQ(r->alerts[0].machine, "n3");
  EXPECT_EQ(r->alerts[0].rule, "xid 79");
  EXPECT_EQ(r->alerts[0].detected, 1.7e9 + 100);
  EXPECT_EQ(Jsonl(handed_), Jsonl(r->alerts));
  EXPECT_EQ(*ReadFile(dir_.File("alerts.jsonl")), Jsonl(r->alerts));
  ASSERT_TRUE(r->score.has_value());
  EXPECT_EQ(r->score->detected, 1);
  EXPECT_EQ(r->machines, 6u);
  EXPECT_GT(r->counts.accepted, 6 * 2 * 300);  // XIDs of 0 repeated are held, not new
  EXPECT_TRUE(r->delivery.ok());

  // The same as the detector fed the whole file, sorted.
  telemetry::Normalizer names(telemetry::SignalMap::Default(), true);
  Detector detector({}, names);
  std::vector<telemetry::Point> points;
  telemetry::Point p;
  ASSERT_TRUE(telemetry::ParseLongCsv(JobCsv(300), {}, [&](const telemetry::RawSample& s) {
                if (names.Normalize(s, &p)) points.push_back(p);
              }).ok());
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  for (const telemetry::Point& q : points) detector.Feed(q);
  detector.Flush();
  EXPECT_EQ(Jsonl(detector.TakeAlerts()), Jsonl(r->alerts));
}

TEST_F(PipelineTest, NoSampleIsNoHealthyJob) {
  DetectionOptions o = FilesOptions();
  dir_.Write("empty.csv", "timestamp,machine,metric,value\n1,a,power,\n");
  o.files.paths = {dir_.File("empty.csv"), dir_.File("empty.csv")};
  const Status s = RunDetection(o).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), fmt::format("{0}, {0}: no samples to judge (dropped: 0 unmapped, 2 "
                                     "missing values, 0 duplicates, 0 out of order, 0 counter "
                                     "bases; 0 malformed lines skipped)",
                                     dir_.File("empty.csv")));
  EXPECT_FALSE(ReadFile(dir_.File("alerts.jsonl")).ok());  // nothing written
}

TEST_F(PipelineTest, OptionsAreCheckedFirst) {
  DetectionOptions o = FilesOptions();
  o.detector.step = 0;
  EXPECT_EQ(RunDetection(o).status().message(), "--step: 0s is outside [10ms, 1h]");
  o = FilesOptions();
  o.prometheus = "http://127.0.0.1:1";
  EXPECT_EQ(RunDetection(o).status().code(), StatusCode::kInvalidArgument);
  o.files.paths.clear();
  EXPECT_EQ(RunDetection(o).status().message(),
            "--prometheus needs --selector, e.g. '{job=\"train\"}'");
  o = FilesOptions();
  o.labels = dir_.File("none.csv");
  EXPECT_EQ(RunDetection(o).status().code(), StatusCode::kNotFound);
}

TEST_F(PipelineTest, EachRejectedOptionIsNamedByItsFlag) {
  const struct {
    void (*set)(DetectionOptions&);
    const char* message;
  } cases[] = {
      {[](DetectionOptions& o) { o.files.paths.clear(); },
       "give either --input FILE... or --prometheus URL"},
      {[](DetectionOptions& o) { o.prometheus = "http://127.0.0.1:1"; },
       "give either --input FILE... or --prometheus URL"},
      {[](DetectionOptions& o) {
         o.files.paths.clear();
         o.prometheus = "http://127.0.0.1:1";
       },
       "--prometheus needs --selector, e.g. '{job=\"train\"}'"},
      {[](DetectionOptions& o) { o.poll.follow = true; }, "--follow needs --prometheus"},
      {[](DetectionOptions& o) { o.detector.peer.warmup_s = -1; },
       "--warmup: -1s is outside [0s, 1h]"},
      // A server's poll options; with files they are not used, and not checked.
      {[](DetectionOptions& o) {
         o.files.paths.clear();
         o.prometheus = "http://127.0.0.1:1";
         o.poll.selector = "{job=\"x\"}";
         o.poll.poll = 0;
       },
       "--poll: 0s is outside [100ms, 1h]"},
      {[](DetectionOptions& o) {
         o.files.paths.clear();
         o.prometheus = "http://127.0.0.1:1";
         o.poll.selector = "{job=\"x\"}";
         o.detector.step = 7200;
       },
       "--step: 2h is outside [10ms, 1h]"},
  };
  for (const auto& c : cases) {
    DetectionOptions o = FilesOptions();
    c.set(o);
    const Status s = ValidateDetectionOptions(o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(s.message(), c.message);
  }
  DetectionOptions files = FilesOptions();
  EXPECT_TRUE(ValidateDetectionOptions(files).ok());
  files.poll.poll = 0;  // not used with files
  EXPECT_TRUE(ValidateDetectionOptions(files).ok());
}

// A live source: its batches come with the time they are complete to.
class LiveSource : public telemetry::PointSource {
 public:
  struct Batch {
    std::vector<telemetry::Point> points;
    double until;
  };
  explicit LiveSource(std::vector<Batch> batches) : batches_(std::move(batches)) {}
  Status Run(const telemetry::BatchSink& sink) override {
    for (const Batch& b : batches_) {
      VIGIL_RETURN_IF_ERROR(sink(b.points, b.until));
      ++handed;
    }
    return Status::Ok();
  }
  std::string name() const override { return "live"; }
  int64_t skipped() const override { return 0; }
  int handed = 0;

 private:
  std::vector<Batch> batches_;
};

TEST_F(PipelineTest, ALiveSourcesAlertsGoOutAsTheyAreRaised) {
  telemetry::Normalizer names(telemetry::SignalMap::Default(), true);
  std::vector<LiveSource::Batch> batches(3);
  telemetry::Point p;
  ASSERT_TRUE(telemetry::ParseLongCsv(JobCsv(300), {}, [&](const telemetry::RawSample& s) {
                if (names.Normalize(s, &p))
                  batches[static_cast<size_t>(s.time - 1.7e9) / 100].points.push_back(p);
              }).ok());
  for (size_t i = 0; i < batches.size(); ++i) batches[i].until = 1.7e9 + 100.0 * (i + 1);
  LiveSource source(batches);
  FakeClock clock;
  std::vector<int> posted_after;  // batches handed over when each post came
  DetectionOptions o;
  o.poll.follow = true;
  o.out = dir_.File("live.jsonl");
  o.clock = &clock;
  o.post = [&](std::string_view jsonl) {
    posted_after.push_back(source.handed);
    EXPECT_EQ(jsonl.find("xid 79") != std::string_view::npos, true);
    return posted_after.size() == 1 ? Status::Unavailable("down") : Status::Ok();
  };
  o.post_to = "http://fleet";
  int raised_after = -1;
  o.on_alert = [&](const Alert&) { raised_after = source.handed; };
  Result<DetectionReport> r = Detect(o, source, names, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->alerts.size(), 1u);
  // Raised in the second batch (XID 79 at 100 s, closed by until = 200 s), appended at once;
  // the failed post is tried again at the end.
  EXPECT_EQ(raised_after, 1);
  EXPECT_EQ(posted_after, (std::vector<int>{1, 3}));
  EXPECT_EQ(*ReadFile(dir_.File("live.jsonl")), Jsonl(r->alerts));
  EXPECT_TRUE(r->delivery.ok());
  EXPECT_FALSE(r->score.has_value());
}

}  // namespace
}  // namespace vigil::detect
