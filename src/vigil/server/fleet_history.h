// The fleet's history as the Selector reads it (select/history.h), built from what the fleet
// service's store keeps: GET /api/v1/history writes it, GET /api/v1/selection plans from it.
//
// What each record rests on (docs/serve.md, "The fleet's history"):
// - a node of the fleet (retired ones left out: nothing is planned for them), its class the
//   hardware of its latest upload, joined at its first record (upload, incident or alert);
// - a validation per upload at the time the server received it: the benchmarks its results
//   document ran with their duration_s; an upload of summary lines has no run times, and its
//   benchmarks (named by its metric keys) get the mean seconds measured for them in the fleet's
//   documents, or are left out when none measured them;
// - its findings: each component the verdict named defective, once, with the benchmark of the
//   first finding that named it; one whose benchmark did not run (a missing benchmark) is left
//   out, as the format requires;
// - its margins: per component kind, the smallest of (value - limit) / |limit| (in the good
//   direction) over its values, against the bands of the criteria version that judged it (the
//   dashboard's bands, limits.h: without a node's own noise, so a little stricter than the judge);
//   none for an upload no criteria judged;
// - incidents as posted; alerts of a node in the fleet, their kind the component kind of the
//   alert's component ("gpu3" is GPU, "ib0" or "eth1" NIC, none "node").
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vigil/core/mutex.h"
#include "vigil/core/status.h"
#include "vigil/select/history.h"
#include "vigil/store/store.h"

namespace vigil::server {

// Builds the store's history, again and again as the store grows, parsing each stored document
// once: a document never changes once stored, so the benchmarks it ran and their times are kept
// per upload, and a build after a write reads only the documents of the uploads new since (the
// rest comes from the store's rows: verdicts, findings and margins follow re-judgement). Uploads
// older than the window are neither parsed nor kept. Thread-safe; builds run one at a time.
class FleetHistoryBuilder {
 public:
  explicit FleetHistoryBuilder(store::Store& store) : store_(store) {}

  // The store's history up to `now` (Unix seconds). InvalidArgument "no node in the fleet has
  // uploaded" for an empty store; IoError for a stored document that no longer parses; the
  // store's errors.
  Result<select::History> Build(double now) EXCLUDES(mu_);

  // How many stored documents the builds so far have parsed.
  int64_t documents_parsed() const EXCLUDES(mu_);

 private:
  store::Store& store_;
  mutable Mutex mu_;
  // Per upload id in the window: its benchmarks, with NaN seconds for a summary line's.
  std::unordered_map<int64_t, std::shared_ptr<const std::vector<select::BenchmarkRun>>> benchmarks_
      GUARDED_BY(mu_);
  int64_t parsed_ GUARDED_BY(mu_) = 0;
};

// The component kind of a detector alert's component ("gpu3" -> "GPU").
std::string AlertComponentKind(std::string_view component);

}  // namespace vigil::server
