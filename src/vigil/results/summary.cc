#include "vigil/results/summary.h"

#include <fmt/format.h>

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "vigil/core/bounds.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/parallel.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Integral doubles below this magnitude are written without a fraction ("3", not "3.0").
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

std::string TooManyKeys() {
  return fmt::format(
      "more than {} distinct metric keys (the most a fleet table holds; "
      "docs/formats.md)",
      kMaxFleetMetrics);
}

Status TooManyValues(std::string_view source, size_t nodes, size_t keys) {
  return Status::InvalidArgument(fmt::format(
      "{}: {} nodes x {} distinct metric keys is more than the {} values a fleet table holds "
      "(docs/formats.md)",
      source, nodes, keys, kMaxFleetValues));
}

void AppendNumber(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  // Into a local buffer: fmt's back_inserter into a std::string appends one char at a time.
  char buf[32];  // the longest shortest-round-trip double is 24 characters
  const char* end =
      v == std::trunc(v) && std::fabs(v) < kMaxExactInteger
          ? fmt::format_to_n(buf, sizeof buf, "{}", static_cast<int64_t>(v)).out
          : fmt::format_to_n(buf, sizeof buf, "{}", v).out;  // shortest exact round trip
  out.append(buf, static_cast<size_t>(end - buf));
}

// The rows of one stretch of lines, parsed by one thread. Keys are interned per chunk and mapped
// to the table's columns when chunks are merged, in order, so that the result is the same for
// any number of threads.
struct Chunk {
  std::string_view text;  // whole lines, inside a padded_string (simdjson reads past the end)
  int first_line = 1;

  std::vector<std::string> nodes, hardware, keys;
  std::vector<int> lines;
  std::vector<int> key_lines;                      // by key index: the line it first appears on
  std::vector<size_t> row_begin;                   // into cells, one per row, plus the end
  std::vector<std::pair<uint32_t, double>> cells;  // (key index, value)
  Status status;                                   // the first error, with its line
};

class ChunkParser {
 public:
  explicit ChunkParser(Chunk& c, std::string_view source) : c_(c), source_(source) {}

  void Run() {
    const char* p = c_.text.data();
    const char* end = p + c_.text.size();
    int line_no = c_.first_line;
    for (; p < end; ++line_no) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      const char* line_end = nl == nullptr ? end : nl;
      const std::string_view line(p, static_cast<size_t>(line_end - p));
      if (!Trim(line).empty()) {
        Status s = ParseLine(line, line_no);
        if (!s.ok()) {
          c_.status = std::move(s);
          return;
        }
      }
      p = line_end + 1;
    }
    c_.row_begin.push_back(c_.cells.size());
  }

 private:
  Status Error(int line_no, std::string_view what) const {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source_, line_no, what));
  }
  Status FieldError(int line_no, std::string_view key, std::string_view what) const {
    return Error(line_no, fmt::format("field {}: {}", Quote(key), what));
  }

  // The chunk-local index of a key, predicting that lines list their keys in the same order.
  Result<uint32_t> KeyIndex(std::string_view key, size_t position, int line_no) {
    if (position < order_.size() && c_.keys[order_[position]] == key) return order_[position];
    auto it = index_.find(key);
    uint32_t k;
    if (it != index_.end()) {
      k = it->second;
    } else {
      Result<MetricKey> parsed = MetricKey::Parse(key);
      if (!parsed.ok()) return FieldError(line_no, key, parsed.status().message());
      if (c_.keys.size() >= kMaxFleetMetrics) return FieldError(line_no, key, TooManyKeys());
      k = static_cast<uint32_t>(c_.keys.size());
      c_.keys.emplace_back(key);
      c_.key_lines.push_back(line_no);
      index_.emplace(std::string(key), k);
      last_row_.push_back(-1);
    }
    if (position < order_.size()) {
      order_[position] = k;
    } else {
      order_.push_back(k);
    }
    return k;
  }

  // The line lies inside a simdjson::padded_string, so simdjson may read past its end.
  Status ParseLine(std::string_view line, int line_no) {
    simdjson::dom::element doc;
    simdjson::error_code e = parser_.parse(line.data(), line.size(), false).get(doc);
    if (e && (line.find("NaN") != std::string_view::npos ||
              line.find("Infinity") != std::string_view::npos)) {
      // Python's json writes NaN (and Infinity) for floats JSON has no form for: read as null.
      if (std::string fixed = PythonNonFiniteAsNull(line); !fixed.empty()) {
        nan_line_ = simdjson::padded_string(fixed);
        e = parser_.parse(nan_line_).get(doc);
      }
    }
    if (e) return Error(line_no, fmt::format("not valid JSON ({})", simdjson::error_message(e)));
    simdjson::dom::object obj;
    if (doc.get_object().get(obj)) return Error(line_no, "expected a JSON object");
    const int row = static_cast<int>(c_.nodes.size());
    c_.row_begin.push_back(c_.cells.size());
    std::string node, hardware;
    bool has_node = false;
    size_t position = 0;
    for (const auto [key, value] : obj) {
      if (key == "node" || key == "index" || key == "hardware") {
        std::string_view text;
        if (value.get_string().get(text)) return FieldError(line_no, key, "expected a string");
        if (key == "hardware") {
          hardware = text;
          continue;
        }
        if (has_node) return Error(line_no, "both \"node\" and \"index\" name the node");
        node = text;
        has_node = true;
        continue;
      }
      VIGIL_ASSIGN_OR_RETURN(uint32_t k, KeyIndex(key, position++, line_no));
      if (last_row_[k] == row) return FieldError(line_no, key, "appears twice");
      last_row_[k] = row;
      double v = kNaN;
      if (!value.is_null() && value.get_double().get(v)) {
        return FieldError(line_no, key, "expected a number or null");
      }
      if (!std::isnan(v) && !kMetricValueBounds.Contains(v)) {
        return FieldError(line_no, key, DescribeOutside(v, kMetricValueBounds));
      }
      c_.cells.emplace_back(k, v);
    }
    if (!has_node) return Error(line_no, "no \"node\" field naming the node");
    c_.nodes.push_back(std::move(node));
    c_.hardware.push_back(std::move(hardware));
    c_.lines.push_back(line_no);
    return Status::Ok();
  }

  Chunk& c_;
  std::string_view source_;
  simdjson::dom::parser parser_;
  simdjson::padded_string nan_line_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> index_;
  std::vector<uint32_t> order_;  // key index by position in the previous line
  std::vector<int> last_row_;    // by key index: the last row that had it, to catch repeats
};

}  // namespace

// Builds a table from parsed chunks, in chunk order.
class FleetTableBuilder {
 public:
  static Result<FleetTable> Build(std::vector<Chunk>& chunks, std::string_view source) {
    FleetTable t;
    t.sources_.emplace_back(source);
    std::vector<std::vector<size_t>> column_of_key(chunks.size());
    size_t rows = 0;
    for (size_t c = 0; c < chunks.size(); ++c) {
      for (size_t k = 0; k < chunks[c].keys.size(); ++k) {
        const std::string& key = chunks[c].keys[k];
        auto [it, added] = t.column_of_.try_emplace(key, t.metrics_.size());
        if (added) {
          if (t.metrics_.size() >= kMaxFleetMetrics) {
            return Status::InvalidArgument(fmt::format(
                "{}:{}: field {}: {}", source, chunks[c].key_lines[k], Quote(key), TooManyKeys()));
          }
          t.metrics_.push_back(key);
        }
        column_of_key[c].push_back(it->second);
      }
      rows += chunks[c].nodes.size();
    }
    const size_t columns = t.metrics_.size();
    if (columns != 0 && rows > kMaxFleetValues / columns) {
      return TooManyValues(source, rows, columns);
    }
    t.values_.assign(rows * columns, kNaN);
    size_t row = 0;
    for (size_t c = 0; c < chunks.size(); ++c) {
      Chunk& ch = chunks[c];
      for (size_t r = 0; r < ch.nodes.size(); ++r, ++row) {
        double* out = t.values_.data() + row * columns;
        for (size_t i = ch.row_begin[r]; i < ch.row_begin[r + 1]; ++i) {
          out[column_of_key[c][ch.cells[i].first]] = ch.cells[i].second;
        }
      }
      std::move(ch.nodes.begin(), ch.nodes.end(), std::back_inserter(t.nodes_));
      std::move(ch.hardware.begin(), ch.hardware.end(), std::back_inserter(t.hardware_));
      t.lines_.insert(t.lines_.end(), ch.lines.begin(), ch.lines.end());
    }
    t.source_of_.assign(rows, 0);
    return t;
  }

  static FleetTable FromRows(const std::vector<FleetRow>& rows, std::string_view source) {
    FleetTable t;
    t.sources_.emplace_back(source);
    for (const FleetRow& r : rows) {
      for (const auto& [key, value] : r.values) {
        if (t.column_of_.try_emplace(key, t.metrics_.size()).second) t.metrics_.push_back(key);
      }
    }
    const size_t columns = t.metrics_.size();
    t.values_.assign(rows.size() * columns, kNaN);
    for (size_t i = 0; i < rows.size(); ++i) {
      for (const auto& [key, value] : rows[i].values) {
        t.values_[i * columns + t.column_of_.find(key)->second] = value;
      }
      t.nodes_.push_back(rows[i].node);
      t.hardware_.push_back(rows[i].hardware);
      t.lines_.push_back(static_cast<int>(i + 1));
    }
    t.source_of_.assign(rows.size(), 0);
    return t;
  }
};

FleetTable TableOfRows(const std::vector<FleetRow>& rows, std::string_view source) {
  return FleetTableBuilder::FromRows(rows, source);
}

long FleetTable::column(std::string_view key) const {
  auto it = column_of_.find(key);
  return it == column_of_.end() ? -1 : static_cast<long>(it->second);
}

FleetRow FleetTable::Row(size_t i) const {
  FleetRow r;
  r.node = nodes_[i];
  r.hardware = hardware_[i];
  for (size_t j = 0; j < metrics_.size(); ++j) {
    if (!std::isnan(at(i, j))) r.values.emplace_back(metrics_[j], at(i, j));
  }
  return r;
}

Status FleetTable::Append(FleetTable&& other) {
  size_t added_keys = 0;
  for (const std::string& key : other.metrics_) added_keys += column_of_.contains(key) ? 0 : 1;
  const std::string source = other.sources_.empty() ? "" : other.sources_[0];
  if (metrics_.size() + added_keys > kMaxFleetMetrics) {
    return Status::InvalidArgument(fmt::format("{}: {}", source, TooManyKeys()));
  }
  const size_t all_rows = nodes_.size() + other.nodes_.size();
  const size_t all_keys = metrics_.size() + added_keys;
  if (all_keys != 0 && all_rows > kMaxFleetValues / all_keys) {
    return TooManyValues(source, all_rows, all_keys);
  }
  const size_t old_columns = metrics_.size();
  std::vector<size_t> map;
  for (const std::string& key : other.metrics_) {
    auto [it, added] = column_of_.try_emplace(key, metrics_.size());
    if (added) metrics_.push_back(key);
    map.push_back(it->second);
  }
  const size_t columns = metrics_.size();
  if (columns != old_columns) {  // widen the rows we have
    std::vector<double> wide(nodes_.size() * columns, kNaN);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      std::copy_n(values_.begin() + static_cast<long>(i * old_columns), old_columns,
                  wide.begin() + static_cast<long>(i * columns));
    }
    values_ = std::move(wide);
  }
  const size_t first = nodes_.size();
  values_.resize((first + other.nodes_.size()) * columns, kNaN);
  for (size_t i = 0; i < other.nodes_.size(); ++i) {
    for (size_t j = 0; j < other.metrics_.size(); ++j) {
      values_[(first + i) * columns + map[j]] = other.at(i, j);
    }
  }
  const int source_base = static_cast<int>(sources_.size());
  for (std::string& s : other.sources_) sources_.push_back(std::move(s));
  for (int s : other.source_of_) source_of_.push_back(source_base + s);
  std::move(other.nodes_.begin(), other.nodes_.end(), std::back_inserter(nodes_));
  std::move(other.hardware_.begin(), other.hardware_.end(), std::back_inserter(hardware_));
  lines_.insert(lines_.end(), other.lines_.begin(), other.lines_.end());
  std::move(other.warnings_.begin(), other.warnings_.end(), std::back_inserter(warnings_));
  return Status::Ok();
}

void FleetTable::KeepLastOfEachNode() {
  std::unordered_map<std::string_view, size_t> last;  // node -> its last row so far in this file
  std::vector<bool> drop(nodes_.size(), false);
  size_t repeats = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (i > 0 && source_of_[i] != source_of_[i - 1]) last.clear();  // another file
    auto [it, added] = last.try_emplace(nodes_[i], i);
    if (added) continue;
    const size_t earlier = it->second;
    drop[earlier] = true;
    it->second = i;
    if (++repeats <= kMaxRepeatWarnings) {
      warnings_.push_back(fmt::format("{}: node {} is on lines {} and {}: the later line ({}) wins",
                                      source(i), Quote(nodes_[i]), lines_[earlier], lines_[i],
                                      lines_[i]));
    }
  }
  if (repeats == 0) return;
  if (repeats > kMaxRepeatWarnings) {
    warnings_.push_back(fmt::format("... and {} more lines of nodes listed again (the later wins)",
                                    repeats - kMaxRepeatWarnings));
  }
  const size_t columns = metrics_.size();
  size_t kept = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (drop[i]) continue;
    if (kept != i) {
      nodes_[kept] = std::move(nodes_[i]);
      hardware_[kept] = std::move(hardware_[i]);
      lines_[kept] = lines_[i];
      source_of_[kept] = source_of_[i];
      std::copy_n(values_.begin() + static_cast<long>(i * columns), columns,
                  values_.begin() + static_cast<long>(kept * columns));
    }
    ++kept;
  }
  nodes_.resize(kept);
  hardware_.resize(kept);
  lines_.resize(kept);
  source_of_.resize(kept);
  values_.resize(kept * columns);
}

namespace {

// `all` is followed by SIMDJSON_PADDING readable bytes.
Result<FleetTable> ParsePadded(std::string_view all, std::string_view source, int threads);

}  // namespace

Result<FleetTable> ParseFleetTable(std::string_view text, std::string_view source, int threads) {
  const simdjson::padded_string padded(text.data(), text.size());
  return ParsePadded(std::string_view(padded.data(), padded.size()), source, threads);
}

Result<FleetTable> ReadFleetTable(const std::string& path, int threads) {
  VIGIL_ASSIGN_OR_RETURN(const PaddedFile text, PaddedFile::Read(path, simdjson::SIMDJSON_PADDING));
  VIGIL_ASSIGN_OR_RETURN(FleetTable table, ParsePadded(text.text(), path, threads));
  table.KeepLastOfEachNode();
  return table;
}

namespace {

Result<FleetTable> ParsePadded(std::string_view all, std::string_view source, int threads) {
  constexpr size_t kBytesPerThread = 4u << 20;
  const size_t n = WorkerCount(all.size(), kBytesPerThread, threads);
  std::vector<Chunk> chunks(n);
  size_t begin = 0;
  int line = 1;
  for (size_t c = 0; c < n; ++c) {
    size_t end = c + 1 == n ? all.size() : all.size() * (c + 1) / n;
    if (end < all.size()) {
      const size_t nl = all.find('\n', std::max(end, begin));
      end = nl == std::string_view::npos ? all.size() : nl + 1;
    }
    end = std::max(end, begin);
    chunks[c].text = all.substr(begin, end - begin);
    chunks[c].first_line = line;
    line += static_cast<int>(std::count(all.begin() + static_cast<long>(begin),
                                        all.begin() + static_cast<long>(end), '\n'));
    begin = end;
  }
  RunWorkers(n, [&](size_t c) { ChunkParser(chunks[c], source).Run(); });
  for (const Chunk& c : chunks) {
    if (!c.status.ok()) return c.status;
  }
  return FleetTableBuilder::Build(chunks, source);
}

}  // namespace

std::string FormatFleetRow(const FleetRow& row) {
  std::string out = "{\"node\": ";
  AppendJsonString(out, row.node);
  if (!row.hardware.empty()) {
    out += ", \"hardware\": ";
    AppendJsonString(out, row.hardware);
  }
  for (const auto& [key, value] : row.values) {
    out += ", ";
    AppendJsonString(out, key);
    out += ": ";
    AppendNumber(out, value);
  }
  out += "}\n";
  return out;
}

Status WriteFleetSummary(const std::string& path, const std::vector<FleetRow>& rows) {
  std::string text;
  for (const FleetRow& row : rows) text += FormatFleetRow(row);
  return WriteFileAtomic(path, text);
}

FleetRow FleetRowOf(const NodeResults& doc) {
  FleetRow row;
  row.node = doc.node;
  for (const BenchmarkRecord& r : doc.benchmarks) {
    if (r.status == BenchStatus::kSkipped) continue;
    for (const Metric& m : r.metrics) row.values.emplace_back(m.key.ToString(), m.value);
    row.values.emplace_back(r.name + "/return_code", static_cast<double>(r.return_code));
  }
  if (!doc.inventory.gpus.empty()) {
    row.hardware = fmt::format("{}x {}", doc.inventory.gpus.size(), doc.inventory.gpus[0].name);
  }
  return row;
}

}  // namespace vigil
