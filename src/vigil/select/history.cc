#include "vigil/select/history.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unordered_map>

#include "vigil/core/file.h"
#include "vigil/core/json.h"

namespace vigil::select {
namespace {

constexpr std::string_view kFormatName = "vigil-history";

// Reads the fields of one line's object (or of an element of one of its arrays, whose fields
// are named with `prefix`, "benchmarks[2]."), each error naming the source, line and field.
class LineReader {
 public:
  LineReader(const Json& json, std::string_view source, int line, std::string prefix = "")
      : json_(json), source_(source), line_(line), prefix_(std::move(prefix)) {}

  Status Error(std::string_view field, std::string_view reason) const {
    return Status::InvalidArgument(
        fmt::format("{}:{}: {}{}: {}", source_, line_, prefix_, field, reason));
  }

  // Every key is among `known`: a misspelt field is refused, not skipped.
  Status Keys(std::initializer_list<std::string_view> known) const {
    for (const auto& [key, value] : json_.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        return Error(key, "unknown field");
      }
    }
    return Status::Ok();
  }

  Result<std::string> String(std::string_view field) const {
    auto it = json_.find(field);
    if (it == json_.end()) return Error(field, "missing");
    if (!it->is_string()) return Error(field, "expected a string");
    if (it->get_ref<const std::string&>().empty()) return Error(field, "is empty");
    return it->get<std::string>();
  }

  // A finite number; `min` bounds it below (inclusive).
  Result<double> Number(std::string_view field, double min = -HUGE_VAL) const {
    auto it = json_.find(field);
    if (it == json_.end()) return Error(field, "missing");
    return NumberOf(*it, field, min);
  }

  Result<double> NumberOf(const Json& value, std::string_view field, double min) const {
    if (!value.is_number()) return Error(field, "expected a number");
    const double v = value.get<double>();
    if (!std::isfinite(v) || v < min) {
      return Error(field, fmt::format("expected a finite number >= {}, got {}", min, v));
    }
    return v;
  }

  Result<const Json*> Array(std::string_view field) const {
    auto it = json_.find(field);
    if (it == json_.end()) return Error(field, "missing");
    if (!it->is_array()) return Error(field, "expected an array");
    return &*it;
  }

  const Json& json() const { return json_; }
  int line() const { return line_; }

 private:
  const Json& json_;
  std::string_view source_;
  int line_;
  std::string prefix_;
};

class HistoryParser {
 public:
  explicit HistoryParser(std::string_view source) : source_(source) {}

  // The next file begins: its first line is a header again.
  void BeginFile(std::string_view source) {
    source_ = source;
    header_seen_ = false;
  }

  Status Line(const Json& json, int line) {
    LineReader r(json, source_, line);
    if (!json.is_object()) return r.Error("line", "expected a JSON object");
    if (!header_seen_) return Header(r);
    VIGIL_ASSIGN_OR_RETURN(const std::string record, r.String("record"));
    if (record == "node") return Node(r);
    if (record == "validation") return Validation(r);
    if (record == "incident") return Incident(r);
    if (record == "alert") return Alert(r);
    return r.Error("record",
                   fmt::format("expected node, validation, incident or alert, got \"{}\"", record));
  }

  Result<History> Finish() && {
    if (!any_header_) return Status::InvalidArgument(fmt::format("{}: empty history", source_));
    if (history_.nodes.empty()) {
      return Status::InvalidArgument(fmt::format("{}: no nodes", source_));
    }
    const auto by_time = [](const auto& a, const auto& b) { return a.time_s < b.time_s; };
    std::stable_sort(history_.validations.begin(), history_.validations.end(), by_time);
    std::stable_sort(history_.incidents.begin(), history_.incidents.end(), by_time);
    std::stable_sort(history_.alerts.begin(), history_.alerts.end(), by_time);
    return std::move(history_);
  }

 private:
  Status Header(const LineReader& r) {
    auto format = r.json().find("format");
    if (format == r.json().end() || *format != kFormatName) {
      return r.Error("format", fmt::format("expected \"{}\": the first line of a history is its "
                                           "header (docs/select.md)",
                                           kFormatName));
    }
    VIGIL_ASSIGN_OR_RETURN(const double version, r.Number("version"));
    if (version != kHistoryVersion) {
      return r.Error("version", fmt::format("version {} is not supported; this vigil reads "
                                            "version {}",
                                            version, kHistoryVersion));
    }
    VIGIL_RETURN_IF_ERROR(r.Keys({"format", "version", "start", "end"}));
    VIGIL_ASSIGN_OR_RETURN(const double start, r.Number("start", 0));
    VIGIL_ASSIGN_OR_RETURN(const double end, r.Number("end", start));
    // Several files of one fleet cover the union of their windows.
    history_.start_s = any_header_ ? std::min(history_.start_s, start) : start;
    history_.end_s = any_header_ ? std::max(history_.end_s, end) : end;
    header_seen_ = any_header_ = true;
    return Status::Ok();
  }

  Status Node(const LineReader& r) {
    HistoryNode node;
    VIGIL_RETURN_IF_ERROR(r.Keys({"record", "node", "class", "joined"}));
    VIGIL_ASSIGN_OR_RETURN(node.name, r.String("node"));
    VIGIL_ASSIGN_OR_RETURN(node.node_class, r.String("class"));
    VIGIL_ASSIGN_OR_RETURN(node.joined_s, r.Number("joined", 0));
    if (node.joined_s > history_.end_s) return r.Error("joined", "after the history's end");
    const int index = static_cast<int>(history_.nodes.size());
    if (!index_.emplace(node.name, index).second) {
      return r.Error("node", fmt::format("\"{}\" is declared twice", node.name));
    }
    history_.nodes.push_back(std::move(node));
    return Status::Ok();
  }

  // The node a record names and its time, checked against when the node joined.
  Status NodeAndTime(const LineReader& r, int& node, double& time_s) {
    VIGIL_ASSIGN_OR_RETURN(const std::string name, r.String("node"));
    auto it = index_.find(name);
    if (it == index_.end()) {
      return r.Error("node", fmt::format("\"{}\" has no node record before this line", name));
    }
    node = it->second;
    VIGIL_ASSIGN_OR_RETURN(time_s, r.Number("time", 0));
    if (time_s < history_.nodes[node].joined_s) {
      return r.Error("time", fmt::format("before node \"{}\" joined the fleet", name));
    }
    if (time_s < history_.start_s || time_s > history_.end_s) {
      return r.Error("time", "outside the header's [start, end]");
    }
    return Status::Ok();
  }

  Status Validation(const LineReader& r) {
    HistoryValidation v;
    VIGIL_RETURN_IF_ERROR(r.Keys({"record", "node", "time", "benchmarks", "margins", "findings"}));
    VIGIL_RETURN_IF_ERROR(NodeAndTime(r, v.node, v.time_s));
    VIGIL_ASSIGN_OR_RETURN(const Json* runs, r.Array("benchmarks"));
    for (size_t i = 0; i < runs->size(); ++i) {
      const Json& run = (*runs)[i];
      LineReader b(run, source_, r.line(), fmt::format("benchmarks[{}].", i));
      if (!run.is_object()) return r.Error(fmt::format("benchmarks[{}]", i), "expected an object");
      VIGIL_RETURN_IF_ERROR(b.Keys({"name", "seconds"}));
      BenchmarkRun out;
      VIGIL_ASSIGN_OR_RETURN(out.name, b.String("name"));
      VIGIL_ASSIGN_OR_RETURN(out.seconds, b.Number("seconds", 0));
      v.benchmarks.push_back(std::move(out));
    }
    auto margins = r.json().find("margins");
    if (margins != r.json().end()) {
      if (!margins->is_object()) return r.Error("margins", "expected an object");
      for (const auto& [kind, value] : margins->items()) {
        VIGIL_ASSIGN_OR_RETURN(const double m, r.NumberOf(value, "margins." + kind, -HUGE_VAL));
        v.margins.emplace_back(kind, m);
      }
    }
    VIGIL_RETURN_IF_ERROR(Findings(r, v));
    history_.validations.push_back(std::move(v));
    return Status::Ok();
  }

  Status Findings(const LineReader& r, HistoryValidation& v) {
    VIGIL_ASSIGN_OR_RETURN(const Json* findings, r.Array("findings"));
    for (size_t i = 0; i < findings->size(); ++i) {
      const Json& f = (*findings)[i];
      if (!f.is_object()) return r.Error(fmt::format("findings[{}]", i), "expected an object");
      LineReader fr(f, source_, r.line(), fmt::format("findings[{}].", i));
      VIGIL_RETURN_IF_ERROR(fr.Keys({"component", "kind", "benchmark"}));
      ValidationFinding out;
      VIGIL_ASSIGN_OR_RETURN(out.component, fr.String("component"));
      VIGIL_ASSIGN_OR_RETURN(out.kind, fr.String("kind"));
      VIGIL_ASSIGN_OR_RETURN(out.benchmark, fr.String("benchmark"));
      const bool ran = std::any_of(v.benchmarks.begin(), v.benchmarks.end(),
                                   [&](const BenchmarkRun& b) { return b.name == out.benchmark; });
      if (!ran) {
        return fr.Error("benchmark", fmt::format("\"{}\" is not among the validation's benchmarks",
                                                 out.benchmark));
      }
      v.findings.push_back(std::move(out));
    }
    return Status::Ok();
  }

  Status Incident(const LineReader& r) {
    HistoryIncident incident;
    VIGIL_RETURN_IF_ERROR(r.Keys({"record", "node", "time", "kind", "cost_node_hours"}));
    VIGIL_RETURN_IF_ERROR(NodeAndTime(r, incident.node, incident.time_s));
    VIGIL_ASSIGN_OR_RETURN(incident.kind, r.String("kind"));
    VIGIL_ASSIGN_OR_RETURN(incident.cost_node_hours, r.Number("cost_node_hours", 0));
    history_.incidents.push_back(std::move(incident));
    return Status::Ok();
  }

  Status Alert(const LineReader& r) {
    HistoryAlert alert;
    VIGIL_RETURN_IF_ERROR(r.Keys({"record", "node", "time", "kind"}));
    VIGIL_RETURN_IF_ERROR(NodeAndTime(r, alert.node, alert.time_s));
    VIGIL_ASSIGN_OR_RETURN(alert.kind, r.String("kind"));
    history_.alerts.push_back(std::move(alert));
    return Status::Ok();
  }

  std::string_view source_;
  bool header_seen_ = false;
  bool any_header_ = false;
  History history_;
  std::unordered_map<std::string, int> index_;
};

Json ValidationJson(const History& h, const HistoryValidation& v) {
  Json runs = Json::array();
  for (const BenchmarkRun& b : v.benchmarks)
    runs.push_back({{"name", b.name}, {"seconds", b.seconds}});
  Json margins = Json::object();
  for (const auto& [kind, m] : v.margins) margins[kind] = m;
  Json findings = Json::array();
  for (const ValidationFinding& f : v.findings) {
    findings.push_back({{"component", f.component}, {"kind", f.kind}, {"benchmark", f.benchmark}});
  }
  return {{"record", "validation"}, {"node", h.nodes[v.node].name}, {"time", v.time_s},
          {"benchmarks", runs},     {"margins", margins},           {"findings", findings}};
}

}  // namespace

namespace {

Status ParseInto(HistoryParser& parser, std::string_view text, std::string_view source) {
  parser.BeginFile(source);
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    VIGIL_ASSIGN_OR_RETURN(const Json json, ParseJson(line, source, line_number));
    VIGIL_RETURN_IF_ERROR(parser.Line(json, line_number));
  }
  return Status::Ok();
}

}  // namespace

Result<History> ParseHistory(std::string_view text, std::string_view source) {
  HistoryParser parser(source);
  VIGIL_RETURN_IF_ERROR(ParseInto(parser, text, source));
  return std::move(parser).Finish();
}

Result<History> ParseHistoryFiles(const std::vector<std::pair<std::string, std::string>>& files) {
  if (files.empty()) return Status::InvalidArgument("no history file");
  HistoryParser parser(files.front().first);
  for (const auto& [source, text] : files) VIGIL_RETURN_IF_ERROR(ParseInto(parser, text, source));
  return std::move(parser).Finish();
}

Result<History> ReadHistoryPath(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_directory(path, error)) {
    VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
    return ParseHistory(text, path);
  }
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    if (entry.path().extension() == ".jsonl") paths.push_back(entry.path().string());
  }
  if (error) return Status::IoError(fmt::format("{}: {}", path, error.message()));
  if (paths.empty())
    return Status::InvalidArgument(fmt::format("{}: no *.jsonl history file", path));
  std::sort(paths.begin(), paths.end());
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& p : paths) {
    VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(p));
    files.emplace_back(p, std::move(text));
  }
  return ParseHistoryFiles(files);
}

std::string HistoryToJsonl(const History& h) {
  std::string out;
  const auto line = [&out](const Json& j) { out += DumpJson(j) + "\n"; };
  line({{"format", kFormatName},
        {"version", kHistoryVersion},
        {"start", h.start_s},
        {"end", h.end_s}});
  for (const HistoryNode& n : h.nodes) {
    line({{"record", "node"}, {"node", n.name}, {"class", n.node_class}, {"joined", n.joined_s}});
  }
  for (const HistoryValidation& v : h.validations) line(ValidationJson(h, v));
  for (const HistoryIncident& i : h.incidents) {
    line({{"record", "incident"},
          {"node", h.nodes[i.node].name},
          {"time", i.time_s},
          {"kind", i.kind},
          {"cost_node_hours", i.cost_node_hours}});
  }
  for (const HistoryAlert& a : h.alerts) {
    line({{"record", "alert"},
          {"node", h.nodes[a.node].name},
          {"time", a.time_s},
          {"kind", a.kind}});
  }
  return out;
}

}  // namespace vigil::select
