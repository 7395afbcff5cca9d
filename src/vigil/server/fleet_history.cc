#include "vigil/server/fleet_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/learned/criteria.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/component.h"
#include "vigil/results/document.h"
#include "vigil/results/metric_key.h"
#include "vigil/server/incidents.h"
#include "vigil/server/limits.h"

namespace vigil::server {
namespace {

// "As many as there are": the store's listings take a limit.
constexpr size_t kAll = static_cast<size_t>(std::numeric_limits<int64_t>::max());

// Each benchmark's measured seconds, summed over the documents that ran it.
struct MeasuredTimes {
  std::map<std::string, std::pair<double, int>, std::less<>> sum_count;

  void Add(const std::string& name, double seconds) {
    auto& [sum, n] = sum_count[name];
    sum += seconds;
    ++n;
  }
  // The mean; NaN when no document measured it.
  double Mean(std::string_view name) const {
    auto it = sum_count.find(name);
    return it == sum_count.end() ? std::nan("") : it->second.first / it->second.second;
  }
};

// The benchmark of a row key ("gemm-flops/fp16:3" -> "gemm-flops", "nccl-bw:ib/busbw" ->
// "nccl-bw:ib"); "" for a key that does not parse.
std::string BenchmarkOf(std::string_view key) {
  Result<MetricKey> k = MetricKey::Parse(key);
  return k.ok() ? k->benchmark : std::string();
}

bool Ran(const select::HistoryValidation& v, std::string_view benchmark) {
  return std::any_of(v.benchmarks.begin(), v.benchmarks.end(),
                     [&](const select::BenchmarkRun& b) { return b.name == benchmark; });
}

// The benchmarks of one upload: its document's (not skipped), with their times; or, for summary
// lines, those its row's keys name, their times NaN until the fleet's means are known.
Result<std::vector<select::BenchmarkRun>> BenchmarksOf(const store::Upload& u) {
  std::vector<select::BenchmarkRun> out;
  if (!u.document.empty()) {
    Result<NodeResults> doc =
        ParseNodeResults(u.document, fmt::format("node {}'s upload {}", u.node, u.id));
    if (!doc.ok()) {
      return Status::IoError(
          fmt::format("stored document no longer parses: {}", doc.status().message()));
    }
    for (const BenchmarkRecord& b : doc->benchmarks) {
      if (b.status == BenchStatus::kSkipped || !std::isfinite(b.duration_s) || b.duration_s < 0) {
        continue;
      }
      out.push_back({b.name, b.duration_s});
    }
    return out;
  }
  for (const auto& [key, value] : u.row.values) {
    const std::string name = BenchmarkOf(key);
    if (name.empty() || std::any_of(out.begin(), out.end(), [&](const select::BenchmarkRun& b) {
          return b.name == name;
        })) {
      continue;
    }
    out.push_back({name, std::nan("")});
  }
  return out;
}

// The components the verdict named defective, each once, with the benchmark that showed it.
std::vector<select::ValidationFinding> FindingsOf(const store::Upload& u,
                                                  const select::HistoryValidation& v) {
  std::vector<select::ValidationFinding> out;
  if (u.failing.empty() || u.findings.empty()) return out;
  Result<Json> findings = ParseJson(u.findings, "findings");
  if (!findings.ok() || !findings->is_array()) return out;
  for (const Json& f : *findings) {
    if (!f.is_object() || !f.contains("component") || !f.contains("metric") ||
        !f["component"].is_string() || !f["metric"].is_string()) {
      continue;
    }
    const ComponentId component = ParseComponent(f["component"].get<std::string>());
    const std::string name = ComponentName(component);
    // The benchmark as the validation calls it: with its annotation, or by its registry name.
    Result<MetricKey> key = MetricKey::Parse(f["metric"].get<std::string>());
    if (!key.ok()) continue;
    const std::string benchmark =
        Ran(v, key->benchmark) ? key->benchmark : std::string(key->BenchmarkName());
    const bool defective =
        std::find(u.failing.begin(), u.failing.end(), component) != u.failing.end();
    const bool named =
        std::any_of(out.begin(), out.end(), [&](const auto& x) { return x.component == name; });
    if (!defective || named || !Ran(v, benchmark)) continue;
    out.push_back({name, component.kind, benchmark});
  }
  return out;
}

// The criteria of each version, read once, indexed for BandFor.
class CriteriaVersions {
 public:
  explicit CriteriaVersions(store::Store& store) : store_(store) {}

  // Version `v`'s limits; null for 0 (not judged) or criteria that no longer read (an older
  // schema: the service learns them again at start-up, and the margins are then left out).
  Result<const LimitIndex*> Of(int64_t v) {
    if (v <= 0) return nullptr;
    auto it = loaded_.find(v);
    if (it != loaded_.end()) return it->second ? &it->second->limits : nullptr;
    VIGIL_ASSIGN_OR_RETURN(const std::optional<store::CriteriaVersion> stored, store_.Criteria(v));
    std::unique_ptr<Loaded>& slot = loaded_[v];
    if (!stored) return nullptr;
    Result<learned::LearnedCriteria> c = learned::CriteriaFromJson(stored->body, "criteria");
    if (!c.ok()) return nullptr;
    slot = std::make_unique<Loaded>(std::move(c).value());
    return &slot->limits;
  }

 private:
  struct Loaded {
    explicit Loaded(learned::LearnedCriteria c) : criteria(std::move(c)), limits(criteria) {}
    learned::LearnedCriteria criteria;
    LimitIndex limits;  // refers to `criteria`
  };
  store::Store& store_;
  std::map<int64_t, std::unique_ptr<Loaded>> loaded_;
};

// How far inside its band a value lies, relative to the limit it is nearest: (value - low) / |low|
// or (high - value) / |high|, the smaller; > 0 inside, <= 0 outside. NaN when neither side
// has a usable limit.
double MarginOf(const Band& band, double value) {
  double margin = std::nan("");
  const auto side = [&](double m) { margin = std::isnan(margin) ? m : std::min(margin, m); };
  if (std::isfinite(band.low) && band.low != 0) side((value - band.low) / std::abs(band.low));
  if (std::isfinite(band.high) && band.high != 0) side((band.high - value) / std::abs(band.high));
  return margin;
}

// Per component kind, the smallest margin of the upload's values against the criteria that
// judged it (the dashboard's bands, limits.h), in kind order.
std::vector<std::pair<std::string, double>> MarginsOf(const store::Upload& u,
                                                      const LimitIndex& limits) {
  std::map<std::string, double> by_kind;
  for (const auto& [key, value] : u.row.values) {
    if (!std::isfinite(value)) continue;
    const std::optional<Band> band = limits.BandFor(u.hardware, key, value);
    if (!band) continue;
    const double m = MarginOf(*band, value);
    if (std::isnan(m)) continue;
    const std::string kind = ParseComponent(Anatomize(key).component).kind;
    auto [it, fresh] = by_kind.try_emplace(kind, m);
    if (!fresh) it->second = std::min(it->second, m);
  }
  return {by_kind.begin(), by_kind.end()};
}

// Summary lines' benchmarks get the fleet's measured mean; those never measured are left out,
// with their findings.
void FillUnmeasured(select::HistoryValidation& v, const MeasuredTimes& measured) {
  for (select::BenchmarkRun& b : v.benchmarks) {
    if (std::isnan(b.seconds)) b.seconds = measured.Mean(b.name);
  }
  std::erase_if(v.benchmarks, [](const select::BenchmarkRun& b) { return std::isnan(b.seconds); });
  std::erase_if(v.findings,
                [&](const select::ValidationFinding& f) { return !Ran(v, f.benchmark); });
}

using BenchmarksByUpload =
    std::unordered_map<int64_t, std::shared_ptr<const std::vector<select::BenchmarkRun>>>;

// The uploads of `node` with their documents, at least those whose ids are in `wanted`: the
// newest `count` first, more when uploads came in since the listing pushed some of them out.
Result<std::unordered_map<int64_t, std::string>> Documents(store::Store& store,
                                                           const std::string& node, size_t count,
                                                           const std::vector<int64_t>& wanted) {
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(std::vector<store::Upload> uploads, store.History(node, count, true));
    std::unordered_map<int64_t, std::string> out;
    for (store::Upload& u : uploads) out.emplace(u.id, std::move(u.document));
    const bool all =
        std::all_of(wanted.begin(), wanted.end(), [&](int64_t id) { return out.count(id) != 0; });
    if (all || uploads.size() < count) return out;
    count *= 2;
  }
}

// Adds the validations of node `index` received since `since` (its uploads, oldest first), their
// benchmarks from `known` or, for uploads not known yet, from their documents (counted in
// `parsed`); keeps each one's benchmarks in `kept`. The time of the node's first upload.
Result<double> AddValidations(store::Store& store, const std::string& node, int index, double since,
                              const BenchmarksByUpload& known, BenchmarksByUpload& kept,
                              int64_t& parsed, CriteriaVersions& criteria, select::History& h) {
  // Rows only: after the first build, only the newest few uploads need their documents.
  VIGIL_ASSIGN_OR_RETURN(std::vector<store::Upload> uploads, store.History(node, kAll, false));
  double first = INFINITY;
  size_t count = 0;  // the newest this many hold every upload not known yet
  std::vector<int64_t> wanted;
  for (size_t i = 0; i < uploads.size(); ++i) {
    first = std::min(first, uploads[i].received);
    if (uploads[i].received >= since && known.count(uploads[i].id) == 0) {
      count = i + 1;
      wanted.push_back(uploads[i].id);
    }
  }
  std::unordered_map<int64_t, std::string> documents;
  if (!wanted.empty()) {
    VIGIL_ASSIGN_OR_RETURN(documents, Documents(store, node, count, wanted));
  }
  for (auto it = uploads.rbegin(); it != uploads.rend(); ++it) {
    if (it->received < since) continue;
    select::HistoryValidation v;
    v.node = index;
    v.time_s = it->received;
    if (const auto k = known.find(it->id); k != known.end()) {
      v.benchmarks = *k->second;
      kept.emplace(it->id, k->second);
    } else if (auto d = documents.find(it->id); d != documents.end()) {
      it->document = std::move(d->second);
      if (!it->document.empty()) ++parsed;
      VIGIL_ASSIGN_OR_RETURN(v.benchmarks, BenchmarksOf(*it));
      it->document.clear();
      kept.emplace(it->id, std::make_shared<const std::vector<select::BenchmarkRun>>(v.benchmarks));
    } else {
      // Listed with its row but gone when the documents were read (its node renamed in between):
      // read as a summary line this once, and not kept, so that the next build reads its document.
      VIGIL_ASSIGN_OR_RETURN(v.benchmarks, BenchmarksOf(*it));
    }
    v.findings = FindingsOf(*it, v);
    VIGIL_ASSIGN_OR_RETURN(const LimitIndex* limits, criteria.Of(it->criteria_version));
    if (limits != nullptr) v.margins = MarginsOf(*it, *limits);
    h.validations.push_back(std::move(v));
  }
  return first;
}

}  // namespace

std::string AlertComponentKind(std::string_view component) {
  std::string letters(component.substr(0, component.find_first_of("0123456789")));
  while (!letters.empty() && (letters.back() == '_' || letters.back() == '-')) letters.pop_back();
  std::string lower = letters;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.empty()) return "node";
  if (lower == "gpu") return "GPU";
  if (lower == "ib" || lower == "eth" || lower == "nic" || lower == "mlx") return "NIC";
  return letters;
}

// The history the Selector fits is the last year of the fleet (docs/select.md: the risk model
// works per node-day), and records more than the incidents' allowed skew ahead of the server's
// clock are left out, as are a node's incidents and alerts before its first upload: a replayed
// or zero-based detector trace must not stretch the window over decades.
constexpr double kWindowS = 365 * 86400.0;

Result<select::History> FleetHistoryBuilder::Build(double now) {
  MutexLock lock(mu_);
  store::Store& store = store_;
  VIGIL_ASSIGN_OR_RETURN(const std::vector<store::NodeState> nodes, store.Nodes({}));
  if (nodes.empty()) {
    return Status::InvalidArgument("no node in the fleet has uploaded: there is no history");
  }
  select::History h;
  std::unordered_map<std::string, int> index;
  std::vector<double> first(nodes.size(), INFINITY);
  CriteriaVersions criteria(store);
  BenchmarksByUpload kept;
  for (const store::NodeState& n : nodes) {
    const int i = static_cast<int>(h.nodes.size());
    index.emplace(n.node, i);
    h.nodes.push_back({n.node, n.hardware.empty() ? "unknown" : n.hardware, 0});
    VIGIL_ASSIGN_OR_RETURN(
        first[static_cast<size_t>(i)],
        AddValidations(store, n.node, i, now - kWindowS, benchmarks_, kept, parsed_, criteria, h));
  }
  // Uploads that left the window, or whose nodes were retired, are forgotten.
  benchmarks_ = std::move(kept);
  MeasuredTimes measured;
  for (const select::HistoryValidation& v : h.validations) {
    for (const select::BenchmarkRun& b : v.benchmarks) {
      if (std::isfinite(b.seconds)) measured.Add(b.name, b.seconds);
    }
  }
  for (select::HistoryValidation& v : h.validations) FillUnmeasured(v, measured);

  VIGIL_ASSIGN_OR_RETURN(const std::vector<store::StoredIncident> incidents,
                         store.Incidents({"", kAll}));
  for (const store::StoredIncident& s : incidents) {
    auto it = index.find(s.node);
    if (it == index.end()) continue;  // a retired node's
    h.incidents.push_back({it->second, s.time, s.kind, s.cost_node_hours});
  }
  VIGIL_ASSIGN_OR_RETURN(const std::vector<store::StoredAlert> alerts, store.Alerts({"", kAll}));
  for (const store::StoredAlert& a : alerts) {
    auto it = index.find(a.machine);
    if (it == index.end()) continue;  // job-wide ("*"), or a machine that never uploaded
    Result<Json> body = ParseJson(a.body, "alert");
    std::string component;
    if (body.ok() && body->is_object()) {
      // A job alert's component is its group (a job-level stall that names the machine differing
      // from its stalled peers), no part of the node.
      const auto kind = body->find("kind");
      const auto part = body->find("component");
      const bool job = kind != body->end() && *kind == "job";
      if (!job && part != body->end() && part->is_string()) component = part->get<std::string>();
    }
    h.alerts.push_back({it->second, a.detected, AlertComponentKind(component)});
  }

  // A node joins at its first upload, or at the window's start when that was earlier; the window
  // ends now (or at the latest record, when a reporter's clock runs a little ahead).
  double earliest = INFINITY;
  for (const double f : first) earliest = std::min(earliest, f);
  if (!std::isfinite(earliest)) {
    return Status::InvalidArgument("no node in the fleet has uploaded: there is no history");
  }
  h.start_s = std::max(earliest, now - kWindowS);
  for (size_t i = 0; i < h.nodes.size(); ++i) {
    h.nodes[i].joined_s = std::isfinite(first[i]) ? std::max(first[i], h.start_s) : h.start_s;
  }
  const double latest = now + kIncidentSkewS;
  const auto outside = [&](const auto& r) {
    return r.time_s < h.nodes[static_cast<size_t>(r.node)].joined_s || r.time_s > latest;
  };
  std::erase_if(h.validations, outside);
  std::erase_if(h.incidents, outside);
  std::erase_if(h.alerts, outside);
  h.end_s = now;
  for (const auto& r : h.validations) h.end_s = std::max(h.end_s, r.time_s);
  for (const auto& r : h.incidents) h.end_s = std::max(h.end_s, r.time_s);
  for (const auto& r : h.alerts) h.end_s = std::max(h.end_s, r.time_s);

  const auto by_time = [](const auto& a, const auto& b) { return a.time_s < b.time_s; };
  std::stable_sort(h.validations.begin(), h.validations.end(), by_time);
  std::stable_sort(h.incidents.begin(), h.incidents.end(), by_time);
  std::stable_sort(h.alerts.begin(), h.alerts.end(), by_time);
  return h;
}

int64_t FleetHistoryBuilder::documents_parsed() const {
  MutexLock lock(mu_);
  return parsed_;
}

}  // namespace vigil::server
