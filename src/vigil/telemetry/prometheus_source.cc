#include "vigil/telemetry/prometheus_source.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "vigil/core/duration.h"
#include "vigil/telemetry/frame.h"

namespace vigil::telemetry {

Status ValidatePollOptions(const PollOptions& o) {
  if (o.selector.empty()) return Status::InvalidArgument("--selector: empty");
  VIGIL_RETURN_IF_ERROR(CheckBounds("--since", o.since, kSinceBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--step", o.step, kStepBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--poll", o.poll, kPollBounds));
  if (o.duration != 0) {
    VIGIL_RETURN_IF_ERROR(CheckBounds("--duration", o.duration, kFollowDurationBounds));
  }
  return Status::Ok();
}

PrometheusSource::PrometheusSource(PollOptions options, std::string name, PrometheusApi& server,
                                   Normalizer& names, Clock& clock,
                                   const std::atomic<bool>* interrupted)
    : o_(std::move(options)),
      name_(std::move(name)),
      server_(server),
      names_(names),
      clock_(clock),
      interrupted_(interrupted) {}

Result<std::unique_ptr<PrometheusSource>> PrometheusSource::Connect(
    const std::string& url, const TlsClientOptions& tls, PollOptions options, Normalizer& names,
    Clock& clock, const std::atomic<bool>* interrupted) {
  VIGIL_RETURN_IF_ERROR(ValidatePollOptions(options));
  constexpr double kTimeoutSeconds = 10;
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<PrometheusClient> client,
                         PrometheusClient::Create(url, kTimeoutSeconds, tls));
  auto source = std::make_unique<PrometheusSource>(std::move(options), url, *client, names, clock,
                                                   interrupted);
  source->client_ = std::move(client);
  return source;
}

Status PrometheusSource::Run(const BatchSink& sink) {
  const auto interrupted = [&] { return interrupted_ != nullptr && interrupted_->load(); };
  const double started = clock_.WallSeconds();
  double from = std::floor(started - o_.since);
  Backoff retry(o_.poll, std::max(o_.poll, kMaxRetrySeconds));
  Status last_query;
  for (;;) {
    double wait = o_.poll;
    const double to = std::floor(clock_.WallSeconds() - kSettleSeconds);
    if (to >= from) {
      batch_.clear();
      Point p;
      last_query = server_.QueryRange(
          o_.selector, from, to, o_.step,
          [&](const RawSample& r) {
            if (names_.Normalize(r, &p)) batch_.push_back(p);
          },
          &skipped_);
      if (!last_query.ok()) {
        if (!o_.follow) return last_query;
        wait = retry.Fail();
        spdlog::warn("{} (retrying in {})", last_query.message(), FormatDuration(wait));
      } else {
        retry.Reset();
        // Stable: equal times keep the answer's order (series by series).
        std::stable_sort(batch_.begin(), batch_.end(),
                         [](const Point& a, const Point& b) { return a.time < b.time; });
        VIGIL_RETURN_IF_ERROR(sink(batch_, to + o_.step));
        from = to + o_.step;
        spdlog::debug("{} points up to {}", batch_.size(), FormatUtc(to));
      }
    }
    if (!o_.follow) break;
    const double elapsed = clock_.WallSeconds() - started;
    if (interrupted() || (o_.duration > 0 && elapsed >= o_.duration)) break;
    if (o_.duration > 0) wait = std::min(wait, o_.duration - elapsed);
    clock_.SleepFor(wait, interrupted_);
  }
  if (names_.counts().accepted == 0 && !last_query.ok()) {
    return Status::Unavailable(
        fmt::format("no samples to judge; the last query failed: {}", last_query.message()));
  }
  return Status::Ok();
}

}  // namespace vigil::telemetry
