// A simulated job's telemetry served at /metrics as dcgm-exporter and node-exporter serve it
// (`vigil simulate telemetry --serve`), for a Prometheus to scrape: a scrape at `t` seconds of
// real time after the start sees the job's second t x speed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "vigil/core/clock.h"
#include "vigil/core/mutex.h"
#include "vigil/core/status.h"
#include "vigil/sim/telemetry_gen.h"

namespace httplib {
class Server;
}

namespace vigil::server {

class TelemetryExporter {
 public:
  // `gen` and `clock` must outlive the exporter. The clock is read on the server's thread: the
  // SystemClock, or a FakeClock moved only while no scrape is being answered.
  TelemetryExporter(sim::TelemetryGenerator& gen, double speed, const Clock& clock);
  ~TelemetryExporter();  // Stop()
  TelemetryExporter(const TelemetryExporter&) = delete;
  TelemetryExporter& operator=(const TelemetryExporter&) = delete;

  // Listens on host:port (port 0: any free one) and answers on a thread of its own; the job's
  // clock starts now. The port bound, or IoError "cannot listen on <host>:<port>".
  Result<int> Start(const std::string& host, int port);
  // Stops answering and joins the thread; nothing when not started.
  void Stop();

  // Seconds of real time the job lasts at this speed.
  double real_duration() const { return gen_.job().duration_s / speed_; }

 private:
  // The exposition of the job's current second (the last second once the job is over).
  std::string Scrape();

  sim::TelemetryGenerator& gen_;  // stepped with mu_ held
  const double speed_;
  const Clock& clock_;
  double started_ = 0;  // wall seconds
  Mutex mu_;
  int64_t next_ GUARDED_BY(mu_) = 0;  // the next second the generator steps to
  std::string last_ GUARDED_BY(mu_);  // that second's exposition
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
};

struct ExporterOptions {
  std::string host = "127.0.0.1";
  int port = 0;           // 0: any free port
  double speed = 1;       // simulated seconds per real second
  std::string port_file;  // where to write the port bound ("<port>\n"); "": nowhere
};

// Serves the job until it has run its course at `options.speed`, or until `*interrupted` is set
// (may be null). IoError when it cannot listen or write the port file.
Status ServeTelemetry(sim::TelemetryGenerator& gen, const ExporterOptions& options, Clock& clock,
                      const std::atomic<bool>* interrupted);

}  // namespace vigil::server
