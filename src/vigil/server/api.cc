#include "vigil/server/api.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdint>
#include <exception>

#include "vigil/core/clock.h"
#include "vigil/core/json.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/learn.h"
#include "vigil/learned/reach.h"
#include "vigil/results/document.h"
#include "vigil/server/dashboard.h"
#include "vigil/server/network.h"
#include "vigil/server/selection.h"
#include "vigil/server/upload.h"
#include "vigil/telemetry/readers.h"

namespace vigil::server {

Response ErrorResponse(int status, std::string_view message) {
  Response r;
  r.status = status;
  r.body = DumpJson(Json{{"error", message}, {"status", status}});
  return r;
}

namespace {

constexpr std::string_view kApi = "/api/v1/";

Response JsonResponse(const Json& json, int status = 200) {
  Response r;
  r.status = status;
  r.body = DumpJson(json);
  return r;
}

// InvalidArgument is the client's fault (400), NotFound 404, Unavailable 503 (a store that
// stopped writing), anything else the server's (500): a damaged database included, so that
// agents keep the upload and try again rather than set it aside as refused.
Response StatusResponse(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return ErrorResponse(400, s.message());
    case StatusCode::kNotFound:
      return ErrorResponse(404, s.message());
    case StatusCode::kUnavailable:
      return ErrorResponse(503, s.message());
    default:
      return ErrorResponse(500, s.message());
  }
}

// A dashboard page, with the headers that keep a browser from running or framing anything it did
// not come with: the pages are self-contained (inline style and SVG, no script), and their one
// form (the fleet page's search) goes to the server itself.
Response HtmlPage(std::string body) {
  Response r;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(body);
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                         "frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  return r;
}

Response MethodNotAllowed(std::string_view allow) {
  Response r = ErrorResponse(405, fmt::format("method not allowed; use {}", allow));
  r.headers.emplace_back("Allow", allow);
  return r;
}

// Compares without returning early, so that the time taken does not tell how much matched.
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

// ?name=: a whole number from min to max; `fallback` when absent.
Result<size_t> NumberParam(const Request& req, const std::string& name, size_t fallback, size_t min,
                           size_t max) {
  auto it = req.query.find(name);
  if (it == req.query.end()) return fallback;
  size_t v = 0;
  const auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec != std::errc() || p != it->second.data() + it->second.size() || v < min || v > max) {
    return Status::InvalidArgument(fmt::format("{}: expected a whole number from {} to {}, got {}",
                                               name, min, max, Quote(it->second)));
  }
  return v;
}

Result<size_t> LimitParam(const Request& req, size_t fallback, size_t max) {
  return NumberParam(req, "limit", fallback, 1, max);
}

std::string Param(const Request& req, const std::string& name) {
  auto it = req.query.find(name);
  return it == req.query.end() ? std::string() : it->second;
}

Result<bool> RetiredParam(const Request& req) {
  const std::string v = Param(req, "retired");
  if (v.empty() || v == "false") return false;
  if (v == "true") return true;
  return Status::InvalidArgument(fmt::format("retired: expected true or false, got {}", Quote(v)));
}

// ?verdict=: none when absent or empty.
Result<std::optional<Verdict>> VerdictParam(const Request& req) {
  const std::string v = Param(req, "verdict");
  if (v.empty()) return std::optional<Verdict>();
  const Result<Verdict> parsed = ParseVerdict(v);
  if (!parsed.ok()) return parsed.status().WithContext("verdict");
  return std::optional<Verdict>(*parsed);
}

// The node list written directly: NodeJson through nlohmann costs several times more, and the
// list is the API's largest answer (10,000 nodes in well under 100 ms).
void AppendNodeJson(std::string& out, const store::NodeState& n, double now) {
  out += "{\"node\":";
  AppendJsonString(out, n.node);
  out += ",\"hardware\":";
  AppendJsonString(out, n.hardware);
  out += ",\"verdict\":";
  AppendJsonString(out, VerdictName(n.verdict));
  out += ",\"failing\":[";
  for (size_t i = 0; i < n.failing.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, ComponentName(n.failing[i]));
  }
  fmt::format_to(std::back_inserter(out), "],\"last_validated\":\"{}\",\"age_seconds\":{},",
                 FormatUtc(n.received), now - n.received);
  out += "\"start_time\":";
  AppendJsonString(out, n.start_time);
  fmt::format_to(std::back_inserter(out),
                 ",\"uploads\":{},\"last_upload\":{},\"retired\":", n.uploads, n.last_upload);
  if (n.retired > 0) {
    fmt::format_to(std::back_inserter(out), "\"{}\"}}", FormatUtc(n.retired));
  } else {
    out += "null}";
  }
}

// One upload in an answer, written directly as AppendNodeJson writes a node: its findings are
// the JSON text they were encoded to when judged, copied in as they are.
void AppendUploadJson(std::string& out, const store::Upload& u) {
  fmt::format_to(std::back_inserter(out), "{{\"id\":{},\"node\":", u.id);
  AppendJsonString(out, u.node);
  out += ",\"hardware\":";
  AppendJsonString(out, u.hardware);
  fmt::format_to(std::back_inserter(out),
                 ",\"received\":\"{}\",\"start_time\":", FormatUtc(u.received));
  AppendJsonString(out, u.start_time);
  fmt::format_to(std::back_inserter(out),
                 ",\"verdict\":\"{}\",\"criteria_version\":{},\"failing\":[",
                 VerdictName(u.verdict), u.criteria_version);
  for (size_t i = 0; i < u.failing.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, ComponentName(u.failing[i]));
  }
  out += "],\"findings\":";
  out += u.findings.empty() ? std::string_view("[]") : std::string_view(u.findings);
  fmt::format_to(std::back_inserter(out), ",\"repeated\":{}}}", u.repeated);
}

// Remediation's series (docs/serve.md): decisions by action and final outcome (every pair, 0
// included, so that a rate over them starts from the service's start), the breaker, the nodes
// held drained.
void AppendRemediationMetrics(const remediate::Remediator& r, std::string* out) {
  using remediate::Action;
  using remediate::Outcome;
  const remediate::RemediationStatus st = r.Snapshot();
  *out +=
      "# HELP vigil_remediation_decisions_total Remediation decisions by action and outcome.\n"
      "# TYPE vigil_remediation_decisions_total counter\n";
  for (const Action a : {Action::kDrain, Action::kResume}) {
    for (const Outcome o :
         {Outcome::kActed, Outcome::kDryRun, Outcome::kDuplicate, Outcome::kRateLimited,
          Outcome::kBreakerOpen, Outcome::kNotVigils, Outcome::kAlready, Outcome::kFailed}) {
      if (a == Action::kResume && o == Outcome::kBreakerOpen) continue;
      if (a == Action::kDrain && o == Outcome::kNotVigils) continue;
      const auto it = st.decisions.find({a, o});
      telemetry::AppendExpositionLine(
          "vigil_remediation_decisions_total",
          {{"action", std::string(remediate::ActionName(a))},
           {"outcome", std::string(remediate::OutcomeName(o))}},
          it == st.decisions.end() ? 0.0 : static_cast<double>(it->second), out);
    }
  }
  *out +=
      "# HELP vigil_remediation_breaker_open 1 while the circuit breaker refuses drains.\n"
      "# TYPE vigil_remediation_breaker_open gauge\n";
  telemetry::AppendExpositionLine("vigil_remediation_breaker_open", {}, st.breaker_open ? 1 : 0,
                                  out);
  *out +=
      "# HELP vigil_remediation_drained_nodes Nodes Vigil holds drained.\n"
      "# TYPE vigil_remediation_drained_nodes gauge\n";
  telemetry::AppendExpositionLine("vigil_remediation_drained_nodes", {},
                                  static_cast<double>(st.drained.size()), out);
}

}  // namespace

Json AuditRecordJson(const remediate::AuditRecord& a) {
  return Json{{"id", a.id},
              {"time", FormatUtc(a.time)},
              {"node", a.node},
              {"action", remediate::ActionName(a.action)},
              {"trigger", remediate::TriggerName(a.trigger)},
              {"outcome", remediate::OutcomeName(a.outcome)},
              {"reason", a.reason},
              {"attempt", a.attempt},
              {"command", a.command},
              {"output", a.output}};
}

Api::Api(FleetService& service, ApiOptions options)
    : service_(service),
      options_(std::move(options)),
      selection_(std::make_unique<SelectionCache>(service)) {}

Api::~Api() = default;

void Api::Count(std::string_view route, int status) {
  MutexLock lock(counts_mu_);
  ++counts_[{std::string(route), status}];
}

Response Api::Handle(const Request& request) {
  std::string route = "other";
  Response r = Admit(request);
  try {
    if (r.status == 200) r = Route(request, route);
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", request.method, request.path, e.what());
    r = ErrorResponse(500, fmt::format("internal error: {}", e.what()));
  }
  Count(route, r.status);
  return r;
}

Response Api::Admit(const Request& head) {
  const bool read = head.method == "GET" || head.method == "HEAD";
  if (read && (!options_.token_for_reads || head.path == "/healthz")) return Response{};
  std::string_view reason;
  Response r;
  if (options_.token.empty()) {
    if (read || options_.allow_insecure_writes) return Response{};
    reason = "read_only";
    r = ErrorResponse(403, "this server is read-only: start it with --token-file to accept writes");
  } else {
    constexpr std::string_view kBearer = "Bearer ";
    const std::string_view given = head.authorization;
    if (given.rfind(kBearer, 0) == 0 && SameSecret(given.substr(kBearer.size()), options_.token)) {
      return Response{};
    }
    reason = given.empty() ? "missing" : "wrong";
    r = ErrorResponse(401, given.empty()
                               ? fmt::format("{} need an Authorization: Bearer <token> header",
                                             read ? "reads on this server" : "writes")
                               : "wrong token");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
  }
  {
    MutexLock lock(counts_mu_);
    ++auth_failures_[std::string(reason)];
  }
  return r;
}

Response Api::Route(const Request& req, std::string& route) {
  const std::string& path = req.path;
  const bool get = req.method == "GET" || req.method == "HEAD";
  const bool post = req.method == "POST";
  if (req.body.size() > options_.max_body) {
    return ErrorResponse(413, fmt::format("request body of {} bytes is over the limit of {}",
                                          req.body.size(), options_.max_body));
  }
  if (path == "/healthz") {
    route = "/healthz";
    return get ? Healthz() : MethodNotAllowed("GET");
  }
  if (path == "/metrics") {
    route = "/metrics";
    return get ? Metrics() : MethodNotAllowed("GET");
  }
  if (path == "/") {
    route = "/";
    return get ? FleetPage(req) : MethodNotAllowed("GET");
  }
  if (path.rfind("/nodes/", 0) == 0 && path.size() > 7) {
    route = "/nodes/{node}";
    return get ? NodePage(std::string_view(path).substr(7)) : MethodNotAllowed("GET");
  }
  if (path.rfind(kApi, 0) != 0) {
    return ErrorResponse(404, fmt::format("no page {}; the API is under {}", Quote(path), kApi));
  }
  const std::string_view rest = std::string_view(path).substr(kApi.size());
  const auto write = [&](auto&& handler) { return post ? handler() : MethodNotAllowed("POST"); };
  if (rest == "results") {
    route = "/api/v1/results";
    return write([&] { return PostResults(req); });
  }
  if (rest == "nodes") {
    route = "/api/v1/nodes";
    return get ? GetNodes(req) : MethodNotAllowed("GET");
  }
  if (rest.rfind("nodes/", 0) == 0 && rest.size() > 6) {
    // Node names hold no '/' (CheckNodeName): what follows one is an action on the node.
    const std::string_view node = rest.substr(6, rest.find('/', 6) - 6);
    const std::string_view action = rest.substr(6 + node.size());
    if (action.empty()) {
      route = "/api/v1/nodes/{node}";
      return get ? GetNode(req, node) : MethodNotAllowed("GET");
    }
    if (action == "/retire") {
      route = "/api/v1/nodes/{node}/retire";
      return write([&] { return Retire(node); });
    }
    if (action == "/rename") {
      route = "/api/v1/nodes/{node}/rename";
      return write([&] { return Rename(req, node); });
    }
  }
  if (rest == "criteria") {
    route = "/api/v1/criteria";
    return get ? GetCriteria() : MethodNotAllowed("GET");
  }
  if (rest == "criteria/learn") {
    route = "/api/v1/criteria/learn";
    return write([&] { return Learn(); });
  }
  if (rest == "remediation") {
    route = "/api/v1/remediation";
    return get ? GetRemediation(req) : MethodNotAllowed("GET");
  }
  if (rest == "remediation/reset") {
    route = "/api/v1/remediation/reset";
    return write([&] { return ResetRemediation(); });
  }
  if (rest == "network") {
    route = "/api/v1/network";
    return get ? GetNetwork() : MethodNotAllowed("GET");
  }
  if (rest == "alerts") {
    route = "/api/v1/alerts";
    if (get) return GetAlerts(req);
    return write([&] { return PostAlerts(req); });
  }
  if (rest == "incidents") {
    route = "/api/v1/incidents";
    if (get) return GetIncidents(req);
    return write([&] { return PostIncidents(req); });
  }
  if (rest == "history") {
    route = "/api/v1/history";
    return get ? GetHistory() : MethodNotAllowed("GET");
  }
  if (rest == "selection") {
    route = "/api/v1/selection";
    return get ? GetSelection(req) : MethodNotAllowed("GET");
  }
  return ErrorResponse(404, fmt::format("no endpoint {}", Quote(path)));
}

Response Api::PostResults(const Request& req) {
  Result<std::vector<store::Upload>> stored = service_.Ingest(req.body, "upload");
  if (!stored.ok()) return StatusResponse(stored.status());
  size_t repeated = 0;
  for (const store::Upload& u : *stored) repeated += u.repeated;
  Response r;
  r.status = 201;
  r.body = fmt::format("{{\"stored\":{},\"repeated\":{},\"results\":[", stored->size() - repeated,
                       repeated);
  for (size_t i = 0; i < stored->size(); ++i) {
    if (i) r.body += ',';
    AppendUploadJson(r.body, (*stored)[i]);
  }
  r.body += "]}";
  return r;
}

Response Api::GetNodes(const Request& req) {
  Result<bool> retired = RetiredParam(req);
  if (!retired.ok()) return StatusResponse(retired.status());
  Result<std::optional<Verdict>> verdict = VerdictParam(req);
  if (!verdict.ok()) return StatusResponse(verdict.status());
  const store::NodeFilter filter{*verdict, Param(req, "hardware"), *retired};
  Result<std::vector<store::NodeState>> nodes = service_.store().Nodes(filter);
  if (!nodes.ok()) return StatusResponse(nodes.status());
  const double now = service_.clock().WallSeconds();
  Response r;
  r.body = fmt::format("{{\"count\":{},\"nodes\":[", nodes->size());
  r.body.reserve(nodes->size() * 220);
  for (size_t i = 0; i < nodes->size(); ++i) {
    if (i) r.body += ',';
    AppendNodeJson(r.body, (*nodes)[i], now);
  }
  r.body += "]}";
  return r;
}

Response Api::GetNode(const Request& req, std::string_view node) {
  Result<size_t> limit = LimitParam(req, 100, 10000);
  if (!limit.ok()) return StatusResponse(limit.status());
  Result<store::NodeState> state = service_.store().Node(node);
  if (!state.ok()) return StatusResponse(state.status());
  Result<std::vector<store::Upload>> history = service_.store().History(node, *limit, false);
  if (!history.ok()) return StatusResponse(history.status());
  Response r;
  AppendNodeJson(r.body, *state, service_.clock().WallSeconds());
  r.body.pop_back();  // the node's '}': its history follows
  r.body += ",\"history\":[";
  for (size_t i = 0; i < history->size(); ++i) {
    if (i) r.body += ',';
    AppendUploadJson(r.body, (*history)[i]);
  }
  r.body += "]}";
  return r;
}

Response Api::Retire(std::string_view node) {
  if (Status s = service_.Retire(node); !s.ok()) return StatusResponse(s);
  return GetNode(Request{}, node);
}

Response Api::Rename(const Request& req, std::string_view node) {
  Result<Json> body = ParseJson(req.body, "rename");
  if (!body.ok()) return StatusResponse(body.status());
  if (!body->is_object() || !body->contains("to") || !(*body)["to"].is_string()) {
    return ErrorResponse(400, "rename: to: expected {\"to\": \"<new node name>\"}");
  }
  const std::string to = (*body)["to"].get<std::string>();
  if (Status s = CheckNodeName(to); !s.ok()) return StatusResponse(s.WithContext("rename: to"));
  if (Status s = service_.Rename(node, to); !s.ok()) {
    // A name in use is a state of the fleet, not a malformed request.
    return s.code() == StatusCode::kInvalidArgument ? ErrorResponse(409, s.message())
                                                    : StatusResponse(s);
  }
  return GetNode(Request{}, to);
}

Response Api::Learn() {
  Result<LearnReport> report = service_.Learn();
  if (!report.ok()) {
    // Too little to learn from is a state of the fleet, not a malformed request.
    if (report.status().code() == StatusCode::kInvalidArgument) {
      return ErrorResponse(409, report.status().message());
    }
    return StatusResponse(report.status());
  }
  const std::shared_ptr<const ActiveCriteria> active = service_.criteria();
  Json classes = Json::array();
  for (const learned::ClassModel& c : active->criteria.classes) {
    classes.push_back(Json{{"hardware", c.hardware}, {"nodes", c.nodes}});
  }
  Json left_out = Json::array();
  for (const learned::LeftOutClass& c : report->left_out) {
    left_out.push_back(Json{{"hardware", c.hardware}, {"nodes", c.nodes}, {"reason", c.reason}});
  }
  const store::CriteriaVersion& v = report->criteria;
  return JsonResponse(Json{{"version", v.version},
                           {"created", FormatUtc(v.created)},
                           {"nodes", v.nodes},
                           {"classes", std::move(classes)},
                           {"left_out", std::move(left_out)},
                           {"rejudged", report->rejudged},
                           {"changed", report->changed},
                           {"reach", learned::ReachToJson(report->reach)}},
                      201);
}

Response Api::GetCriteria() {
  Result<std::vector<store::CriteriaVersion>> versions = service_.store().CriteriaVersions();
  if (!versions.ok()) return StatusResponse(versions.status());
  Json list = Json::array();
  for (const store::CriteriaVersion& v : *versions) {
    list.push_back(
        Json{{"version", v.version}, {"created", FormatUtc(v.created)}, {"nodes", v.nodes}});
  }
  const std::shared_ptr<const ActiveCriteria> active = service_.criteria();
  Json current = nullptr;
  if (active) {
    current =
        Json{{"version", active->version}, {"criteria", learned::CriteriaToJson(active->criteria)}};
  }
  return JsonResponse(Json{{"current", std::move(current)}, {"versions", std::move(list)}});
}

Response Api::PostAlerts(const Request& req) {
  Result<std::vector<store::StoredAlert>> stored = service_.IngestAlerts(req.body, "alerts");
  if (!stored.ok()) return StatusResponse(stored.status());
  Json ids = Json::array();
  for (const store::StoredAlert& a : *stored) ids.push_back(a.id);
  return JsonResponse(Json{{"stored", stored->size()}, {"ids", std::move(ids)}}, 201);
}

Response Api::GetNetwork() {
  Result<std::vector<store::Upload>> latest = service_.store().LatestUploads();
  if (!latest.ok()) return StatusResponse(latest.status());
  Result<Json> verdict = NetworkVerdict(*latest);
  if (!verdict.ok()) return StatusResponse(verdict.status());
  Response r;
  r.body = DumpJson(*verdict);
  return r;
}

Response Api::GetAlerts(const Request& req) {
  Result<size_t> limit = LimitParam(req, 1000, 100000);
  if (!limit.ok()) return StatusResponse(limit.status());
  Result<std::vector<store::StoredAlert>> alerts =
      service_.store().Alerts({Param(req, "machine"), *limit});
  if (!alerts.ok()) return StatusResponse(alerts.status());
  Response r;
  r.body = fmt::format("{{\"count\":{},\"alerts\":[", alerts->size());
  for (size_t i = 0; i < alerts->size(); ++i) {
    const store::StoredAlert& a = (*alerts)[i];
    if (i) r.body += ',';
    // The stored object, encoded once when it came in, with its id and time added last.
    std::string_view body = Trim(a.body);
    if (body.size() >= 2 && body.front() == '{' && body.back() == '}') {
      body.remove_suffix(1);
    } else {
      body = "{";  // not an object (never written): the id and time alone
    }
    r.body += body;
    fmt::format_to(std::back_inserter(r.body), "{}\"id\":{},\"received\":\"{}\"}}",
                   Trim(body.substr(1)).empty() ? "" : ",", a.id, FormatUtc(a.received));
  }
  r.body += "]}";
  return r;
}

Response Api::PostIncidents(const Request& req) {
  Result<std::vector<store::StoredIncident>> stored =
      service_.IngestIncidents(req.body, "incidents");
  if (!stored.ok()) return StatusResponse(stored.status());
  Json ids = Json::array();
  size_t repeated = 0;
  for (const store::StoredIncident& i : *stored) {
    ids.push_back(i.id);
    if (i.repeated) ++repeated;
  }
  // A retried request whose incidents are all stored already created nothing: 200.
  return JsonResponse(
      Json{{"stored", stored->size() - repeated}, {"repeated", repeated}, {"ids", std::move(ids)}},
      repeated == stored->size() ? 200 : 201);
}

Response Api::GetIncidents(const Request& req) {
  Result<size_t> limit = LimitParam(req, 1000, 100000);
  if (!limit.ok()) return StatusResponse(limit.status());
  Result<std::vector<store::StoredIncident>> incidents =
      service_.store().Incidents({Param(req, "node"), *limit});
  if (!incidents.ok()) return StatusResponse(incidents.status());
  Json list = Json::array();
  for (const store::StoredIncident& i : *incidents) {
    list.push_back(Json{{"id", i.id},
                        {"received", FormatUtc(i.received)},
                        {"node", i.node},
                        {"time", i.time},
                        {"kind", i.kind},
                        {"cost_node_hours", i.cost_node_hours},
                        {"job", i.job},
                        {"note", i.note}});
  }
  return JsonResponse(Json{{"count", list.size()}, {"incidents", std::move(list)}});
}

Response Api::GetHistory() {
  Result<std::string> text = selection_->HistoryJsonl();
  // An empty fleet has no history the format can hold (it needs a node).
  if (!text.ok() && text.status().code() == StatusCode::kInvalidArgument) {
    return ErrorResponse(409, text.status().message());
  }
  if (!text.ok()) return StatusResponse(text.status());
  Response r;
  r.content_type = "application/x-ndjson";
  r.body = std::move(text).value();
  return r;
}

Response Api::GetSelection(const Request& req) {
  Result<select::SelectOptions> options = SelectionQuery(req.query);
  if (!options.ok()) return StatusResponse(options.status());
  Result<std::string> plan = selection_->Answer(*options);
  // A history the Selector cannot plan from is the fleet's state, not a bad request.
  if (!plan.ok() && plan.status().code() == StatusCode::kInvalidArgument) {
    return ErrorResponse(409, plan.status().message());
  }
  if (!plan.ok()) return StatusResponse(plan.status());
  Response r;
  r.body = std::move(plan).value();
  return r;
}

Response Api::GetRemediation(const Request& req) {
  Result<size_t> limit = LimitParam(req, 100, 10000);
  if (!limit.ok()) return StatusResponse(limit.status());
  int64_t before = 0;
  if (const std::string b = Param(req, "before"); !b.empty()) {
    const auto [p, ec] = std::from_chars(b.data(), b.data() + b.size(), before);
    if (ec != std::errc() || p != b.data() + b.size() || before <= 0) {
      return ErrorResponse(400, fmt::format("before: expected a record id, got {}", Quote(b)));
    }
  }
  Result<std::vector<remediate::AuditRecord>> records =
      service_.store().Remediations({Param(req, "node"), *limit, before});
  if (!records.ok()) return StatusResponse(records.status());
  Json state = nullptr;
  if (remediate::Remediator* r = service_.remediator()) {
    const remediate::RemediationStatus st = r->Snapshot();
    state = Json{{"mode", remediate::ModeName(st.mode)},
                 {"backend", st.backend},
                 {"breaker_open", st.breaker_open},
                 {"drained", st.drained},
                 {"limit", st.limit},
                 {"queued", st.queued}};
  }
  Json list = Json::array();
  for (const remediate::AuditRecord& a : *records) list.push_back(AuditRecordJson(a));
  return JsonResponse(Json{{"enabled", state != nullptr},
                           {"state", std::move(state)},
                           {"count", list.size()},
                           {"records", std::move(list)}});
}

Response Api::ResetRemediation() {
  remediate::Remediator* r = service_.remediator();
  if (r == nullptr) {
    return ErrorResponse(409, "remediation is off: start vigil serve with --remediation POLICY");
  }
  const bool was_open = r->ResetBreaker();
  const remediate::RemediationStatus st = r->Snapshot();
  return JsonResponse(Json{{"reset", was_open},
                           {"breaker_open", st.breaker_open},
                           {"drained", st.drained},
                           {"limit", st.limit}});
}

Response Api::Healthz() {
  if (Status s = service_.store().Health(); !s.ok()) return ErrorResponse(503, s.message());
  Result<store::StoreCounts> counts = service_.store().Counts();
  if (!counts.ok()) return ErrorResponse(503, counts.status().message());
  return JsonResponse(
      Json{{"status", "ok"}, {"nodes", counts->nodes}, {"uploads", counts->uploads}});
}

Response Api::Metrics() {
  // The fleet as the service keeps it in memory (fleet_state.h): no row of the store is read.
  const FleetSnapshot fleet = service_.fleet().Snapshot({});
  const double now = service_.clock().WallSeconds();
  std::string out;
  using telemetry::AppendExpositionLine;
  out +=
      "# HELP vigil_node_healthy 1 when the node's latest validation found it healthy, 0 when "
      "defective; absent while unjudged.\n# TYPE vigil_node_healthy gauge\n";
  for (const store::NodeState& n : fleet.nodes) {
    if (n.verdict == Verdict::kUnjudged) continue;
    AppendExpositionLine("vigil_node_healthy", {{"node", n.node}, {"hardware", n.hardware}},
                         n.verdict == Verdict::kHealthy ? 1 : 0, &out);
  }
  out +=
      "# HELP vigil_node_last_validation_age_seconds Seconds since the node's latest upload.\n"
      "# TYPE vigil_node_last_validation_age_seconds gauge\n";
  for (const store::NodeState& n : fleet.nodes) {
    AppendExpositionLine("vigil_node_last_validation_age_seconds", {{"node", n.node}},
                         now - n.received, &out);
  }
  std::map<std::string_view, int64_t> by_verdict;  // by name: the order they are written in
  for (const Verdict v : {Verdict::kHealthy, Verdict::kDefective, Verdict::kUnjudged}) {
    by_verdict[VerdictName(v)] = fleet.gauges.Nodes(v);
  }
  out +=
      "# HELP vigil_nodes Nodes by the verdict of their latest validation.\n"
      "# TYPE vigil_nodes gauge\n";
  for (const auto& [v, count] : by_verdict) {
    AppendExpositionLine("vigil_nodes", {{"verdict", v}}, static_cast<double>(count), &out);
  }
  out +=
      "# HELP vigil_failing_components Components named defective by the nodes' latest "
      "verdicts, by kind (GPU, NIC, ...).\n# TYPE vigil_failing_components gauge\n";
  for (const auto& [c, count] : fleet.gauges.by_component) {
    AppendExpositionLine("vigil_failing_components", {{"component", c}}, static_cast<double>(count),
                         &out);
  }
  IngestCounters& k = service_.counters();
  const std::pair<const char*, const std::atomic<int64_t>*> counters[] = {
      {"vigil_uploads_ingested_total", &k.uploads},
      {"vigil_uploads_repeated_total", &k.repeated},
      {"vigil_upload_bytes_total", &k.upload_bytes},
      {"vigil_uploads_rejected_total", &k.rejected},
      {"vigil_alerts_ingested_total", &k.alerts}};
  for (const auto& [name, value] : counters) {
    fmt::format_to(std::back_inserter(out), "# TYPE {} counter\n", name);
    AppendExpositionLine(name, {}, static_cast<double>(value->load()), &out);
  }
  if (remediate::Remediator* r = service_.remediator()) AppendRemediationMetrics(*r, &out);
  const std::shared_ptr<const ActiveCriteria> active = service_.criteria();
  out +=
      "# HELP vigil_criteria_version The criteria uploads are judged by (0: none).\n"
      "# TYPE vigil_criteria_version gauge\n";
  AppendExpositionLine("vigil_criteria_version", {},
                       active ? static_cast<double>(active->version) : 0.0, &out);
  out +=
      "# HELP vigil_http_requests_total HTTP responses by route and status.\n"
      "# TYPE vigil_http_requests_total counter\n";
  {
    MutexLock lock(counts_mu_);
    for (const auto& [key, count] : counts_) {
      const std::string code = std::to_string(key.second);
      AppendExpositionLine("vigil_http_requests_total", {{"route", key.first}, {"code", code}},
                           static_cast<double>(count), &out);
    }
    out +=
        "# HELP vigil_http_auth_failures_total Requests refused for their token: missing, "
        "wrong, or a write to a read-only server.\n# TYPE vigil_http_auth_failures_total counter\n";
    for (const char* reason : {"missing", "wrong", "read_only"}) {
      auto it = auth_failures_.find(reason);
      AppendExpositionLine("vigil_http_auth_failures_total", {{"reason", reason}},
                           it == auth_failures_.end() ? 0.0 : static_cast<double>(it->second),
                           &out);
    }
  }
  const std::pair<const char*, const std::atomic<int64_t>*> connection_counts[] = {
      {"vigil_http_connections_open", &connections_.open},
      {"vigil_http_connections_refused_total", &connections_.refused},
      {"vigil_http_connections_timed_out_total", &connections_.timed_out}};
  for (const auto& [name, value] : connection_counts) {
    fmt::format_to(std::back_inserter(out), "# TYPE {} {}\n", name,
                   value == &connections_.open ? "gauge" : "counter");
    AppendExpositionLine(name, {}, static_cast<double>(value->load()), &out);
  }
  Response r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = std::move(out);
  return r;
}

// The fleet page's parameters (docs/serve.md, "Dashboard"): ?verdict=, ?hardware=, ?q= (search),
// ?page= (from 1), ?per_page= (up to 1,000), ?refresh= (seconds, 0 for none).
Response Api::FleetPage(const Request& req) {
  constexpr size_t kMaxPerPage = 1000, kMaxRefresh = 86400;
  server::FleetPage page;
  Result<std::optional<Verdict>> verdict = VerdictParam(req);
  if (!verdict.ok()) return StatusResponse(verdict.status());
  Result<size_t> number = NumberParam(req, "page", 1, 1, SIZE_MAX);
  Result<size_t> per_page = NumberParam(req, "per_page", FleetQuery{}.per_page, 1, kMaxPerPage);
  Result<size_t> refresh = NumberParam(req, "refresh", 30, 0, kMaxRefresh);
  for (const Result<size_t>* r : {&number, &per_page, &refresh}) {
    if (!r->ok()) return StatusResponse(r->status());
  }
  page.query.filter = {*verdict, Param(req, "hardware"), false};
  page.query.search = std::string(Trim(Param(req, "q")));
  page.query.page = *number - 1;
  page.query.per_page = *per_page;
  page.refresh = static_cast<int>(*refresh);
  page.ranking = service_.fleet().Ranked(page.query);
  Result<std::vector<store::StoredAlert>> alerts = service_.store().Alerts({"", 20});
  if (alerts.ok()) page.alerts = std::move(alerts).value();
  const std::shared_ptr<const ActiveCriteria> active = service_.criteria();
  page.criteria_version = active ? active->version : 0;
  page.now = service_.clock().WallSeconds();
  // The plan at the default options, as GET /api/v1/selection answers it (cached alike).
  if (Result<std::string> plan = selection_->Answer(select::SelectOptions{}); plan.ok()) {
    Result<Json> json = ParseJson(*plan, "selection");
    if (json.ok()) page.selection = std::move(json).value();
  } else {
    page.selection_note = plan.status().message();
  }
  if (remediate::Remediator* r = service_.remediator()) {
    page.remediation = r->Snapshot();
    Result<std::vector<remediate::AuditRecord>> actions =
        service_.store().Remediations({"", 20, 0});
    if (actions.ok()) page.actions = std::move(actions).value();
  }
  return HtmlPage(RenderFleetPage(page));
}

namespace {

// The units the node's latest results document states, by metric key; none for a summary line
// or a document that does not read back.
std::map<std::string, std::string, std::less<>> StatedUnits(store::Store& store,
                                                            std::string_view node) {
  std::map<std::string, std::string, std::less<>> units;
  Result<std::vector<store::Upload>> latest = store.History(node, 1, true);
  if (!latest.ok() || latest->empty() || latest->front().document.empty()) return units;
  Result<NodeResults> doc = ParseNodeResults(latest->front().document, "stored document");
  if (!doc.ok()) return units;
  for (const BenchmarkRecord& b : doc->benchmarks) {
    for (const Metric& m : b.metrics) {
      if (!m.unit.empty()) units.emplace(m.key.ToString(), m.unit);
    }
  }
  return units;
}

}  // namespace

Response Api::NodePage(std::string_view node) {
  server::NodePage page;
  Result<store::NodeState> state = service_.store().Node(node);
  if (!state.ok()) return StatusResponse(state.status());
  page.node = std::move(state).value();
  Result<std::vector<store::Upload>> history = service_.store().History(node, 100, false);
  if (!history.ok()) return StatusResponse(history.status());
  page.history = std::move(history).value();
  const std::shared_ptr<const ActiveCriteria> active = service_.criteria();
  page.criteria = active.get();
  Result<std::vector<remediate::AuditRecord>> actions =
      service_.store().Remediations({std::string(node), 50, 0});
  if (!actions.ok()) return StatusResponse(actions.status());
  page.actions = std::move(actions).value();
  page.units = StatedUnits(service_.store(), node);
  page.now = service_.clock().WallSeconds();
  return HtmlPage(RenderNodePage(page));
}

}  // namespace vigil::server
