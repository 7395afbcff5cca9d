// Load generator of the fleet service (docs/benchmarks.md): an open-loop stream of realistic
// 8-GPU node results documents at a fixed rate against the real HTTP server on loopback, latency
// measured from each request's scheduled time (so that a stalled server cannot hide its queue),
// then GET /api/v1/nodes over a fleet of 10,000 nodes.
//
//   serve_load [--rate 1000] [--seconds 10] [--connections 16] [--nodes 10000] [--sync full]
#include <fmt/format.h>
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "vigil/core/clock.h"
#include "vigil/core/json.h"
#include "vigil/core/stats.h"
#include "vigil/server/api.h"
#include "vigil/server/http.h"
#include "vigil/server/service.h"
#include "vigil/store/sqlite_store.h"
#include "vigil/testing/temp_dir.h"
#include "vigil/validate/fleet_gen.h"

using namespace vigil;
using Steady = std::chrono::steady_clock;

int main(int argc, char** argv) {
  double rate = 1000, seconds = 10;
  int connections = 16, nodes = 10000;
  std::string sync = "full";
  CLI::App app{"Load generator of vigil serve"};
  app.add_option("--rate", rate, "Uploads per second");
  app.add_option("--seconds", seconds, "How long to upload");
  app.add_option("--connections", connections, "Client connections");
  app.add_option("--nodes", nodes, "Fleet size for GET /api/v1/nodes");
  app.add_option("--sync", sync, "full or normal");
  CLI11_PARSE(app, argc, argv);

  testing::TempDir dir;
  auto opened = store::OpenSqliteStore(dir.File("fleet.db"), {.sync_full = sync == "full"});
  if (!opened.ok()) {
    fmt::print(stderr, "{}\n", opened.status().message());
    return 3;
  }
  std::unique_ptr<store::Store> st = std::move(opened).value();
  server::FleetService service(*st, SystemClock(), validate::LearnOptions{});
  server::Api api(service, server::ApiOptions{.token = "t"});
  server::HttpServer http(api, {"127.0.0.1", 0, std::max(32, connections * 2), 64 << 20});
  const int port = *http.Bind();
  std::thread listener([&] { http.Serve(); });

  // A fleet to learn from, so that every upload is judged as in production.
  validate::FleetGenOptions fo;
  fo.nodes = nodes;
  fo.second_class = 0;
  const validate::GeneratedFleet fleet = *validate::GenerateFleet(fo);
  std::string lines;
  for (const FleetRow& r : fleet.rows) lines += FormatFleetRow(r);
  if (!service.Ingest(lines, "fleet").ok() || !service.Learn().ok()) return 3;
  std::vector<std::string> docs;
  for (int i = 0; i < 64; ++i) {
    docs.push_back(DumpJson(ToJson(validate::NodeDocumentOf(fleet.rows[i], 5, i)), 2));
  }
  fmt::print("document: {} bytes, {} metrics; server threads {}, sync {}\n", docs[0].size(),
             fleet.rows[0].values.size(), std::max(32, connections * 2), sync);

  // Open loop: request k of connection c is due at start + (k * connections + c) / rate.
  const auto start = Steady::now() + std::chrono::milliseconds(100);
  const auto total = static_cast<int64_t>(rate * seconds);
  std::vector<std::vector<double>> latency(static_cast<size_t>(connections));
  std::atomic<int64_t> errors{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < connections; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      const httplib::Headers auth = {{"Authorization", "Bearer t"}};
      for (int64_t k = c; k < total; k += connections) {
        const auto due = start + std::chrono::nanoseconds(static_cast<int64_t>(k * 1e9 / rate));
        std::this_thread::sleep_until(due);
        auto res = client.Post("/api/v1/results", auth, docs[static_cast<size_t>(k % 64)],
                               "application/json");
        if (!res || res->status != 201) ++errors;
        latency[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double, std::milli>(Steady::now() - due).count());
      }
    });
  }
  for (auto& t : clients) t.join();
  const double took = std::chrono::duration<double>(Steady::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latency) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  fmt::print(
      "uploads: {} in {:.2f} s = {:.0f}/s (target {:.0f}/s), errors {}; latency ms p50 {:.2f} "
      "p99 {:.2f} max {:.2f}\n",
      all.size(), took, static_cast<double>(all.size()) / took, rate, errors.load(),
      stats::Quantile(all, 0.5), stats::Quantile(all, 0.99), all.back());

  // GET /api/v1/nodes over the whole fleet.
  httplib::Client reader("127.0.0.1", port);
  std::vector<double> get_ms;
  size_t bytes = 0;
  for (int i = 0; i < 20; ++i) {
    const auto t0 = Steady::now();
    auto res = reader.Get("/api/v1/nodes");
    get_ms.push_back(std::chrono::duration<double, std::milli>(Steady::now() - t0).count());
    if (!res || res->status != 200) ++errors;
    bytes = res ? res->body.size() : 0;
  }
  std::sort(get_ms.begin(), get_ms.end());
  fmt::print("GET /api/v1/nodes ({} nodes, {} bytes): median {:.1f} ms, max {:.1f} ms\n",
             st->Counts()->nodes, bytes, stats::Median(get_ms), get_ms.back());
  http.Stop();
  listener.join();
  return errors.load() == 0 ? 0 : 1;
}
