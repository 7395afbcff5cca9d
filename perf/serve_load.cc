// Load generator of the fleet service (docs/benchmarks.md): an open-loop stream of realistic
// 8-GPU node results documents at a fixed rate against the real HTTP server on loopback, latency
// measured from each request's scheduled time (so that a stalled server cannot hide its queue),
// then GET /api/v1/nodes over a fleet of 10,000 nodes.
//
//   serve_load [--rate 1000] [--seconds 10] [--connections 16] [--nodes 10000] [--sync full]
//              [--connection-per-upload] [--url http://127.0.0.1:PORT --token-file FILE]
//
// With --soak, the store alone (no HTTP, no judging) takes the same documents at --rate for
// --seconds (600 unless given) from --connections writers, and the WAL's size and the process's
// RSS are sampled every 100 ms: a line every 10 s, then their maxima and how long closing took.
//
//   serve_load --soak [--seconds 600] [--rate 1000] [--db FILE] [--sync full]
#include <fmt/format.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "vigil/core/clock.h"
#include "vigil/core/json.h"
#include "vigil/core/stats.h"
#include "vigil/eval/fleet_gen.h"
#include "vigil/server/api.h"
#include "vigil/server/client.h"
#include "vigil/server/http.h"
#include "vigil/server/service.h"
#include "vigil/store/sqlite_store.h"
#include "vigil/testing/raw_connection.h"
#include "vigil/testing/temp_dir.h"

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

// Upload k: one of the 64 documents with a start time of its own, so that its idempotency key
// (node, start time, digest) is new and the server stores it rather than answering a retry.
// REQUIRES: every document holds kStart (Documents checks).
constexpr std::string_view kStart = "2026-11-22T08:00:00.000Z";
std::string UniqueDocument(const std::vector<std::string>& docs, int64_t k) {
  const std::string& doc = docs[static_cast<size_t>(k % 64)];
  const size_t at = doc.find(kStart);
  const int64_t s = k / 1000;
  const std::string start = fmt::format("2026-11-22T{:02d}:{:02d}:{:02d}.{:03d}Z",
                                        8 + s / 3600 % 16, s / 60 % 60, s % 60, k % 1000);
  return doc.substr(0, at) + start + doc.substr(at + kStart.size());
}

// `fleet`'s first 64 nodes as 8-GPU results documents, pretty-printed as `vigil run --out`
// writes them.
std::vector<std::string> Documents(const eval::GeneratedFleet& fleet) {
  std::vector<std::string> docs;
  for (int i = 0; i < 64; ++i) {
    docs.push_back(DumpJson(ToJson(eval::NodeDocumentOf(fleet.rows[i], 5, i)), 2));
    if (docs.back().find(kStart) == std::string::npos) {
      fmt::print(stderr, "document {} has no start time {}\n", i, kStart);
      std::abort();
    }
  }
  fmt::print("document: {} bytes, {} metrics\n", docs[0].size(), fleet.rows[0].values.size());
  return docs;
}

off_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// The resident set of this process in bytes (/proc/self/statm).
int64_t Rss() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

double Mb(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// The store-level soak (--soak): PutUploads at `rate` for `seconds`, open loop, from `writers`
// threads, each upload with an idempotency key of its own, over the fleet's nodes in turn.
int Soak(const std::string& db, bool sync_full, double rate, double seconds, int writers,
         const eval::GeneratedFleet& fleet) {
  auto opened = store::OpenSqliteStore(db, {.sync_full = sync_full});
  if (!opened.ok()) {
    fmt::print(stderr, "{}\n", opened.status().message());
    return 3;
  }
  std::unique_ptr<store::Store> st = std::move(opened).value();
  const std::vector<std::string> docs = Documents(fleet);
  fmt::print("soak: {} uploads/s for {} s into {} (sync {}), {} writers\n", rate, seconds, db,
             sync_full ? "full" : "normal", writers);

  const auto start = Steady::now() + std::chrono::milliseconds(100);
  const auto total = static_cast<int64_t>(rate * seconds);
  std::atomic<int64_t> done{0}, errors{0};
  std::atomic<bool> finished{false};
  int64_t max_wal = 0, max_rss = 0;  // written by the sampler, read once it has finished
  std::thread sampler([&] {
    for (int tick = 1; !finished.load(); ++tick) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(100 * tick));
      const int64_t wal = FileSize(db + "-wal"), rss = Rss();
      max_wal = std::max(max_wal, wal);
      max_rss = std::max(max_rss, rss);
      if (tick % 100 == 0) {
        fmt::print(
            "t={:4d} s  uploads {:7d}  WAL {:6.1f} MB (max {:.1f})  db {:7.1f} MB  RSS {:6.1f} MB "
            "(max {:.1f})\n",
            tick / 10, done.load(), Mb(wal), Mb(max_wal), Mb(FileSize(db)), Mb(rss), Mb(max_rss));
        std::fflush(stdout);
      }
    }
  });
  std::vector<std::vector<double>> latency(static_cast<size_t>(writers));
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      for (int64_t k = w; k < total; k += writers) {
        const auto due = start + std::chrono::nanoseconds(static_cast<int64_t>(k * 1e9 / rate));
        std::this_thread::sleep_until(due);
        const size_t row = static_cast<size_t>(k) % fleet.rows.size();
        std::vector<store::Upload> u(1);
        u[0].node = fleet.rows[row].node;
        u[0].hardware = fleet.rows[row].hardware;
        u[0].received = SystemClock().WallSeconds();
        u[0].start_time = "2026-11-23T00:00:00Z";
        u[0].verdict = Verdict::kHealthy;
        u[0].findings = "[]";
        u[0].row = fleet.rows[row];
        u[0].document = docs[static_cast<size_t>(k) % docs.size()];
        u[0].key = fmt::format("soak-{}", k);
        if (!st->PutUploads(u).ok()) ++errors;
        ++done;
        latency[static_cast<size_t>(w)].push_back(
            std::chrono::duration<double, std::milli>(Steady::now() - due).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  const double took = std::chrono::duration<double>(Steady::now() - start).count();
  const int64_t wal_at_end = FileSize(db + "-wal");
  const auto t0 = Steady::now();
  st.reset();
  const double close_s = std::chrono::duration<double>(Steady::now() - t0).count();
  finished = true;
  sampler.join();
  std::vector<double> all;
  for (const auto& l : latency) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  fmt::print(
      "uploads: {} in {:.1f} s = {:.0f}/s (target {:.0f}/s), errors {}; PutUploads latency ms "
      "p50 {:.2f} p99 {:.2f} max {:.1f}\n",
      all.size(), took, static_cast<double>(all.size()) / took, rate, errors.load(),
      stats::Quantile(all, 0.5), stats::Quantile(all, 0.99), all.back());
  fmt::print(
      "max WAL {:.1f} MB (at the end {:.1f} MB), max RSS {:.1f} MB, database {:.1f} MB, close "
      "{:.3f} s\n",
      Mb(max_wal), Mb(wal_at_end), Mb(max_rss), Mb(FileSize(db)), close_s);
  return errors.load() == 0 ? 0 : 1;
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
  int idle = 0;
  app.add_option("--idle-connections", idle,
                 "Hold this many connections open during the load, half of them silent and half "
                 "stopped in the middle of a request head, and probe GET /healthz every 20 ms (the "
                 "server's --header-timeout must outlast the run)");
  bool soak = false;
  std::string db;
  app.add_flag("--soak", soak,
               "Store-level soak: uploads straight into the store (no HTTP), WAL size and RSS "
               "sampled; --seconds defaults to 600");
  app.add_option("--db", db, "With --soak: the database file (default: in a temporary directory)");
  CLI11_PARSE(app, argc, argv);
  if (soak) {
    testing::TempDir soak_dir;
    eval::FleetGenOptions so;
    so.nodes = nodes;
    so.second_class = 0;
    return Soak(db.empty() ? soak_dir.File("fleet.db") : db, sync == "full", rate,
                app.count("--seconds") > 0 ? seconds : 600, connections, *eval::GenerateFleet(so));
  }

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
    service = std::make_unique<server::FleetService>(*st, SystemClock(), learned::LearnOptions{});
    api = std::make_unique<server::Api>(*service, server::ApiOptions{.token = token});
    http = std::make_unique<server::HttpServer>(
        *api, server::HttpOptions{.host = "127.0.0.1",
                                  .port = 0,
                                  .threads = std::max(32, connections * 2),
                                  .max_body = 64 << 20,
                                  .header_timeout_s = idle > 0 ? 3600.0 : 10.0});
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
  eval::FleetGenOptions fo;
  fo.nodes = nodes;
  fo.second_class = 0;
  const eval::GeneratedFleet fleet = *eval::GenerateFleet(fo);
  const bool seeded = [&] {
    httplib::Client seeder(url);
    // A learn judges every stored node again: seconds for 10,000, more than httplib's 5 s
    // default read timeout on a busy machine.
    seeder.set_read_timeout(std::chrono::minutes(5));
    std::string lines;
    for (size_t i = 0; i < fleet.rows.size(); ++i) {
      lines += FormatFleetRow(fleet.rows[i]);
      if ((i + 1) % 500 != 0 && i + 1 != fleet.rows.size()) continue;
      if (!Post(seeder, auth, "/api/v1/results", lines)) return false;
      lines.clear();
    }
    const auto t0 = Steady::now();
    if (!Post(seeder, auth, "/api/v1/criteria/learn", "")) return false;
    fmt::print("learn from {} nodes, judging them again: {:.2f} s\n", fleet.rows.size(),
               std::chrono::duration<double>(Steady::now() - t0).count());
    return true;
  }();
  if (!seeded) {
    if (http) {
      http->Stop();
      listener.join();
    }
    return 3;
  }
  const std::vector<std::string> docs = Documents(fleet);
  std::atomic<int64_t> errors{0};

  std::vector<std::unique_ptr<testing::RawConnection>> held;
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  for (int i = 0; i < idle; ++i) {
    held.push_back(std::make_unique<testing::RawConnection>(port));
    if (i % 2) held.back()->Send("GET /healthz HTTP/1.1\r\nHost: 127");
  }
  if (idle > 0) fmt::print("holding {} idle or half-head connections\n", idle);
  std::atomic<bool> loaded{false};
  std::vector<double> health_ms;
  std::thread prober;
  if (idle > 0) {
    prober = std::thread([&] {
      while (!loaded.load()) {
        httplib::Client probe(url);
        const auto t0 = Steady::now();
        auto res = probe.Get("/healthz");
        if (!res || res->status != 200) ++errors;
        health_ms.push_back(std::chrono::duration<double, std::milli>(Steady::now() - t0).count());
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }

  // Open loop: request k of connection c is due at start + (k * connections + c) / rate.
  const auto start = Steady::now() + std::chrono::milliseconds(100);
  const auto total = static_cast<int64_t>(rate * seconds);
  std::vector<std::vector<double>> latency(static_cast<size_t>(connections));
  std::vector<std::thread> clients;
  for (int c = 0; c < connections; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client client(url);
      client.set_keep_alive(!fresh);
      for (int64_t k = c; k < total; k += connections) {
        const auto due = start + std::chrono::nanoseconds(static_cast<int64_t>(k * 1e9 / rate));
        std::this_thread::sleep_until(due);
        auto res =
            client.Post("/api/v1/results", auth, UniqueDocument(docs, k), "application/json");
        if (!res || res->status != 201) ++errors;
        latency[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double, std::milli>(Steady::now() - due).count());
      }
    });
  }
  for (auto& t : clients) t.join();
  loaded = true;
  if (prober.joinable()) {
    prober.join();
    std::sort(health_ms.begin(), health_ms.end());
    fmt::print("GET /healthz during the load: {} probes, ms p50 {:.2f} p99 {:.2f} max {:.2f}\n",
               health_ms.size(), stats::Quantile(health_ms, 0.5), stats::Quantile(health_ms, 0.99),
               health_ms.back());
  }
  held.clear();
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
