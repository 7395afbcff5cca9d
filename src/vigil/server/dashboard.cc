#include "vigil/server/dashboard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "vigil/core/clock.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/detect/detector.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/summary.h"

namespace vigil::server {

namespace {

constexpr std::string_view kStyle = R"css(
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}h3{font-size:1em;margin:1em 0 .3em}
table{border-collapse:collapse;font-size:.9em}
th,td{padding:.25em .7em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.healthy{color:#176f2c;font-weight:600}.defective{color:#b00020;font-weight:600}
.unjudged{color:#8a6d00;font-weight:600}
.critical{color:#b00020;font-weight:600}.major{color:#b35c00;font-weight:600}
.tiles span{display:inline-block;margin-right:1.5em;font-size:1.1em}
.plots{display:flex;flex-wrap:wrap;gap:1em}
#alerts{border-left:4px solid #b00020}
nav.pages a,nav.pages span{margin-right:1em}
svg text{font-size:10px;fill:#444}
a{color:#0b57d0}
)css";

// `head` goes into <head> as it is: the caller escaped what it holds.
std::string Page(std::string_view title, std::string_view body, std::string_view head = "") {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width\">{}<title>{}</title><style>{}</style>"
      "</head><body>{}</body></html>\n",
      head, HtmlEscape(title), kStyle, body);
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

std::string NodeLink(std::string_view node) {
  return fmt::format("<a href=\"/nodes/{}\">{}</a>", UrlEscape(node), HtmlEscape(node));
}

std::string Joined(const std::vector<ComponentId>& components) {
  std::string out;
  for (const ComponentId& c : components) {
    if (!out.empty()) out += ", ";
    out += ComponentName(c);
  }
  return out;
}

// A figure and its unit, as people read them: "33,858 GFLOPS".
std::string WithUnit(double v, std::string_view unit) {
  if (unit.empty() || std::isnan(v)) return Readable(v);
  return fmt::format("{} {}", Readable(v), unit);
}

std::string Percent(double share) {
  if (std::isinf(share)) return "failed";
  return fmt::format("{:.0f}%", share * 100);
}

// ---- The fleet page ----

// A detector's evidence in a sentence: a rule's reading, or a value against its peers'.
std::string EvidenceText(const detect::Evidence& e) {
  const std::string what(Trim(fmt::format("{} {}", e.signal, e.stat)));
  if (e.peer_median == 0 && e.deviation == 0 && e.effect == 0) {
    return fmt::format("{} = {}", what, Readable(e.value));
  }
  return fmt::format(
      "{} = {} against {} of {} ({:+.1f} robust sigmas, {:+.0f}%)", what, Readable(e.value),
      e.reference == detect::kOwnPastReference ? "its own past level" : "a peer median",
      Readable(e.peer_median), e.deviation, e.effect * 100);
}

std::string AlertsSection(const std::vector<store::StoredAlert>& alerts) {
  if (alerts.empty()) return "";
  std::string body = fmt::format(
      "<h2>Detector alerts ({} newest)</h2><table id=\"alerts\"><thead><tr><th>Machine</th>"
      "<th>Rule</th><th>Component</th><th>Evidence</th><th>Detected</th></tr></thead><tbody>",
      alerts.size());
  for (const store::StoredAlert& stored : alerts) {
    // The alert as the detector wrote it; a body that does not read back shows what was indexed.
    detect::Alert a;
    a.machine = stored.machine;
    a.rule = stored.kind;
    a.detected = stored.detected;
    if (Result<Json> j = ParseJson(stored.body, "alert"); j.ok()) {
      if (Result<detect::Alert> parsed = detect::AlertFromJson(*j, "alert"); parsed.ok()) {
        a = std::move(parsed).value();
      }
    }
    std::string evidence;
    for (const detect::Evidence& e : a.evidence) {
      fmt::format_to(std::back_inserter(evidence), "<div>{}</div>", HtmlEscape(EvidenceText(e)));
    }
    const std::string rule = a.rule.empty()
                                 ? std::string(detect::AlertKindName(a.kind))
                                 : fmt::format("{}: {}", detect::AlertKindName(a.kind), a.rule);
    fmt::format_to(std::back_inserter(body),
                   "<tr class=\"alert\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                   "<td>{}</td></tr>",
                   HtmlEscape(a.machine), HtmlEscape(rule),
                   HtmlEscape(a.component.empty() ? "the machine" : a.component),
                   evidence.empty() ? "-" : evidence, FormatUtc(a.detected));
  }
  return body + "</tbody></table>";
}

// The Selector's plan: each validation to run now, the benchmarks, why the node and what it is
// expected to save. A missing or malformed field shows as "-" (the plan is the server's own).
std::string SelectionSection(const FleetPage& p) {
  std::string body = "<h2>Validations the Selector plans</h2>";
  const Json& plan = p.selection;
  if (!plan.is_object() || !plan.contains("validations") || !plan["validations"].is_array()) {
    return body +
           fmt::format("<p id=\"selection\">No plan: {}</p>",
                       HtmlEscape(p.selection_note.empty() ? "none computed" : p.selection_note));
  }
  const auto number = [](const Json& v, const char* field) {
    return v.contains(field) && v[field].is_number() ? v[field].get<double>() : std::nan("");
  };
  const auto text = [](const Json& v, const char* field) {
    return v.contains(field) && v[field].is_string() ? v[field].get<std::string>() : "-";
  };
  const Json& validations = plan["validations"];
  const std::string kind = plan.contains("model") && plan["model"].is_object()
                               ? text(plan["model"], "kind")
                               : std::string("-");
  fmt::format_to(std::back_inserter(body),
                 "<p>{} of {} nodes whose validation pays, planned with the {} risk model, as of "
                 "{} (<a href=\"/api/v1/selection\">JSON</a>).</p>",
                 validations.size(), static_cast<int64_t>(number(plan, "candidates")),
                 HtmlEscape(kind), FormatUtc(number(plan, "at")));
  if (validations.empty()) return body + "<p id=\"selection\">No validation pays now.</p>";
  body +=
      "<table id=\"selection\"><thead><tr><th>Node</th><th>Benchmarks</th><th>Why</th>"
      "<th>P(incident)</th><th>Expected benefit (node-hours)</th></tr></thead><tbody>";
  for (const Json& v : validations) {
    if (!v.is_object()) continue;
    std::string benchmarks;
    for (const Json& b : v.value("benchmarks", Json::array())) {
      if (b.is_string()) benchmarks += (benchmarks.empty() ? "" : ", ") + b.get<std::string>();
    }
    fmt::format_to(std::back_inserter(body),
                   "<tr class=\"planned\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} "
                   "averted for {} spent: {} net</td></tr>",
                   NodeLink(text(v, "node")), HtmlEscape(benchmarks), HtmlEscape(text(v, "why")),
                   Percent(number(v, "probability")), Readable(number(v, "averted_node_hours")),
                   Readable(number(v, "cost_node_hours")), Readable(number(v, "net_node_hours")));
  }
  return body + "</tbody></table>";
}

std::string SearchForm(const FleetQuery& q) {
  std::string hidden;
  if (q.filter.verdict) {
    fmt::format_to(std::back_inserter(hidden),
                   "<input type=\"hidden\" name=\"verdict\" value=\"{}\">",
                   VerdictName(*q.filter.verdict));
  }
  if (!q.filter.hardware.empty()) {
    fmt::format_to(std::back_inserter(hidden),
                   "<input type=\"hidden\" name=\"hardware\" value=\"{}\">",
                   HtmlEscape(q.filter.hardware));
  }
  return fmt::format(
      "<form id=\"search\" method=\"get\" action=\"/\">{}<input type=\"search\" name=\"q\" "
      "value=\"{}\" placeholder=\"node, hardware or component\" aria-label=\"Search nodes\"> "
      "<button type=\"submit\">Search</button></form>",
      hidden, HtmlEscape(q.search));
}

// "Nodes 101-200 of 3,000, worst first" and links to the first, previous, next and last pages.
std::string PageLinks(const FleetQuery& q, const FleetRanking& r) {
  if (r.matched == 0) return "<p id=\"range\">No node matches.</p>";
  const size_t first = r.page * std::max<size_t>(q.per_page, 1) + 1;
  std::string body =
      fmt::format("<p id=\"range\">Nodes {}-{} of {}, worst first.</p>", first,
                  first + r.nodes.size() - 1, Readable(static_cast<double>(r.matched)));
  if (r.pages <= 1) return body;
  body += "<nav class=\"pages\" id=\"pages\">";
  const auto link = [&](std::string_view label, size_t page, bool live) {
    body += live ? fmt::format("<a href=\"{}\">{}</a>", HtmlEscape(FleetUrl(q, page)), label)
                 : fmt::format("<span>{}</span>", label);
  };
  link("&laquo; first", 0, r.page > 0);
  link("&lsaquo; previous", r.page == 0 ? 0 : r.page - 1, r.page > 0);
  fmt::format_to(std::back_inserter(body), "<span>page {} of {}</span>", r.page + 1, r.pages);
  link("next &rsaquo;", r.page + 1, r.page + 1 < r.pages);
  link("last &raquo;", r.pages - 1, r.page + 1 < r.pages);
  return body + "</nav>";
}

std::string NearestCell(const NearestLimit& n) {
  if (!n.known()) return "<td class=\"nearest\">-</td>";
  return fmt::format("<td class=\"nearest\" title=\"{} = {}\">{} &middot; {}</td>",
                     HtmlEscape(n.metric), Readable(n.value), Percent(n.used),
                     HtmlEscape(n.metric));
}

std::string NodesTable(const FleetPage& p) {
  std::string body =
      "<table id=\"nodes\"><thead><tr><th>#</th><th>Node</th><th>Verdict</th>"
      "<th title=\"how much of its learned healthy band the node's nearest value uses: 100% is "
      "the limit\">Band used &middot; nearest metric</th><th>Hardware</th><th>Last validated"
      "</th><th>Failing components</th><th>Uploads</th></tr></thead><tbody>";
  size_t rank = p.ranking.page * std::max<size_t>(p.query.per_page, 1);
  for (const RankedNode& r : p.ranking.nodes) {
    const store::NodeState& n = r.node;
    fmt::format_to(std::back_inserter(body),
                   "<tr data-node=\"{0}\"><td class=\"num\">{1}</td><td>{2}</td>"
                   "<td class=\"verdict {3}\">{3}</td>{4}<td><a href=\"/?hardware={5}\">{6}</a>"
                   "</td><td title=\"{7}\">{8}</td><td>{9}</td><td class=\"num\">{10}</td></tr>",
                   HtmlEscape(n.node), ++rank, NodeLink(n.node), VerdictName(n.verdict),
                   NearestCell(r.nearest), UrlEscape(n.hardware),
                   HtmlEscape(n.hardware.empty() ? "-" : n.hardware), FormatUtc(n.received),
                   Age(p.now - n.received), HtmlEscape(Joined(n.failing)), n.uploads);
  }
  return body + "</tbody></table>";
}

// Remediation's records, newest first: when, the node, what, why, and what came of it.
std::string ActionsTable(const std::vector<remediate::AuditRecord>& actions, bool with_node) {
  std::string body = fmt::format(
      "<table id=\"remediation\"><thead><tr><th>Time</th>{}<th>Action</th><th>Trigger</th>"
      "<th>Outcome</th><th>Reason</th><th>Attempt</th></tr></thead><tbody>",
      with_node ? "<th>Node</th>" : "");
  for (const remediate::AuditRecord& a : actions) {
    std::string node;
    if (with_node) node = a.node.empty() ? "<td>-</td>" : "<td>" + NodeLink(a.node) + "</td>";
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

std::string RemediationSection(const FleetPage& p) {
  if (!p.remediation) return "";
  const remediate::RemediationStatus& r = *p.remediation;
  std::string body = fmt::format(
      "<h2>Remediation</h2><div class=\"tiles\" id=\"breaker\"><span>{}</span>"
      "<span>backend: {}</span><span class=\"{}\">circuit breaker {}</span>"
      "<span>{} of at most {} nodes drained by Vigil</span><span>{} queued</span></div>",
      remediate::ModeName(r.mode), HtmlEscape(r.backend), r.breaker_open ? "defective" : "healthy",
      r.breaker_open ? "OPEN: no drains until reset (POST /api/v1/remediation/reset)" : "closed",
      r.drained.size(), r.limit, r.queued);
  if (!p.actions.empty()) body += ActionsTable(p.actions, true);
  return body;
}

// ---- The node page ----

// One metric over time, with the learned band where there is one.
struct Series {
  std::string metric;
  std::string unit;
  std::vector<std::pair<double, double>> points;  // (received, value), oldest first
  std::optional<Band> band;
};

// The value range a plot shows: the points and the band, padded by 8%.
std::pair<double, double> PlotRange(const Series& s) {
  double y0 = INFINITY, y1 = -INFINITY;
  const auto take = [&](double v) {
    if (std::isfinite(v)) {
      y0 = std::min(y0, v);
      y1 = std::max(y1, v);
    }
  };
  for (const auto& [t, v] : s.points) take(v);
  if (s.band) {
    take(s.band->centre);
    take(s.band->low);
    take(s.band->high);
  }
  if (!(y1 > y0)) {
    const double pad = y0 == 0 ? 1 : std::fabs(y0) * 0.05;
    y0 -= pad;
    y1 += pad;
  }
  const double pad = (y1 - y0) * 0.08;
  return {y0 - pad, y1 + pad};
}

// One metric over time as an SVG line, with the learned healthy range as a band, and the axis
// labelled in readable figures with the metric's unit.
std::string Plot(const Series& s) {
  constexpr double kW = 460, kH = 160, kLeft = 86, kRight = 10, kTop = 22, kBottom = 26;
  // Not a structured binding: clang 14 cannot capture one in a lambda.
  const std::pair<double, double> range = PlotRange(s);
  const double y0 = range.first, y1 = range.second;
  const double t0 = s.points.front().first, t1 = s.points.back().first;
  const auto x = [&](double t) {
    return t1 > t0 ? kLeft + (t - t0) / (t1 - t0) * (kW - kLeft - kRight)
                   : (kLeft + kW - kRight) / 2;
  };
  const auto y = [&](double v) { return kTop + (y1 - v) / (y1 - y0) * (kH - kTop - kBottom); };
  const std::string title = s.unit.empty() ? s.metric : fmt::format("{} ({})", s.metric, s.unit);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "data-metric=\"{2}\"><title>{3}</title><rect width=\"{0}\" height=\"{1}\" fill=\"#fff\" "
      "stroke=\"#ddd\"/><text x=\"6\" y=\"14\" style=\"font-weight:600\">{3}</text>",
      kW, kH, HtmlEscape(s.metric), HtmlEscape(title));
  if (s.band) {
    const Band& b = *s.band;
    const double lo = std::isfinite(b.low) ? y(b.low) : kH - kBottom;
    const double hi = std::isfinite(b.high) ? y(b.high) : kTop;
    fmt::format_to(
        std::back_inserter(svg),
        "<rect class=\"band\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
        "height=\"{:.1f}\" fill=\"#dff3e3\"><title>healthy range learned from the "
        "fleet: {}</title></rect><line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" "
        "y2=\"{:.1f}\" stroke=\"#4caf50\" stroke-dasharray=\"4 3\"/>",
        kLeft, hi, kW - kLeft - kRight, std::max(0.0, lo - hi),
        HtmlEscape(fmt::format("{} to {}", WithUnit(b.low, s.unit), WithUnit(b.high, s.unit))),
        kLeft, kW - kRight, y(b.centre), y(b.centre));
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
                   x(t), y(v), FormatUtc(t), HtmlEscape(WithUnit(v, s.unit)));
  }
  const double pad = (y1 - y0) * 0.08 / 1.16;
  fmt::format_to(std::back_inserter(svg),
                 "<text x=\"4\" y=\"{:.1f}\" class=\"axis\">{}</text><text x=\"4\" y=\"{:.1f}\" "
                 "class=\"axis\">{}</text><text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" "
                 "text-anchor=\"end\">{}</text></svg>",
                 kTop + 8, HtmlEscape(WithUnit(y1 - pad, s.unit)), kH - kBottom,
                 HtmlEscape(WithUnit(y0 + pad, s.unit)), kLeft, kH - 8, FormatUtc(t0).substr(0, 16),
                 kW - kRight, kH - 8, FormatUtc(t1).substr(0, 16));
  return svg;
}

constexpr size_t kMaxPlots = 12;

// The metrics to plot: those the latest findings name, then the first of each benchmark.
std::vector<Series> KeySeries(const FleetTable& table, const std::vector<double>& times,
                              const Json& findings) {
  std::vector<std::string> keys;
  const auto add = [&](const std::string& key) {
    if (keys.size() < kMaxPlots && table.column(key) >= 0 &&
        std::find(keys.begin(), keys.end(), key) == keys.end()) {
      keys.push_back(key);
    }
  };
  for (const Json& one : findings) {
    if (one.contains("metric") && one["metric"].is_string()) add(one["metric"].get<std::string>());
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

std::string UnitFor(const NodePage& p, std::string_view metric) {
  const auto it = p.units.find(metric);
  return it != p.units.end() ? it->second : UnitOfMetric(metric);
}

// The plots, one group per component (GPU 3, NIC 0, the node as a whole...), in the order the
// components first come in `series`.
std::string PlotsSection(const NodePage& p, const Json& findings) {
  std::vector<FleetRow> rows;
  std::vector<double> times;
  for (auto it = p.history.rbegin(); it != p.history.rend(); ++it) {
    rows.push_back(it->row);
    times.push_back(it->received);
  }
  const FleetTable table = TableOfRows(rows, "history");
  std::vector<Series> series = KeySeries(table, times, findings);
  if (series.empty()) return "";
  std::vector<std::pair<std::string, std::string>> groups;  // component, its plots
  for (Series& s : series) {
    s.unit = UnitFor(p, s.metric);
    if (p.criteria != nullptr) {
      s.band = p.criteria->limits.BandFor(p.node.hardware, s.metric, s.points.back().second);
    }
    const std::string component = Anatomize(s.metric).component;
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& group) { return group.first == component; });
    if (g == groups.end()) g = groups.insert(groups.end(), {component, ""});
    g->second += Plot(s);
  }
  std::string body = "<h2>Key metrics over time</h2>";
  for (const auto& [component, plots] : groups) {
    fmt::format_to(std::back_inserter(body),
                   "<section class=\"component\"><h3>{}</h3><div class=\"plots\">{}</div>"
                   "</section>",
                   HtmlEscape(component), plots);
  }
  return body;
}

// A number of a finding, NaN for null or absent (the JSON writes infinities as null).
double FindingNumber(const Json& f, const char* field) {
  return f.contains(field) && f[field].is_number() ? f[field].get<double>() : std::nan("");
}

std::string FindingString(const Json& f, const char* field) {
  return f.contains(field) && f[field].is_string() ? f[field].get<std::string>() : std::string();
}

std::string ExpectedRange(double low, double high, std::string_view unit) {
  const bool has_low = std::isfinite(low), has_high = std::isfinite(high);
  if (has_low && has_high) {
    return low == high ? fmt::format("about {}", WithUnit(low, unit))
                       : fmt::format("{} to {}", Readable(low), WithUnit(high, unit));
  }
  if (has_low) return fmt::format("at least {}", WithUnit(low, unit));
  if (has_high) return fmt::format("at most {}", WithUnit(high, unit));
  return "-";
}

int SeverityRank(std::string_view severity) {
  return severity == "critical" ? 0 : severity == "major" ? 1 : 2;
}

// Every finding of the latest validation, the most severe first.
std::string FindingsSection(const NodePage& p, const Json& findings) {
  if (findings.empty()) {
    return p.node.verdict == Verdict::kHealthy
               ? "<h2>Findings</h2><p id=\"findings\">None: every value within its learned "
                 "range.</p>"
               : "";
  }
  std::vector<const Json*> order;
  for (const Json& f : findings) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(), [](const Json* a, const Json* b) {
    return SeverityRank(FindingString(*a, "severity")) <
           SeverityRank(FindingString(*b, "severity"));
  });
  std::string body = fmt::format(
      "<h2>Findings ({})</h2><table id=\"findings\"><thead><tr><th>Severity</th><th>Component"
      "</th><th>Metric</th><th>Test</th><th>Value</th><th>Expected</th><th>Deviation</th>"
      "</tr></thead><tbody>",
      findings.size());
  for (const Json* f : order) {
    const std::string metric = FindingString(*f, "metric");
    const std::string test = FindingString(*f, "test");
    // A class finding's "metric" is a count of families, not a key with a unit.
    const std::string unit = test == "class" ? "" : UnitFor(p, metric);
    const double value = FindingNumber(*f, "value"), deviation = FindingNumber(*f, "deviation");
    const std::string severity = FindingString(*f, "severity");
    const std::string shown = test == "missing" ? "not reported" : WithUnit(value, unit);
    std::string off = "-";
    if (std::isfinite(deviation) && test != "missing" && test != "class") {
      off = fmt::format("{:+.1f}% from the fleet's centre", deviation * 100);
    }
    fmt::format_to(std::back_inserter(body),
                   "<tr class=\"finding\"><td class=\"{0}\">{0}</td><td>{1}</td><td>{2}</td>"
                   "<td>{3}</td><td class=\"num value\">{4}</td><td class=\"expected\">{5}</td>"
                   "<td class=\"num deviation\">{6}</td></tr>",
                   HtmlEscape(severity), HtmlEscape(FindingString(*f, "component")),
                   HtmlEscape(metric), HtmlEscape(test), HtmlEscape(shown),
                   HtmlEscape(ExpectedRange(FindingNumber(*f, "expected_low"),
                                            FindingNumber(*f, "expected_high"), unit)),
                   HtmlEscape(off));
  }
  return body + "</tbody></table>";
}

std::string HistoryTable(const std::vector<store::Upload>& history) {
  std::string body =
      "<h2>History</h2><table id=\"history\"><thead><tr><th>Received</th><th>Verdict</th>"
      "<th>Criteria</th><th>Failing components</th></tr></thead><tbody>";
  for (const store::Upload& u : history) {
    fmt::format_to(std::back_inserter(body),
                   "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>",
                   FormatUtc(u.received), VerdictName(u.verdict), VerdictName(u.verdict),
                   u.criteria_version > 0 ? std::to_string(u.criteria_version) : "-",
                   HtmlEscape(Joined(u.failing)));
  }
  return body + "</tbody></table>";
}

// The value of the latest upload nearest its limit, in a sentence.
std::string NearestLine(const NodePage& p) {
  if (p.criteria == nullptr || p.history.empty()) return "";
  const NearestLimit n = p.criteria->limits.Nearest(p.history.front().row);
  if (!n.known()) return "";
  return fmt::format(
      "<p id=\"nearest\">Nearest its limit: <strong>{}</strong> = {}, {} of its healthy band "
      "used.</p>",
      HtmlEscape(n.metric), HtmlEscape(WithUnit(n.value, UnitFor(p, n.metric))), Percent(n.used));
}

}  // namespace

std::string Readable(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "infinity" : "-infinity";
  const double a = std::fabs(v);
  if (a != 0 && (a < 1e-6 || a >= 1e15)) return fmt::format("{:.3e}", v);
  const int digits = a == 0 ? 1 : static_cast<int>(std::floor(std::log10(a))) + 1;
  std::string s = fmt::format("{:.{}f}", v, std::max(0, 4 - digits));
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  // Thousands grouped: "1,234,567".
  const size_t start = s[0] == '-' ? 1 : 0;
  size_t end = s.find('.');
  if (end == std::string::npos) end = s.size();
  for (size_t i = end; i > start + 3; i -= 3) s.insert(i - 3, ",");
  return s;
}

std::string UnitOfMetric(std::string_view key) {
  const std::string benchmark = BenchmarkOfKey(key);
  std::string name(key.substr(std::min(key.size(), benchmark.size() + 1)));
  if (const size_t colon = name.rfind(':'); colon != std::string::npos) name.resize(colon);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto ends = [&](std::string_view suffix) { return name.ends_with(suffix); };
  // SuperBench's metric tables (microsoft.github.io/superbenchmark/docs/user-tutorial/benchmarks/
  // micro-benchmarks and model-benchmarks): GEMM in GFLOPS and GIOPS, copy
  // and network bandwidths in GB/s, kernel launch in ms, models' step time in ms and throughput
  // in samples/s. Vigil's own names carry their unit (tflops, gbps).
  if (ends("tflops")) return "TFLOPS";
  if (ends("gflops")) return "GFLOPS";
  if (ends("gbps")) return "GB/s";
  // The benchmark's name: before the first '/', without its ":annotation" ("nccl-bw:ib").
  const std::string_view first = key.substr(0, key.find('/'));
  const std::string_view base = first.substr(0, first.find(':'));
  if (base == "gemm-flops") return ends("_flops") ? "GFLOPS" : ends("_iops") ? "GIOPS" : "";
  if (ends("busbw") || ends("algbw")) return "GB/s";
  static constexpr std::string_view kBandwidths[] = {"mem-bw", "gpu-copy-bw", "ib-loopback",
                                                     "nccl-bw", "rccl-bw"};
  if (ends("_bw") &&
      std::find(std::begin(kBandwidths), std::end(kBandwidths), base) != std::end(kBandwidths)) {
    return "GB/s";
  }
  if (base == "kernel-launch" && ends("_time")) return "ms";
  if (base.ends_with("_models")) {
    if (name.find("steptime") != std::string::npos) return "ms";
    if (name.find("throughput") != std::string::npos) return "samples/s";
  }
  return "";
}

std::string FleetUrl(const FleetQuery& q, size_t page) {
  std::vector<std::string> params;
  if (q.filter.verdict) params.push_back(fmt::format("verdict={}", VerdictName(*q.filter.verdict)));
  if (!q.filter.hardware.empty()) params.push_back("hardware=" + UrlEscape(q.filter.hardware));
  if (!q.search.empty()) params.push_back("q=" + UrlEscape(q.search));
  if (q.per_page != FleetQuery{}.per_page) params.push_back(fmt::format("per_page={}", q.per_page));
  if (page > 0) params.push_back(fmt::format("page={}", page + 1));
  std::string url = "/";
  for (size_t i = 0; i < params.size(); ++i) url += (i == 0 ? "?" : "&") + params[i];
  return url;
}

std::string RenderFleetPage(const FleetPage& p) {
  const FleetGauges& g = p.ranking.gauges;
  std::string body = "<h1>Vigil fleet</h1><div class=\"tiles\">";
  fmt::format_to(
      std::back_inserter(body), "<span>{} nodes</span>",
      Readable(static_cast<double>(g.Nodes(Verdict::kHealthy) + g.Nodes(Verdict::kDefective) +
                                   g.Nodes(Verdict::kUnjudged))));
  for (const Verdict v : {Verdict::kDefective, Verdict::kUnjudged, Verdict::kHealthy}) {
    fmt::format_to(std::back_inserter(body),
                   "<span><a class=\"{0}\" href=\"/?verdict={0}\">{1} {0}</a></span>",
                   VerdictName(v), g.Nodes(v));
  }
  fmt::format_to(std::back_inserter(body), "<span>criteria: {}</span>",
                 p.criteria_version > 0 ? fmt::format("version {}", p.criteria_version)
                                        : std::string("none learned yet"));
  if (p.refresh > 0)
    fmt::format_to(std::back_inserter(body), "<span>refreshed every {} s</span>", p.refresh);
  body += "</div>";
  body += AlertsSection(p.alerts);
  const FleetQuery& q = p.query;
  body += "<h2>Nodes, worst first</h2>" + SearchForm(q);
  if (q.filter.verdict || !q.filter.hardware.empty() || !q.search.empty()) {
    fmt::format_to(
        std::back_inserter(body), "<p>Showing {} {} nodes{}. <a href=\"/\">All nodes</a></p>",
        q.filter.verdict ? VerdictName(*q.filter.verdict) : "", HtmlEscape(q.filter.hardware),
        q.search.empty() ? "" : " matching " + HtmlEscape(Quote(q.search)));
  }
  body += PageLinks(q, p.ranking) + NodesTable(p) + SelectionSection(p) + RemediationSection(p);
  const std::string head =
      p.refresh > 0 ? fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">", p.refresh) : "";
  return Page("Vigil fleet", body, head);
}

std::string RenderNodePage(const NodePage& p) {
  const store::NodeState& node = p.node;
  std::string body = fmt::format(
      "<p><a href=\"/\">&larr; Fleet</a></p><h1>{}</h1><div class=\"tiles\"><span class=\"{}\">"
      "{}</span><span>{}</span><span>last validated {}</span><span>{} uploads</span></div>",
      HtmlEscape(node.node), VerdictName(node.verdict), VerdictName(node.verdict),
      HtmlEscape(node.hardware.empty() ? "hardware class unknown" : node.hardware),
      Age(p.now - node.received), node.uploads);
  if (!node.failing.empty()) {
    fmt::format_to(std::back_inserter(body), "<p>Failing: <strong>{}</strong></p>",
                   HtmlEscape(Joined(node.failing)));
  }
  Json findings = Json::array();
  if (!p.history.empty()) {
    Result<Json> f = ParseJson(p.history.front().findings, "findings");
    if (f.ok() && f->is_array()) findings = std::move(f).value();
  }
  body += NearestLine(p) + FindingsSection(p, findings);
  if (!p.history.empty()) body += PlotsSection(p, findings);
  body += HistoryTable(p.history);
  if (!p.actions.empty()) body += "<h2>Remediation</h2>" + ActionsTable(p.actions, false);
  return Page(fmt::format("{} - Vigil", node.node), body);
}

}  // namespace vigil::server
