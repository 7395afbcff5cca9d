#include "vigil/server/telemetry_exporter.h"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "vigil/core/duration.h"
#include "vigil/core/file.h"

namespace vigil::server {

TelemetryExporter::TelemetryExporter(sim::TelemetryGenerator& gen, double speed, const Clock& clock)
    : gen_(gen), speed_(speed), clock_(clock) {}

TelemetryExporter::~TelemetryExporter() { Stop(); }

std::string TelemetryExporter::Scrape() {
  MutexLock lock(mu_);
  const auto seconds = static_cast<int64_t>(gen_.job().duration_s);
  const auto now = std::min<int64_t>(
      seconds - 1, static_cast<int64_t>((clock_.WallSeconds() - started_) * speed_));
  while (next_ <= now) last_ = gen_.Exposition(next_++);
  return last_;
}

Result<int> TelemetryExporter::Start(const std::string& host, int port) {
  server_ = std::make_unique<httplib::Server>();
  started_ = clock_.WallSeconds();
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(Scrape(), "text/plain; version=0.0.4");
  });
  const int bound =
      port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    server_.reset();
    return Status::IoError(fmt::format("cannot listen on {}:{}", host, port));
  }
  listener_ = std::thread([this] { server_->listen_after_bind(); });
  // A stop() before the thread listens would leave it listening for ever.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return bound;
}

void TelemetryExporter::Stop() {
  if (!server_) return;
  server_->stop();
  listener_.join();
  server_.reset();
}

Status ServeTelemetry(sim::TelemetryGenerator& gen, const ExporterOptions& o, Clock& clock,
                      const std::atomic<bool>* interrupted) {
  TelemetryExporter exporter(gen, o.speed, clock);
  VIGIL_ASSIGN_OR_RETURN(const int bound, exporter.Start(o.host, o.port));
  if (!o.port_file.empty()) {
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.port_file, fmt::format("{}\n", bound)));
  }
  spdlog::info("serving {} machines at http://{}:{}/metrics for {}", gen.job().machines, o.host,
               bound, FormatDuration(exporter.real_duration()));
  const double started = clock.WallSeconds();
  while (interrupted == nullptr || !interrupted->load()) {
    const double left = exporter.real_duration() - (clock.WallSeconds() - started);
    if (left <= 0) break;
    clock.SleepFor(left, interrupted);
  }
  return Status::Ok();
}

}  // namespace vigil::server
