#include "vigil/telemetry/readers.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "vigil/core/bounds.h"
#include "vigil/core/csv.h"
#include "vigil/core/json.h"
#include "vigil/core/lines.h"

namespace vigil::telemetry {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

std::optional<double> ParseNumber(std::string_view s) {
  if (s == "NaN" || s == "nan") return kNaN;
  if (s == "+Inf" || s == "Inf" || s == "inf" || s == "+inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (s == "-Inf" || s == "-inf") return -std::numeric_limits<double>::infinity();
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

namespace {

Status LineError(const ReadOptions& o, int64_t line, std::string_view field,
                 std::string_view what) {
  return Status::InvalidArgument(fmt::format("{}:{}: {}: {}", o.source, line, field, what));
}

// A sample's time within kUnixTimeBounds (frame indexes cannot overflow) and its value, unless
// missing (NaN, infinite), within kMetricValueBounds. `text` is what the line wrote, if at hand.
Status CheckSample(const ReadOptions& o, int64_t line, double time, double value,
                   std::string_view time_text = "", std::string_view value_text = "") {
  if (!kUnixTimeBounds.Contains(time)) {
    return LineError(o, line, "timestamp", DescribeOutside(time, kUnixTimeBounds, time_text));
  }
  if (std::isfinite(value) && !kMetricValueBounds.Contains(value)) {
    return LineError(o, line, "value", DescribeOutside(value, kMetricValueBounds, value_text));
  }
  return Status::Ok();
}

// The sample of a series read with Prometheus labels (exposition and query_range alike).
RawSample SampleOf(const SeriesIdentity& id, std::string_view metric, const Labels& labels,
                   double time, double value) {
  RawSample s;
  s.time = time;
  s.machine = id.machine;
  s.metric = metric;
  s.component = id.component;
  s.group = id.group;
  s.value = value;
  s.labels = &labels;
  return s;
}

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

}  // namespace

SeriesIdentity IdentityOf(const Labels& labels) {
  SeriesIdentity id;
  if (auto h = FindLabel(labels, "hostname")) {
    id.machine = *h;
  } else if (auto hh = FindLabel(labels, "Hostname")) {
    id.machine = *hh;
  } else if (auto inst = FindLabel(labels, "instance")) {
    id.machine = *inst;  // host:port or [v6 address]:port; keep the host
    if (!id.machine.empty() && id.machine.front() == '[') {
      const size_t close = id.machine.find(']');
      if (close != std::string_view::npos) id.machine = id.machine.substr(1, close - 1);
    } else if (const size_t colon = id.machine.find(':');
               colon != std::string_view::npos && id.machine.rfind(':') == colon) {
      id.machine = id.machine.substr(0, colon);
    }
  }
  if (auto gpu = FindLabel(labels, "gpu")) {
    id.component = fmt::format("gpu{}", *gpu);
  } else if (auto dev = FindLabel(labels, "device")) {
    id.component = std::string(*dev);
  } else if (auto cpu = FindLabel(labels, "cpu")) {
    id.component = fmt::format("cpu{}", *cpu);
  }
  if (auto g = FindLabel(labels, "group")) id.group = *g;
  return id;
}

namespace {

enum Column { kTime, kMachine, kMetric, kValue, kGroup, kComponent };
constexpr std::array<std::string_view, 6> kColumnNames = {"timestamp", "machine", "metric",
                                                          "value",     "group",   "component"};

}  // namespace

struct TelemetryReader::State {
  TelemetryFormat format;
  ReadOptions o;
  int64_t lines = 0;                    // read so far
  std::optional<CsvColumns> columns;    // long CSV, once its header is read
  std::vector<std::string_view> field;  // a CSV line's, by kColumnNames
  simdjson::dom::parser json;           // JSONL
  std::string padded;
  Labels labels;  // exposition

  Status CsvLine(std::string_view line, int64_t no, const SampleSink& sink);
  Status JsonlLine(std::string_view line, int64_t no, const SampleSink& sink);
  Status ExpositionLine(std::string_view line, int64_t no, const SampleSink& sink);
};

TelemetryReader::TelemetryReader(TelemetryFormat format, ReadOptions options)
    : state_(std::make_unique<State>()) {
  state_->format = format;
  state_->o = std::move(options);
}

TelemetryReader::~TelemetryReader() = default;
TelemetryReader::TelemetryReader(TelemetryReader&&) noexcept = default;

Status TelemetryReader::Read(std::string_view text, const SampleSink& sink) {
  State& st = *state_;
  LineReader lines(text, st.lines);
  std::string_view line;
  if (st.format == TelemetryFormat::kLongCsv && !st.columns && lines.Next(line)) {
    st.lines = lines.line_no();
    VIGIL_ASSIGN_OR_RETURN(st.columns, CsvColumns::Parse(line, kColumnNames, 4, st.o.source));
  }
  while (lines.Next(line)) {
    st.lines = lines.line_no();
    Status s;
    switch (st.format) {
      case TelemetryFormat::kLongCsv:
        s = st.CsvLine(line, st.lines, sink);
        break;
      case TelemetryFormat::kJsonl:
        s = st.JsonlLine(line, st.lines, sink);
        break;
      case TelemetryFormat::kExposition:
        s = st.ExpositionLine(line, st.lines, sink);
        break;
    }
    if (s.ok()) continue;
    if (!st.o.lenient) return s;
    if (st.o.skipped) ++*st.o.skipped;
  }
  return Status::Ok();
}

Status TelemetryReader::Finish() const {
  if (state_->format == TelemetryFormat::kLongCsv && !state_->columns) {
    return LineError(state_->o, 1, "header", "empty file, expected a header line");
  }
  return Status::Ok();
}

namespace {

// A whole text through a TelemetryReader.
Status ParseWhole(TelemetryFormat format, std::string_view text, const ReadOptions& o,
                  const SampleSink& sink) {
  TelemetryReader reader(format, o);
  VIGIL_RETURN_IF_ERROR(reader.Read(text, sink));
  return reader.Finish();
}

}  // namespace

Status ParseLongCsv(std::string_view text, const ReadOptions& o, const SampleSink& sink) {
  return ParseWhole(TelemetryFormat::kLongCsv, text, o, sink);
}

Status ParseTelemetryJsonl(std::string_view text, const ReadOptions& o, const SampleSink& sink) {
  return ParseWhole(TelemetryFormat::kJsonl, text, o, sink);
}

Status ParseExposition(std::string_view text, const ReadOptions& o, const SampleSink& sink) {
  return ParseWhole(TelemetryFormat::kExposition, text, o, sink);
}

Status TelemetryReader::State::CsvLine(std::string_view line, int64_t no, const SampleSink& sink) {
  if (line.empty()) return Status::Ok();
  VIGIL_RETURN_IF_ERROR(columns->Split(line, no, &field));
  RawSample s;
  const auto t = ParseNumber(field[kTime]);
  if (!t || !std::isfinite(*t)) {
    return LineError(o, no, "timestamp",
                     fmt::format("{} is not a finite number", Quote(field[kTime])));
  }
  s.time = *t;
  if (field[kMachine].empty()) return LineError(o, no, "machine", "empty");
  if (field[kMetric].empty()) return LineError(o, no, "metric", "empty");
  s.machine = field[kMachine];
  s.metric = field[kMetric];
  s.group = field[kGroup];
  s.component = field[kComponent];
  if (field[kValue].empty()) {
    s.value = kNaN;  // a missing sample
  } else {
    const auto v = ParseNumber(field[kValue]);
    if (!v) {
      return LineError(o, no, "value", fmt::format("{} is not a number", Quote(field[kValue])));
    }
    s.value = *v;
  }
  VIGIL_RETURN_IF_ERROR(CheckSample(o, no, s.time, s.value, field[kTime], field[kValue]));
  sink(s);
  return Status::Ok();
}

void AppendLongCsv(const RawSample& s, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "{},{},{},{},{}\n", s.time, s.machine, s.metric, s.value,
                 s.component);
}

void AppendExpositionLine(
    std::string_view metric,
    std::initializer_list<std::pair<std::string_view, std::string_view>> labels, double value,
    std::string* out) {
  *out += metric;
  if (labels.size() > 0) {
    char sep = '{';
    for (const auto& [name, v] : labels) {
      *out += sep;
      *out += name;
      *out += "=\"";
      for (const char c : v) {
        if (c == '\\' || c == '"') *out += '\\';
        if (c == '\n') {
          *out += "\\n";
          continue;
        }
        *out += c;
      }
      *out += '"';
      sep = ',';
    }
    *out += '}';
  }
  if (std::isnan(value)) {
    *out += " NaN\n";
  } else if (std::isinf(value)) {
    *out += value > 0 ? " +Inf\n" : " -Inf\n";
  } else {
    fmt::format_to(std::back_inserter(*out), " {}\n", value);
  }
}

void AppendTelemetryJsonl(const RawSample& s, std::string* out) {
  auto text = [](std::string_view v) { return DumpJson(Json(std::string(v))); };
  fmt::format_to(std::back_inserter(*out),
                 "{{\"timestamp\":{},\"machine\":{},\"metric\":{},\"value\":{},"
                 "\"component\":{}}}\n",
                 s.time, text(s.machine), text(s.metric), s.value, text(s.component));
}

Status TelemetryReader::State::JsonlLine(std::string_view line, int64_t no,
                                         const SampleSink& sink) {
  if (Trim(line).empty()) return Status::Ok();
  padded.assign(line);
  padded.resize(line.size() + simdjson::SIMDJSON_PADDING);
  simdjson::dom::element doc;
  if (auto err = json.parse(padded.data(), line.size(), false).get(doc)) {
    return LineError(o, no, "line",
                     fmt::format("not valid JSON: {}", simdjson::error_message(err)));
  }
  simdjson::dom::object obj;
  if (doc.get(obj)) return LineError(o, no, "line", "not a JSON object");
  RawSample s;
  auto text_field = [&](const char* name, bool required, std::string_view* out) -> Status {
    simdjson::dom::element e;
    if (obj[name].get(e)) {
      return required ? LineError(o, no, name, "missing") : Status::Ok();
    }
    if (e.get(*out) || (required && out->empty())) {
      return LineError(o, no, name, "must be a non-empty string");
    }
    return Status::Ok();
  };
  VIGIL_RETURN_IF_ERROR(text_field("machine", true, &s.machine));
  VIGIL_RETURN_IF_ERROR(text_field("metric", true, &s.metric));
  VIGIL_RETURN_IF_ERROR(text_field("group", false, &s.group));
  VIGIL_RETURN_IF_ERROR(text_field("component", false, &s.component));
  simdjson::dom::element t;
  if (obj["timestamp"].get(t)) return LineError(o, no, "timestamp", "missing");
  if (t.get(s.time) || !std::isfinite(s.time)) {
    return LineError(o, no, "timestamp", "must be a number (Unix seconds)");
  }
  simdjson::dom::element v;
  if (obj["value"].get(v)) return LineError(o, no, "value", "missing");
  if (v.is_null()) {
    s.value = kNaN;
  } else if (v.get(s.value)) {
    return LineError(o, no, "value", "must be a number or null");
  }
  VIGIL_RETURN_IF_ERROR(CheckSample(o, no, s.time, s.value));
  sink(s);
  return Status::Ok();
}

Status TelemetryReader::State::ExpositionLine(std::string_view line, int64_t no,
                                              const SampleSink& sink) {
  size_t i = 0;
  auto skip_blanks = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  };
  skip_blanks();
  if (i == line.size() || line[i] == '#') return Status::Ok();
  const size_t name_start = i;
  if (!IsNameStart(line[i])) {
    return LineError(o, no, "metric name",
                     fmt::format("cannot start with {}", Quote(line.substr(i, 1))));
  }
  while (i < line.size() && IsNameChar(line[i])) ++i;
  const std::string_view name = line.substr(name_start, i - name_start);
  labels.clear();
  skip_blanks();
  if (i < line.size() && line[i] == '{') {
    ++i;
    for (;;) {
      skip_blanks();
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      const size_t ls = i;
      if (i == line.size() || !IsNameStart(line[i]) || line[i] == ':') {
        return LineError(o, no, "labels", fmt::format("expected a label name at column {}", i + 1));
      }
      while (i < line.size() && IsNameChar(line[i]) && line[i] != ':') ++i;
      std::string label(line.substr(ls, i - ls));
      skip_blanks();
      if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
        return LineError(o, no, label, "expected =\"value\"");
      }
      i += 2;
      std::string value;
      bool closed = false;
      while (i < line.size()) {
        const char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c != '\\') {
          value.push_back(c);
          continue;
        }
        if (i == line.size()) break;
        const char e = line[i++];
        value.push_back(e == 'n' ? '\n' : e);
      }
      if (!closed) return LineError(o, no, label, "unterminated label value");
      labels.emplace_back(std::move(label), std::move(value));
      skip_blanks();
      if (i < line.size() && line[i] == ',') {
        ++i;
        continue;
      }
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      return LineError(o, no, "labels", fmt::format("expected , or }} at column {}", i + 1));
    }
  }
  skip_blanks();
  const size_t vs = i;
  while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
  const std::string_view value_text = line.substr(vs, i - vs);
  const auto value = ParseNumber(value_text);
  if (!value)
    return LineError(o, no, "value", fmt::format("{} is not a number", Quote(value_text)));
  skip_blanks();
  double time = o.default_time;
  if (i < line.size()) {
    const size_t ts = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    const std::string_view ts_text = line.substr(ts, i - ts);
    int64_t ms = 0;
    const auto [end, ec] = std::from_chars(ts_text.data(), ts_text.data() + ts_text.size(), ms);
    if (ec != std::errc() || end != ts_text.data() + ts_text.size()) {
      return LineError(o, no, "timestamp",
                       fmt::format("{} is not an integer of milliseconds", Quote(ts_text)));
    }
    time = static_cast<double>(ms) / 1000.0;
    skip_blanks();
    if (i != line.size()) return LineError(o, no, "line", "text after the timestamp");
  }
  if (!std::isfinite(time)) {
    return LineError(o, no, "timestamp", "missing, and no scrape time was given");
  }
  VIGIL_RETURN_IF_ERROR(CheckSample(o, no, time, *value, "", value_text));
  const SeriesIdentity id = IdentityOf(labels);
  if (id.machine.empty()) {
    return LineError(o, no, "labels", "no hostname, Hostname or instance label names the machine");
  }
  sink(SampleOf(id, name, labels, time, *value));
  return Status::Ok();
}

Status ParseQueryRange(std::string_view json, const ReadOptions& o, const SampleSink& sink) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const simdjson::padded_string padded(json);
  auto bad = [&](std::string_view what) {
    return Status::InvalidArgument(fmt::format("{}: query_range answer: {}", o.source, what));
  };
  if (auto err = parser.parse(padded).get(doc)) {
    return bad(fmt::format("not valid JSON: {}", simdjson::error_message(err)));
  }
  std::string_view status;
  if (doc["status"].get(status)) return bad("no status");
  if (status != "success") {
    std::string_view error = "(no message)";
    if (doc["error"].get(error)) error = "(no message)";
    return Status::Unavailable(
        fmt::format("{}: Prometheus answered {}: {}", o.source, Quote(status), Quote(error)));
  }
  std::string_view type;
  if (doc["data"]["resultType"].get(type)) return bad("no data.resultType");
  if (type != "matrix") return bad(fmt::format("resultType {} is not matrix", Quote(type)));
  simdjson::dom::array result;
  if (doc["data"]["result"].get(result)) return bad("no data.result array");
  Labels labels;
  size_t series = 0;
  for (simdjson::dom::element entry : result) {
    ++series;
    simdjson::dom::object metric;
    if (entry["metric"].get(metric)) return bad(fmt::format("series {}: no metric object", series));
    labels.clear();
    std::string_view name;
    for (auto [k, v] : metric) {
      std::string_view value;
      if (v.get(value))
        return bad(fmt::format("series {}: label {} is not a string", series, Quote(k)));
      if (k == "__name__") {
        name = value;
      } else {
        labels.emplace_back(std::string(k), std::string(value));
      }
    }
    if (name.empty()) return bad(fmt::format("series {}: no __name__ label", series));
    const SeriesIdentity id = IdentityOf(labels);
    if (id.machine.empty()) {
      if (o.skipped) ++*o.skipped;
      continue;  // not a machine's series (a recording rule, Prometheus' own metrics)
    }
    simdjson::dom::array values;
    if (entry["values"].get(values)) return bad(fmt::format("series {}: no values array", series));
    for (simdjson::dom::element pair : values) {
      simdjson::dom::array tv;
      double t = 0;
      std::string_view v;
      if (pair.get(tv) || tv.size() != 2 || tv.at(0).get(t) || tv.at(1).get(v)) {
        return bad(fmt::format("series {}: a value is not [time, \"value\"]", series));
      }
      const auto value = ParseNumber(v);
      if (!value) return bad(fmt::format("series {}: {} is not a number", series, Quote(v)));
      if (!kUnixTimeBounds.Contains(t)) {
        return bad(fmt::format("series {}: time {}", series, DescribeOutside(t, kUnixTimeBounds)));
      }
      if (std::isfinite(*value) && !kMetricValueBounds.Contains(*value)) {
        return bad(fmt::format("series {}: value {}", series,
                               DescribeOutside(*value, kMetricValueBounds, v)));
      }
      sink(SampleOf(id, name, labels, t, *value));
    }
  }
  return Status::Ok();
}

}  // namespace vigil::telemetry
