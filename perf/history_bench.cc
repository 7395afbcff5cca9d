// The fleet service's history for the Selector (server/fleet_history.h) on a SQLite store of 100
// nodes x 30 uploads of 8-GPU results documents: a cold build, which parses every document, against
// a build after one more upload, which parses only that one (the builder keeps what each document
// ran). The reference is the cold build, timed in the same run.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "vigil/core/json.h"
#include "vigil/eval/fleet_gen.h"
#include "vigil/server/fleet_history.h"
#include "vigil/store/sqlite_store.h"
#include "vigil/testing/healthy_fleet.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::server {
namespace {

constexpr int kNodes = 100;
constexpr int kUploads = 30;
constexpr double kStart = 1.79e9;

struct Fleet {
  testing::TempDir dir;
  std::unique_ptr<store::Store> store;
  std::vector<FleetRow> rows;
  std::vector<std::string> documents;
  double next = kStart + kUploads * 86400.0;

  store::Upload UploadOf(size_t node, double received) const {
    store::Upload u;
    u.node = rows[node].node;
    u.hardware = rows[node].hardware;
    u.received = received;
    u.start_time = "2026-11-22T10:00:00Z";
    u.row = rows[node];
    u.document = documents[node];
    return u;
  }
};

Fleet& StoredFleet() {
  static Fleet* fleet = [] {
    auto* f = new Fleet;
    f->store = store::OpenSqliteStore(f->dir.path() + "/vigil.db").value();
    f->rows = testing::HealthyFleet(kNodes);
    for (size_t n = 0; n < f->rows.size(); ++n) {
      f->documents.push_back(DumpJson(ToJson(eval::NodeDocumentOf(f->rows[n], 3, n))));
    }
    for (int day = 0; day < kUploads; ++day) {
      std::vector<store::Upload> uploads;
      for (size_t n = 0; n < f->rows.size(); ++n) {
        uploads.push_back(f->UploadOf(n, kStart + day * 86400.0 + static_cast<double>(n)));
      }
      if (!f->store->PutUploads(uploads).ok()) std::abort();
    }
    return f;
  }();
  return *fleet;
}

void BM_HistoryColdBuild(benchmark::State& state) {
  Fleet& f = StoredFleet();
  for (auto _ : state) {
    FleetHistoryBuilder builder(*f.store);
    Result<select::History> h = builder.Build(f.next);
    if (!h.ok()) state.SkipWithError(h.status().message().c_str());
    state.counters["documents_parsed"] = static_cast<double>(builder.documents_parsed());
    benchmark::DoNotOptimize(h);
  }
}
BENCHMARK(BM_HistoryColdBuild)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_HistoryBuildAfterOneUpload(benchmark::State& state) {
  Fleet& f = StoredFleet();
  FleetHistoryBuilder builder(*f.store);
  if (!builder.Build(f.next).ok()) state.SkipWithError("the first build failed");
  const int64_t before = builder.documents_parsed();
  size_t node = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<store::Upload> one = {f.UploadOf(node, f.next)};
    node = (node + 1) % f.rows.size();
    f.next += 60;
    if (!f.store->PutUploads(one).ok()) state.SkipWithError("the upload failed");
    state.ResumeTiming();
    Result<select::History> h = builder.Build(f.next);
    if (!h.ok()) state.SkipWithError(h.status().message().c_str());
    benchmark::DoNotOptimize(h);
  }
  state.counters["documents_parsed_per_build"] =
      static_cast<double>(builder.documents_parsed() - before) /
      static_cast<double>(state.iterations());
}
BENCHMARK(BM_HistoryBuildAfterOneUpload)->Unit(benchmark::kMillisecond)->Iterations(10);

}  // namespace
}  // namespace vigil::server

BENCHMARK_MAIN();
