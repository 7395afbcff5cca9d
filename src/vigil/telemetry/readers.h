// Readers of telemetry: long CSV, JSONL, Prometheus text exposition and the JSON of Prometheus'
// /api/v1/query_range. Each calls `sink` once per sample, in file order, and stops at the first
// malformed line with an error naming the source, the line and the field (with `lenient`, such
// lines are skipped and counted instead). Formats: docs/formats.md.
//
// Every reader refuses a sample whose time lies outside kUnixTimeBounds (years 1970 to 2200) or
// whose value, unless missing (NaN, +-Inf), lies outside kMetricValueBounds (|v| <= 1e100), as a
// malformed line: later arithmetic (frame indexes, rates, peer statistics) stays exact and finite.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "vigil/core/status.h"
#include "vigil/telemetry/series.h"

namespace vigil::telemetry {

using SampleSink = std::function<void(const RawSample&)>;

struct ReadOptions {
  std::string source;          // for messages: a file name or a URL
  bool lenient = false;        // skip malformed lines instead of failing
  int64_t* skipped = nullptr;  // where lenient mode counts what it skipped (may be null)
  // Exposition samples without their own timestamp get this time (the scrape's); when it is NaN
  // such a sample is an error.
  double default_time = 0.0 / 0.0;
};

enum class TelemetryFormat {
  kLongCsv,     // ParseLongCsv
  kJsonl,       // ParseTelemetryJsonl
  kExposition,  // ParseExposition
};

// A reader of one text in one of those formats, fed in pieces of whole lines (a file read with
// LineChunkReader, in bounded memory): it keeps what it has learned (a CSV header) and numbers
// lines on across pieces, so that a text read in pieces gives the samples and the messages (file,
// line, field) that the text read whole gives. Not thread-safe.
class TelemetryReader {
 public:
  TelemetryReader(TelemetryFormat format, ReadOptions options);
  ~TelemetryReader();
  TelemetryReader(TelemetryReader&&) noexcept;
  TelemetryReader& operator=(TelemetryReader&&) = delete;

  // Reads the next piece: `sink` once per sample, in order; the first malformed line stops it
  // with an error (lenient: it is skipped and counted). After an error the reader is done.
  // REQUIRES: every piece but the text's last ends with '\n'.
  Status Read(std::string_view lines, const SampleSink& sink);

  // The end of the text: InvalidArgument for a long CSV without its header line.
  Status Finish() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// timestamp,machine,metric,value with optional group and component columns, in any order, named
// by a header line. Fields are plain (no quoting); timestamps are Unix seconds.
Status ParseLongCsv(std::string_view text, const ReadOptions& options, const SampleSink& sink);

// One JSON object per line with the same fields: {"timestamp":..,"machine":..,"metric":..,
// "value":..,"group":..,"component":..}; a null value is a missing sample.
Status ParseTelemetryJsonl(std::string_view text, const ReadOptions& options,
                           const SampleSink& sink);

// Prometheus text exposition format 0.0.4 (dcgm-exporter, node-exporter). The machine is the
// label hostname, Hostname or instance (without its port), in that order; the component is
// gpu<n> from the label gpu, else the label device, else cpu<n> from the label cpu; the group is
// the label group.
Status ParseExposition(std::string_view text, const ReadOptions& options, const SampleSink& sink);

// The JSON answer of /api/v1/query_range (resultType matrix). An answer with status "error" is
// an Unavailable error carrying Prometheus' message.
Status ParseQueryRange(std::string_view json, const ReadOptions& options, const SampleSink& sink);

// Writers of the long CSV and JSONL formats: one line for `sample` appended to `out` (its metric
// written as is: a signal name, for normalised telemetry). CSV fields are written plain, so the
// names must hold no comma or newline; JSONL escapes them. A CSV file starts with kLongCsvHeader.
inline constexpr std::string_view kLongCsvHeader = "timestamp,machine,metric,value,component\n";
void AppendLongCsv(const RawSample& sample, std::string* out);
void AppendTelemetryJsonl(const RawSample& sample, std::string* out);

// One exposition sample line, "metric{name="value",...} value\n", appended to `out`, label
// values escaped (backslash, quote, newline) and the value as Prometheus writes it (NaN, +Inf).
void AppendExpositionLine(
    std::string_view metric,
    std::initializer_list<std::pair<std::string_view, std::string_view>> labels, double value,
    std::string* out);

// A number as Prometheus and CSV files write it: decimal or exponent, NaN, +Inf, -Inf.
std::optional<double> ParseNumber(std::string_view s);

// Machine, component and group of a series from its labels, as described above. The views point
// into `labels`.
struct SeriesIdentity {
  std::string_view machine;
  std::string component;
  std::string_view group;
};
SeriesIdentity IdentityOf(const Labels& labels);

}  // namespace vigil::telemetry
