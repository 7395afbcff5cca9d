#include "vigil/agent/textfile.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <optional>

#include "vigil/core/clock.h"
#include "vigil/core/file.h"
#include "vigil/learned/judge.h"
#include "vigil/results/verdict.h"
#include "vigil/telemetry/readers.h"

namespace vigil::agent {
namespace {

using telemetry::AppendExpositionLine;

// "# HELP" and "# TYPE" of a gauge: promtool check metrics asks for both, and Grafana shows
// the help as the series' description.
void AppendGaugeHead(std::string_view name, std::string_view help, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
}

void AppendVerdict(const NodeAgentResult& run, std::string* out) {
  const NodeResults& doc = run.doc;
  AppendGaugeHead("vigil_node_verdict",
                  "The verdict of the node's latest vigil run: 1 on the verdict it got, 0 on the "
                  "other (defective: the run exited 1).",
                  out);
  for (const Verdict v : {Verdict::kHealthy, Verdict::kDefective}) {
    const bool got = (v == Verdict::kDefective) == run.failed;
    AppendExpositionLine("vigil_node_verdict",
                         {{"node", doc.node}, {"suite", doc.suite}, {"verdict", VerdictName(v)}},
                         got ? 1 : 0, out);
  }
  // A document whose end time cannot be read (none is written so) has no line rather than 0,
  // which would read as a run in 1970.
  if (const std::optional<int64_t> end = ParseIsoSeconds(doc.end_time)) {
    AppendGaugeHead("vigil_run_end_time_seconds", "When the node's latest vigil run ended.", out);
    AppendExpositionLine("vigil_run_end_time_seconds", {{"node", doc.node}, {"suite", doc.suite}},
                         static_cast<double>(*end), out);
  }
}

void AppendCounts(const NodeAgentResult& run, std::string* out) {
  const NodeResults& doc = run.doc;
  AppendGaugeHead("vigil_run_findings",
                  "Findings of the node's latest vigil run by severity (docs/validate.md).", out);
  for (const learned::Severity s :
       {learned::Severity::kMinor, learned::Severity::kMajor, learned::Severity::kCritical}) {
    int count = 0;
    for (const learned::Finding& f : run.judged.findings.findings) count += f.severity == s;
    AppendExpositionLine(
        "vigil_run_findings",
        {{"node", doc.node}, {"suite", doc.suite}, {"severity", learned::SeverityName(s)}}, count,
        out);
  }
  AppendGaugeHead("vigil_run_benchmarks", "Benchmarks of the node's latest vigil run by status.",
                  out);
  for (const BenchStatus s : {BenchStatus::kOk, BenchStatus::kFailed, BenchStatus::kSkipped}) {
    int count = 0;
    for (const BenchmarkRecord& b : doc.benchmarks) count += b.status == s;
    AppendExpositionLine("vigil_run_benchmarks",
                         {{"node", doc.node}, {"suite", doc.suite}, {"status", BenchStatusName(s)}},
                         count, out);
  }
}

void AppendFigures(const NodeResults& doc, std::string* out) {
  AppendGaugeHead("vigil_run_figure",
                  "A figure of the node's latest vigil run, in the unit its label names "
                  "(index: the GPU, NIC or disk; empty for the node).",
                  out);
  size_t written = 0, left_out = 0;
  for (const BenchmarkRecord& b : doc.benchmarks) {
    if (b.status != BenchStatus::kOk) continue;
    for (const Metric& m : b.metrics) {
      const bool link = m.key.index && m.key.index->second;
      if (std::isnan(m.value)) continue;
      if (link || written == kMaxTextfileFigures) {
        ++left_out;
        continue;
      }
      const std::string index = m.key.index ? m.key.index->ToString() : "";
      AppendExpositionLine("vigil_run_figure",
                           {{"node", doc.node},
                            {"suite", doc.suite},
                            {"benchmark", b.name},
                            {"component", b.component},
                            {"metric", m.key.metric},
                            {"index", index},
                            {"unit", m.unit}},
                           m.value, out);
      ++written;
    }
  }
  AppendGaugeHead("vigil_run_figures_left_out",
                  fmt::format("Figures of the node's latest vigil run not written: links between "
                              "components, and those beyond the first {}.",
                              kMaxTextfileFigures),
                  out);
  AppendExpositionLine("vigil_run_figures_left_out", {{"node", doc.node}, {"suite", doc.suite}},
                       static_cast<double>(left_out), out);
}

}  // namespace

std::string FormatTextfile(const NodeAgentResult& run) {
  std::string out;
  AppendVerdict(run, &out);
  AppendCounts(run, &out);
  AppendFigures(run.doc, &out);
  return out;
}

std::string TextfilePath(const std::string& dir) {
  return fmt::format("{}/{}", dir, kTextfileName);
}

Status CheckTextfileDir(const std::string& dir) {
  struct stat st {};
  if (dir.empty() || stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(fmt::format("--textfile {}: no such directory", dir));
  }
  const Status writable = CheckWritable(TextfilePath(dir));
  if (!writable.ok()) return writable.WithContext("--textfile");
  return Status::Ok();
}

Status WriteTextfile(const std::string& dir, std::string_view text) {
  return WriteFileAtomic(TextfilePath(dir), text);
}

}  // namespace vigil::agent
