// Load generator of the fleet service (docs/benchmarks.md): an open-loop stream of realistic
// 8-GPU node results documents at a fixed rate against the real HTTP server on loopback, latency
// measured from each request's scheduled time (so that a stalled server cannot hide its queue),
// then GET /api/v1/nodes over a fleet of 10,000 nodes.
//
//   serve_load [--rate 1000] [--seconds 10] [--connections 16] [--nodes 10000] [--sync full]
//              [--connection-per-upload] [--url http://127.0.0.1:PORT --token-file FILE]
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
#include "vigil/server/client.h"
#include "vigil/server/http.h"
#include "vigil/server/service.h"
#include "vigil/store/sqlite_store.h"
#include "vigil/testing/temp_dir.h"
#include "vigil/validate/fleet_gen.h"

using namespace vigil;
using Steady = std::chrono::steady_clock;

namespace {

// POSTs `body` and fails loudly: the load phase must start from a seeded, learned server.
bool Post(httplib::Client& client, const httplib::Headers& auth, const std::string& path,
          const std::string& body) {
  auto res = client.Post(path, auth, body, "application/json");
  if (res && (res->status == 200 || res->status == 201)) return true;
  fmt::print(stderr, "POST {}: {}\n", path,
             res ? fmt::format("{} {}", res->status, res->body) : httplib::to_string(res.error()));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  double rate = 1000, seconds = 10;
  int connections = 16, nodes = 10000;
  std::string sync = "full", url, token_file;
  CLI::App app{"Load generator of vigil serve"};
  app.add_option("--rate", rate, "Uploads per second");
  app.add_option("--seconds", seconds, "How long to upload");
  app.add_option("--connections", connections, "Client connections");
  app.add_option("--nodes", nodes, "Fleet size for GET /api/v1/nodes");
  app.add_option("--sync", sync, "full or normal (in-process server)");
  app.add_option("--url", url,
                 "A running `vigil serve` (http://127.0.0.1:PORT, fresh database) instead of the "
                 "in-process server");
  app.add_option("--token-file", token_file, "Its token, with --url");
  bool fresh = false;
  app.add_flag("--connection-per-upload", fresh,
               "Open a connection for each upload, as nodes reporting once per run do");
  CLI11_PARSE(app, argc, argv);

  // The server: in this process (store, service, HTTP as `vigil serve` wires them), or another.
  testing::TempDir dir;
  std::unique_ptr<store::Store> st;
  std::unique_ptr<server::FleetService> service;
  std::unique_ptr<server::Api> api;
  std::unique_ptr<server::HttpServer> http;
  std::thread listener;
  std::string token = "t";
  if (url.empty()) {
    auto opened = store::OpenSqliteStore(dir.File("fleet.db"), {.sync_full = sync == "full"});
    if (!opened.ok()) {
      fmt::print(stderr, "{}\n", opened.status().message());
      return 3;
    }
    st = std::move(opened).value();
    service = std::make_unique<server::FleetService>(*st, SystemClock(), validate::LearnOptions{});
    api = std::make_unique<server::Api>(*service, server::ApiOptions{.token = token});
    http = std::make_unique<server::HttpServer>(
        *api, server::HttpOptions{"127.0.0.1", 0, std::max(32, connections * 2), 64 << 20});
    url = fmt::format("http://127.0.0.1:{}", *http->Bind());
    listener = std::thread([&] { http->Serve(); });
    fmt::print("server: in-process, {} threads, sync {}\n", std::max(32, connections * 2), sync);
  } else {
    Result<std::string> t = server::ReadToken(token_file);
    if (!t.ok()) {
      fmt::print(stderr, "{}\n", t.status().message());
      return 2;
    }
    token = *t;
    fmt::print("server: {}\n", url);
  }
  const httplib::Headers auth = {{"Authorization", "Bearer " + token}};

  // A fleet to learn from, so that every upload is judged as in production: its summary lines
  // go in as uploads of 500 nodes each, then the server learns.
  validate::FleetGenOptions fo;
  fo.nodes = nodes;
  fo.second_class = 0;
  const validate::GeneratedFleet fleet = *validate::GenerateFleet(fo);
  {
    httplib::Client seeder(url);
    std::string lines;
    for (size_t i = 0; i < fleet.rows.size(); ++i) {
      lines += FormatFleetRow(fleet.rows[i]);
      if ((i + 1) % 500 != 0 && i + 1 != fleet.rows.size()) continue;
      if (!Post(seeder, auth, "/api/v1/results", lines)) return 3;
      lines.clear();
    }
    if (!Post(seeder, auth, "/api/v1/criteria/learn", "")) return 3;
  }
  std::vector<std::string> docs;
  for (int i = 0; i < 64; ++i) {
    docs.push_back(DumpJson(ToJson(validate::NodeDocumentOf(fleet.rows[i], 5, i)), 2));
  }
  fmt::print("document: {} bytes, {} metrics\n", docs[0].size(), fleet.rows[0].values.size());

  // Open loop: request k of connection c is due at start + (k * connections + c) / rate.
  const auto start = Steady::now() + std::chrono::milliseconds(100);
  const auto total = static_cast<int64_t>(rate * seconds);
  std::vector<std::vector<double>> latency(static_cast<size_t>(connections));
  std::atomic<int64_t> errors{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < connections; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client client(url);
      client.set_keep_alive(!fresh);
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
  httplib::Client reader(url);
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
  fmt::print("GET /api/v1/nodes ({} bytes): median {:.1f} ms, max {:.1f} ms\n", bytes,
             stats::Median(get_ms), get_ms.back());
  if (http) {
    http->Stop();
    listener.join();
  }
  return errors.load() == 0 ? 0 : 1;
}
