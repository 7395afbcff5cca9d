#include "vigil/telemetry/prometheus_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace vigil::telemetry {
namespace {

// A Prometheus that answers from a script: each query is recorded with the clock's time, and
// answered with a sample per second of the range for one series, or with the next scripted error.
class FakePrometheus final : public PrometheusApi {
 public:
  explicit FakePrometheus(FakeClock& clock) : clock_(clock) {}

  struct Query {
    double at, start, end, step;
  };

  Status QueryRange(std::string_view selector, double start, double end, double step,
                    const SampleSink& sink, int64_t*) override {
    EXPECT_EQ(selector, "{job=\"x\"}");
    queries.push_back({clock_.WallSeconds(), start, end, step});
    if (on_query) on_query(queries.size());
    if (!errors.empty()) {
      const Status s = errors.front();
      errors.erase(errors.begin());
      if (!s.ok()) return s;
    }
    // Series by series, as Prometheus answers: the batch must come out in time order.
    for (const char* machine : {"b", "a"}) {
      for (double t = start; t <= end; t += step) {
        RawSample r;
        r.time = t;
        r.machine = machine;
        r.metric = "gpu_power";
        r.value = t;
        sink(r);
      }
    }
    return Status::Ok();
  }

  std::vector<Query> queries;
  std::vector<Status> errors;  // answers of the next queries; OK: samples
  std::function<void(size_t)> on_query;

 private:
  FakeClock& clock_;
};

struct Batch {
  size_t points;
  double first, last, until;
};

class PrometheusSourceTest : public ::testing::Test {
 protected:
  Status Run(const PollOptions& o) {
    PrometheusSource source(o, "http://prom", prometheus_, names_, clock_, &interrupted_);
    return source.Run([&](std::span<const Point> points, double until) {
      for (size_t i = 1; i < points.size(); ++i) EXPECT_LE(points[i - 1].time, points[i].time);
      batches_.push_back({points.size(), points.empty() ? NAN : points.front().time,
                          points.empty() ? NAN : points.back().time, until});
      return Status::Ok();
    });
  }
  PollOptions Follow(double duration) {
    PollOptions o;
    o.selector = "{job=\"x\"}";
    o.since = 60;
    o.follow = true;
    o.poll = 5;
    o.duration = duration;
    return o;
  }

  FakeClock clock_{1'700'000'000.5};
  FakePrometheus prometheus_{clock_};
  Normalizer names_{SignalMap::Default(), true};
  std::atomic<bool> interrupted_{false};
  std::vector<Batch> batches_;
};

TEST_F(PrometheusSourceTest, OneQueryReachesBackSinceAndLeavesTheNewestSeconds) {
  PollOptions o = Follow(0);
  o.follow = false;
  ASSERT_TRUE(Run(o).ok());
  ASSERT_EQ(prometheus_.queries.size(), 1u);
  const FakePrometheus::Query& q = prometheus_.queries[0];
  EXPECT_EQ(q.start, 1'700'000'000.0 - 60);
  EXPECT_EQ(q.end, 1'700'000'000.0 - PrometheusSource::kSettleSeconds);
  ASSERT_EQ(batches_.size(), 1u);
  EXPECT_EQ(batches_[0].points, 2u * 59);
  EXPECT_EQ(batches_[0].until, q.end + 1);
  EXPECT_DOUBLE_EQ(clock_.WallSeconds(), 1'700'000'000.5);  // no wait
}

TEST_F(PrometheusSourceTest, FollowPollsWhatArrivedUntilItsDuration) {
  ASSERT_TRUE(Run(Follow(20)).ok());
  // At 0, 5, 10, 15 and 20 s; then the duration is up.
  ASSERT_EQ(prometheus_.queries.size(), 5u);
  for (size_t i = 1; i < prometheus_.queries.size(); ++i) {
    EXPECT_DOUBLE_EQ(prometheus_.queries[i].at - prometheus_.queries[i - 1].at, 5);
    EXPECT_EQ(prometheus_.queries[i].start, prometheus_.queries[i - 1].end + 1);
  }
  EXPECT_EQ(batches_.back().until, prometheus_.queries.back().end + 1);
  EXPECT_DOUBLE_EQ(clock_.WallSeconds(), 1'700'000'020.5);
}

TEST_F(PrometheusSourceTest, FailedQueriesAreRetriedWithBackOffAndNothingIsLost) {
  prometheus_.errors = {Status::Unavailable("down"), Status::Unavailable("down"),
                        Status::Unavailable("down"), Status::Ok(), Status::Unavailable("down")};
  ASSERT_TRUE(Run(Follow(60)).ok());
  std::vector<double> waits;
  for (size_t i = 1; i < prometheus_.queries.size(); ++i) {
    waits.push_back(prometheus_.queries[i].at - prometheus_.queries[i - 1].at);
  }
  // 5, 10, 20 after failures, then the poll again; after a new failure, 5 again.
  ASSERT_GE(waits.size(), 5u);
  EXPECT_EQ(std::vector<double>(waits.begin(), waits.begin() + 5),
            (std::vector<double>{5, 10, 20, 5, 5}));
  // The answer after the failures reaches back to where the last good one ended.
  EXPECT_EQ(prometheus_.queries[3].start, prometheus_.queries[0].start);
  EXPECT_EQ(batches_[0].first, prometheus_.queries[0].start);
}

TEST_F(PrometheusSourceTest, WithoutFollowAFailureIsTheError) {
  prometheus_.errors = {Status::Unavailable("down")};
  PollOptions o = Follow(0);
  o.follow = false;
  EXPECT_EQ(Run(o).message(), "down");
  EXPECT_TRUE(batches_.empty());
}

TEST_F(PrometheusSourceTest, AServerThatNeverAnsweredJudgedNothing) {
  prometheus_.errors.assign(100, Status::Unavailable("connection refused"));
  const Status s = Run(Follow(30));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "no samples to judge; the last query failed: connection refused");
}

TEST_F(PrometheusSourceTest, AnInterruptionStopsTheFollowAtItsNextWait) {
  prometheus_.on_query = [&](size_t n) {
    if (n == 3) interrupted_ = true;
  };
  ASSERT_TRUE(Run(Follow(0)).ok());
  EXPECT_EQ(prometheus_.queries.size(), 3u);
}

TEST(PollOptionsTest, OutOfRangeIsNamed) {
  PollOptions o;
  EXPECT_EQ(ValidatePollOptions(o).message(), "--selector: empty");
  o.selector = "{a=\"b\"}";
  EXPECT_TRUE(ValidatePollOptions(o).ok());
  o.poll = 0.01;
  EXPECT_EQ(ValidatePollOptions(o).message(), "--poll: 10ms is outside [100ms, 1h]");
  o.poll = 5;
  o.step = 0;
  EXPECT_EQ(ValidatePollOptions(o).message(), "--step: 0s is outside [10ms, 1h]");
  o.step = 1;
  o.duration = 0.5;
  EXPECT_EQ(ValidatePollOptions(o).message(), "--duration: 500ms is outside [1s, 3650d]");
}

}  // namespace
}  // namespace vigil::telemetry
