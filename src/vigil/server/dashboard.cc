#include "vigil/server/dashboard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "vigil/core/clock.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/learned/criteria.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/summary.h"

namespace vigil::server {

namespace {

constexpr std::string_view kStyle = R"css(
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}
table{border-collapse:collapse;font-size:.9em}
th,td{padding:.25em .7em;border-bottom:1px solid #ddd;text-align:left}
th{background:#f4f4f4}
.healthy{color:#176f2c;font-weight:600}.defective{color:#b00020;font-weight:600}
.unjudged{color:#8a6d00;font-weight:600}
.tiles span{display:inline-block;margin-right:1.5em;font-size:1.1em}
.plots{display:flex;flex-wrap:wrap;gap:1em}
svg text{font-size:10px;fill:#444}
a{color:#0b57d0}
)css";

std::string Page(std::string_view title, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{}</style>"
      "</head><body>{}</body></html>\n",
      HtmlEscape(title), kStyle, body);
}

// "3 min ago", "2.1 h ago", "4 d ago".
std::string Age(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f} s ago", std::max(0.0, seconds));
  if (seconds < 7200) return fmt::format("{:.0f} min ago", seconds / 60);
  if (seconds < 172800) return fmt::format("{:.1f} h ago", seconds / 3600);
  return fmt::format("{:.0f} d ago", seconds / 86400);
}

std::string UrlEscape(std::string_view text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string Joined(const std::vector<ComponentId>& components) {
  std::string out;
  for (const ComponentId& c : components) {
    if (!out.empty()) out += ", ";
    out += ComponentName(c);
  }
  return out;
}

// A figure in about four significant digits.
std::string Figure(double v) { return fmt::format("{:.4g}", v); }

struct Series {
  std::string metric;
  std::vector<std::pair<double, double>> points;  // (received, value), oldest first
  double centre = std::nan(""), low = std::nan(""), high = std::nan("");
};

// One metric over time as an SVG line, with the learned healthy range as a band.
std::string Plot(const Series& s) {
  constexpr double kW = 460, kH = 150, kLeft = 56, kRight = 10, kTop = 22, kBottom = 26;
  double y0 = INFINITY, y1 = -INFINITY;
  for (const auto& [t, v] : s.points) {
    y0 = std::min(y0, v);
    y1 = std::max(y1, v);
  }
  for (const double b : {s.low, s.high, s.centre}) {
    if (std::isfinite(b)) {
      y0 = std::min(y0, b);
      y1 = std::max(y1, b);
    }
  }
  if (!(y1 > y0)) {
    const double pad = y0 == 0 ? 1 : std::fabs(y0) * 0.05;
    y0 -= pad;
    y1 += pad;
  }
  const double pad = (y1 - y0) * 0.08;
  y0 -= pad;
  y1 += pad;
  const double t0 = s.points.front().first, t1 = s.points.back().first;
  const auto x = [&](double t) {
    return t1 > t0 ? kLeft + (t - t0) / (t1 - t0) * (kW - kLeft - kRight)
                   : (kLeft + kW - kRight) / 2;
  };
  const auto y = [&](double v) { return kTop + (y1 - v) / (y1 - y0) * (kH - kTop - kBottom); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" role=\"img\">"
      "<title>{2}</title><rect width=\"{0}\" height=\"{1}\" fill=\"#fff\" stroke=\"#ddd\"/>"
      "<text x=\"6\" y=\"14\" style=\"font-weight:600\">{2}</text>",
      kW, kH, HtmlEscape(s.metric));
  if (std::isfinite(s.centre)) {
    const double lo = std::isfinite(s.low) ? y(s.low) : kH - kBottom;
    const double hi = std::isfinite(s.high) ? y(s.high) : kTop;
    fmt::format_to(std::back_inserter(svg),
                   "<rect class=\"band\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                   "height=\"{:.1f}\" fill=\"#dff3e3\"><title>healthy range learned from the "
                   "fleet</title></rect><line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" "
                   "y2=\"{:.1f}\" stroke=\"#4caf50\" stroke-dasharray=\"4 3\"/>",
                   kLeft, hi, kW - kLeft - kRight, std::max(0.0, lo - hi), kLeft, kW - kRight,
                   y(s.centre), y(s.centre));
  }
  std::string line;
  for (const auto& [t, v] : s.points)
    fmt::format_to(std::back_inserter(line), "{:.1f},{:.1f} ", x(t), y(v));
  fmt::format_to(std::back_inserter(svg),
                 "<polyline points=\"{}\" fill=\"none\" stroke=\"#0b57d0\" stroke-width=\"1.5\"/>",
                 line);
  for (const auto& [t, v] : s.points) {
    fmt::format_to(std::back_inserter(svg),
                   "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"#0b57d0\"><title>{} "
                   "{}</title></circle>",
                   x(t), y(v), FormatUtc(t), Figure(v));
  }
  fmt::format_to(std::back_inserter(svg),
                 "<text x=\"4\" y=\"{:.1f}\">{}</text><text x=\"4\" y=\"{:.1f}\">{}</text>"
                 "<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" "
                 "text-anchor=\"end\">{}</text></svg>",
                 kTop + 8, Figure(y1 - pad), kH - kBottom, Figure(y0 + pad), kLeft, kH - 8,
                 FormatUtc(t0).substr(0, 16), kW - kRight, kH - 8, FormatUtc(t1).substr(0, 16));
  return svg;
}

constexpr size_t kMaxPlots = 8;

// The metrics to plot: those the latest findings name, then the first of each benchmark.
std::vector<Series> KeySeries(const FleetTable& table, const std::vector<double>& times,
                              const std::string& findings) {
  std::vector<std::string> keys;
  const auto add = [&](const std::string& key) {
    if (keys.size() < kMaxPlots && table.column(key) >= 0 &&
        std::find(keys.begin(), keys.end(), key) == keys.end()) {
      keys.push_back(key);
    }
  };
  if (Result<Json> f = ParseJson(findings, "findings"); f.ok() && f->is_array()) {
    for (const Json& one : *f) {
      if (one.contains("metric") && one["metric"].is_string())
        add(one["metric"].get<std::string>());
    }
  }
  std::vector<std::string> seen;
  for (const std::string& key : table.metrics()) {
    const std::string b = BenchmarkOfKey(key);
    if (key.ends_with("/return_code") || std::find(seen.begin(), seen.end(), b) != seen.end()) {
      continue;
    }
    seen.push_back(b);
    add(key);
  }
  std::vector<Series> out;
  for (const std::string& key : keys) {
    Series s;
    s.metric = key;
    const auto j = static_cast<size_t>(table.column(key));
    for (size_t i = 0; i < table.node_count(); ++i) {
      if (!std::isnan(table.at(i, j))) s.points.emplace_back(times[i], table.at(i, j));
    }
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return out;
}

void AddBands(std::vector<Series>& series, const std::string& hardware,
              const ActiveCriteria* active) {
  if (active == nullptr) return;
  const learned::LearnedCriteria& c = active->criteria;
  const learned::ClassModel* cm = learned::ClassFor(c, hardware);
  if (cm == nullptr) return;
  for (Series& s : series) {
    const MetricAnatomy a = Anatomize(s.metric);
    for (const learned::FamilyModel& f : cm->families) {
      if (f.family != a.family || !IsLearned(f.direction)) continue;
      // The band of the mode the node's latest value sits in (a metric with two healthy modes,
      // two firmware versions, has one band each).
      const double factor = learned::MemberFactor(f, s.metric);
      const learned::Mode& m = learned::NearestMode(
          f, s.points.empty() ? std::nan("") : s.points.back().second / factor);
      s.centre = m.centre * factor;
      const bool low = f.direction != Direction::kLower;
      const bool high = f.direction != Direction::kHigher;
      if (low) s.low = (m.centre - f.limit * m.spread) * factor;
      if (high) s.high = (m.centre + f.limit * m.spread) * factor;
    }
  }
}

// Remediation's records, newest first: when, the node, what, why, and what came of it.
std::string ActionsTable(const std::vector<remediate::AuditRecord>& actions, bool with_node) {
  std::string body = fmt::format(
      "<table id=\"remediation\"><thead><tr><th>Time</th>{}<th>Action</th><th>Trigger</th>"
      "<th>Outcome</th><th>Reason</th><th>Attempt</th></tr></thead><tbody>",
      with_node ? "<th>Node</th>" : "");
  for (const remediate::AuditRecord& a : actions) {
    std::string node;
    if (with_node) {
      node = a.node.empty() ? "<td>-</td>"
                            : fmt::format("<td><a href=\"/nodes/{}\">{}</a></td>",
                                          UrlEscape(a.node), HtmlEscape(a.node));
    }
    const std::string detail = a.output.empty() ? a.command : a.command + "\n" + a.output;
    fmt::format_to(std::back_inserter(body),
                   "<tr><td>{}</td>{}<td>{}</td><td>{}</td><td class=\"outcome {}\" "
                   "title=\"{}\">{}</td><td>{}</td><td>{}</td></tr>",
                   FormatUtc(a.time), node, remediate::ActionName(a.action),
                   remediate::TriggerName(a.trigger), remediate::OutcomeName(a.outcome),
                   HtmlEscape(detail), remediate::OutcomeName(a.outcome), HtmlEscape(a.reason),
                   a.attempt > 0 ? std::to_string(a.attempt) : "-");
  }
  body += "</tbody></table>";
  return body;
}

}  // namespace

std::string RenderFleetPage(const FleetPage& p) {
  std::map<Verdict, int> by_verdict;
  for (const store::NodeState& n : p.nodes) ++by_verdict[n.verdict];
  std::string body = "<h1>Vigil fleet</h1><div class=\"tiles\">";
  fmt::format_to(std::back_inserter(body), "<span>{} nodes</span>", p.nodes.size());
  for (const Verdict v : {Verdict::kHealthy, Verdict::kDefective, Verdict::kUnjudged}) {
    fmt::format_to(std::back_inserter(body),
                   "<span><a class=\"{0}\" href=\"/?verdict={0}\">{1} {0}</a></span>",
                   VerdictName(v), by_verdict[v]);
  }
  fmt::format_to(std::back_inserter(body), "<span>criteria: {}</span></div>",
                 p.criteria_version > 0 ? fmt::format("version {}", p.criteria_version)
                                        : std::string("none learned yet"));
  if (p.verdict || !p.hardware.empty()) {
    fmt::format_to(std::back_inserter(body),
                   "<p>Showing {} {} nodes. <a href=\"/\">All nodes</a></p>",
                   p.verdict ? VerdictName(*p.verdict) : "", HtmlEscape(p.hardware));
  }
  body +=
      "<h2>Nodes</h2><table id=\"nodes\"><thead><tr><th>Node</th><th>Verdict</th><th>Hardware"
      "</th><th>Last validated</th><th>Failing components</th><th>Uploads</th></tr></thead>"
      "<tbody>";
  for (const store::NodeState& n : p.nodes) {
    fmt::format_to(std::back_inserter(body),
                   "<tr data-node=\"{0}\"><td><a href=\"/nodes/{1}\">{0}</a></td>"
                   "<td class=\"verdict {2}\">{2}</td><td><a href=\"/?hardware={3}\">{4}</a></td>"
                   "<td title=\"{5}\">{6}</td><td>{7}</td><td>{8}</td></tr>",
                   HtmlEscape(n.node), UrlEscape(n.node), VerdictName(n.verdict),
                   UrlEscape(n.hardware), HtmlEscape(n.hardware.empty() ? "-" : n.hardware),
                   FormatUtc(n.received), Age(p.now - n.received), HtmlEscape(Joined(n.failing)),
                   n.uploads);
  }
  body += "</tbody></table>";
  if (!p.alerts.empty()) {
    body +=
        "<h2>Detector alerts</h2><table id=\"alerts\"><thead><tr><th>Machine</th><th>Kind</th>"
        "<th>Detected</th></tr></thead><tbody>";
    for (const store::StoredAlert& a : p.alerts) {
      fmt::format_to(std::back_inserter(body), "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                     HtmlEscape(a.machine), HtmlEscape(a.kind), FormatUtc(a.detected));
    }
    body += "</tbody></table>";
  }
  if (p.remediation) {
    const remediate::RemediationStatus& r = *p.remediation;
    fmt::format_to(
        std::back_inserter(body),
        "<h2>Remediation</h2><div class=\"tiles\" id=\"breaker\"><span>{}</span>"
        "<span>backend: {}</span><span class=\"{}\">circuit breaker {}</span>"
        "<span>{} of at most {} nodes drained by Vigil</span><span>{} queued</span></div>",
        remediate::ModeName(r.mode), HtmlEscape(r.backend),
        r.breaker_open ? "defective" : "healthy",
        r.breaker_open ? "OPEN: no drains until reset (POST /api/v1/remediation/reset)" : "closed",
        r.drained.size(), r.limit, r.queued);
    if (!p.actions.empty()) body += ActionsTable(p.actions, true);
  }
  return Page("Vigil fleet", body);
}

std::string RenderNodePage(const store::NodeState& node, const std::vector<store::Upload>& history,
                           const ActiveCriteria* criteria, double now,
                           const std::vector<remediate::AuditRecord>& actions) {
  std::string body = fmt::format(
      "<p><a href=\"/\">&larr; Fleet</a></p><h1>{}</h1><div class=\"tiles\"><span class=\"{}\">"
      "{}</span><span>{}</span><span>last validated {}</span><span>{} uploads</span></div>",
      HtmlEscape(node.node), VerdictName(node.verdict), VerdictName(node.verdict),
      HtmlEscape(node.hardware.empty() ? "hardware class unknown" : node.hardware),
      Age(now - node.received), node.uploads);
  if (!node.failing.empty()) {
    fmt::format_to(std::back_inserter(body), "<p>Failing: <strong>{}</strong></p>",
                   HtmlEscape(Joined(node.failing)));
  }
  // Plots: the uploads oldest first, as one table.
  std::vector<FleetRow> rows;
  std::vector<double> times;
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    rows.push_back(it->row);
    times.push_back(it->received);
  }
  if (!history.empty()) {
    const FleetTable table = TableOfRows(rows, "history");
    std::vector<Series> series = KeySeries(table, times, history.front().findings);
    AddBands(series, node.hardware, criteria);
    if (!series.empty()) {
      body += "<h2>Key metrics over time</h2><div class=\"plots\">";
      for (const Series& s : series) body += Plot(s);
      body += "</div>";
    }
  }
  body +=
      "<h2>History</h2><table id=\"history\"><thead><tr><th>Received</th><th>Verdict</th>"
      "<th>Criteria</th><th>Failing components</th></tr></thead><tbody>";
  for (const store::Upload& u : history) {
    fmt::format_to(std::back_inserter(body),
                   "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>",
                   FormatUtc(u.received), VerdictName(u.verdict), VerdictName(u.verdict),
                   u.criteria_version > 0 ? std::to_string(u.criteria_version) : "-",
                   HtmlEscape(Joined(u.failing)));
  }
  body += "</tbody></table>";
  if (!actions.empty()) body += "<h2>Remediation</h2>" + ActionsTable(actions, false);
  return Page(fmt::format("{} - Vigil", node.node), body);
}

}  // namespace vigil::server
