#include "vigil/select/fleet_sim.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "vigil/core/duration.h"
#include "vigil/core/random.h"
#include "vigil/reliability/models.h"

namespace vigil::select {
namespace {

constexpr double kEpochS = 1.7e9;  // the simulated year's start, seconds since the Unix epoch
constexpr double kHoursPerDay = 24;
constexpr double kHoursPerWeek = 168;

enum class Activity { kIdle, kBusy, kValidating, kDown };

struct SimNode {
  double rate_factor = 1;
  std::vector<double> severity;  // per kind; < 0: healthy
  std::vector<double> growth;    // severity per hour
  std::vector<double> next_onset_h;
  bool software_pending = false;
  Activity activity = Activity::kIdle;
  double until_h = 0;
  double job_nodes = 1;
  bool job_waiting = false;       // a job waits for this validation to end
  std::vector<size_t> to_repair;  // kinds a finding sends to repair
  double last_validation_h = -1e18;
  Rng onset, jobs, events;
  SimNode(uint64_t seed, int index)
      : onset(seed, 3 * static_cast<uint64_t>(index)),
        jobs(seed, 3 * static_cast<uint64_t>(index) + 1),
        events(seed, 3 * static_cast<uint64_t>(index) + 2) {}
};

struct Request {
  int node = 0;
  std::vector<int> benchmarks;  // indices into the suite
};

class Policy {
 public:
  virtual ~Policy() = default;
  // The validations to start at `hour` (only idle nodes are validated).
  virtual Result<std::vector<Request>> Decide(double hour, const std::vector<NodeState>& states,
                                              const std::vector<SimNode>& nodes) = 0;
  virtual bool BeforeEveryJob() const { return false; }
};

std::vector<int> FullSuite(const FleetSimParams& p) {
  std::vector<int> all(p.suite.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return all;
}

class NoValidation final : public Policy {
 public:
  Result<std::vector<Request>> Decide(double, const std::vector<NodeState>&,
                                      const std::vector<SimNode>&) override {
    return std::vector<Request>{};
  }
};

// Every node every period, when it is next idle: the full suite, or a random subset.
class Periodic final : public Policy {
 public:
  Periodic(const FleetSimParams& p, double period_h, double random_share, uint64_t seed)
      : suite_(FullSuite(p)), period_h_(period_h), random_share_(random_share), rng_(seed, ~0ull) {}
  Result<std::vector<Request>> Decide(double hour, const std::vector<NodeState>& states,
                                      const std::vector<SimNode>& nodes) override {
    std::vector<Request> out;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (states[n] != NodeState::kIdle || hour - nodes[n].last_validation_h < period_h_) continue;
      out.push_back({static_cast<int>(n), random_share_ < 1 ? RandomSubset() : suite_});
    }
    return out;
  }

 private:
  std::vector<int> RandomSubset() {
    std::vector<int> chosen;
    for (int b : suite_) {
      if (rng_.Bernoulli(random_share_)) chosen.push_back(b);
    }
    if (chosen.empty()) chosen.push_back(suite_[rng_.Below(suite_.size())]);
    return chosen;
  }
  std::vector<int> suite_;
  double period_h_, random_share_;
  Rng rng_;
};

class BeforeJob final : public Policy {
 public:
  Result<std::vector<Request>> Decide(double, const std::vector<NodeState>&,
                                      const std::vector<SimNode>&) override {
    return std::vector<Request>{};
  }
  bool BeforeEveryJob() const override { return true; }
};

// The Selector, seeing only the history and the nodes' states.
class SelectorPolicy final : public Policy {
 public:
  SelectorPolicy(const FleetSimParams& p, const PolicyOptions& o, const History& history)
      : params_(p), options_(o), history_(history), tracker_(history) {
    weekly_budget_ = o.budget_node_hours_per_week > 0 ? o.budget_node_hours_per_week
                                                      : p.nodes * SuiteMinutes(p) / 60;
    options_.select.idle_only = true;
  }

  Result<std::vector<Request>> Decide(double hour, const std::vector<NodeState>& states,
                                      const std::vector<SimNode>&) override {
    if (hour < next_decision_h_) return std::vector<Request>{};
    next_decision_h_ = hour + options_.decide_every_h;
    const double now_s = history_.end_s;
    if (!model_ || hour >= next_refit_h_) {
      next_refit_h_ = hour + options_.refit_every_h;
      VIGIL_ASSIGN_OR_RETURN(SelectorModel model, Fit(now_s));
      model_ = std::move(model);
    }
    tracker_.AdvanceTo(now_s);
    // Unspent budget carries over, up to one week's.
    budget_ = std::min(weekly_budget_,
                       budget_ + weekly_budget_ * options_.decide_every_h / kHoursPerWeek);
    SelectOptions select = options_.select;
    select.budget_node_hours = budget_;
    select.cost_weight = price_;
    const Plan plan = MakePlan(*model_, tracker_, history_, now_s, states, select);
    std::vector<Request> out;
    for (const PlannedValidation& v : plan.validations) {
      out.push_back({v.node, Benchmarks(v.subset)});
      budget_ -= v.subset.seconds / kSecondsPerHour;
    }
    // Dual ascent on the budget: an unspent pool lowers the price of a validation node-hour (down
    // to kMinPrice), an empty one raises it, so that the budget goes to the validations worth most
    // net of their node-hours.
    const double fill = budget_ / weekly_budget_;
    price_ = std::clamp(
        price_ * std::exp(kPriceStepPerHour * options_.decide_every_h * (kPoolTarget - fill)),
        kMinPrice, kMaxPrice);
    return out;
  }

 private:
  static double SuiteMinutes(const FleetSimParams& p) {
    double m = 0;
    for (const SimBenchmark& b : p.suite) m += b.minutes;
    return m;
  }

  Result<SelectorModel> Fit(double now_s) const {
    SelectorModel model;
    VIGIL_ASSIGN_OR_RETURN(model.suite, LearnSuite(history_));
    const double from_s =
        std::max(history_.start_s, now_s - options_.fit_window_days * kSecondsPerDay);
    VIGIL_ASSIGN_OR_RETURN(model.risk, FitRiskModel(history_, from_s, now_s));
    return model;
  }

  // The suite's indices of a subset's benchmarks (the history names them as the suite does).
  std::vector<int> Benchmarks(const Subset& subset) const {
    std::vector<int> out;
    for (int b : subset.benchmarks) {
      const std::string& name = model_->suite.benchmarks[static_cast<size_t>(b)];
      for (size_t i = 0; i < params_.suite.size(); ++i) {
        if (params_.suite[i].name == name) out.push_back(static_cast<int>(i));
      }
    }
    return out;
  }

  const FleetSimParams& params_;
  PolicyOptions options_;
  const History& history_;
  CovariateTracker tracker_;
  std::optional<SelectorModel> model_;
  static constexpr double kPriceStepPerHour = 0.1, kPoolTarget = 0.5, kMinPrice = 0.001,
                          kMaxPrice = 1000;
  double weekly_budget_ = 0, budget_ = 0, price_ = 1;
  double next_decision_h_ = -1e18, next_refit_h_ = 0;
};

class FleetSim {
 public:
  explicit FleetSim(const FleetSimParams& p) : p_(p), rng_(p.seed, ~1ull) {
    for (const SimKind& k : p.kinds) total_share_ += k.share;
    history_.start_s = SecondsAt(-p.warmup_days * kHoursPerDay);
    history_.end_s = history_.start_s;
    for (int n = 0; n < p.nodes; ++n) AddNode(n);
  }

  Result<SimOutcome> Run(const PolicyOptions& o) {
    Periodic warmup(p_, kHoursPerWeek, 1, p_.seed);
    std::unique_ptr<Policy> judged;
    const double first_h = -p_.warmup_days * kHoursPerDay;
    const double last_h = p_.days * kHoursPerDay;
    for (double h = first_h; h < last_h; h += 1) {
      history_.end_s = SecondsAt(h);
      if (h >= 0 && !judged) judged = MakePolicy(o);
      Policy& policy = judged ? *judged : warmup;
      for (size_t n = 0; n < nodes_.size(); ++n) Step(n, h, policy.BeforeEveryJob());
      VIGIL_ASSIGN_OR_RETURN(const std::vector<Request> requests,
                             policy.Decide(h, States(), nodes_));
      for (const Request& r : requests) {
        if (nodes_[static_cast<size_t>(r.node)].activity == Activity::kIdle) Validate(r, h, false);
      }
    }
    outcome_.hours = last_h;
    outcome_.mtbi_h = outcome_.incidents > 0 ? outcome_.hours / outcome_.incidents : HUGE_VAL;
    outcome_.history = std::move(history_);
    return std::move(outcome_);
  }

 private:
  static double SecondsAt(double hour) { return kEpochS + hour * kSecondsPerHour; }

  std::unique_ptr<Policy> MakePolicy(const PolicyOptions& o) {
    switch (o.kind) {
      case PolicyKind::kNone:
        return std::make_unique<NoValidation>();
      case PolicyKind::kWeekly:
        return std::make_unique<Periodic>(p_, o.period_h, 1, p_.seed);
      case PolicyKind::kBeforeJob:
        return std::make_unique<BeforeJob>();
      case PolicyKind::kRandomSubset:
        return std::make_unique<Periodic>(p_, o.period_h, o.random_share, p_.seed);
      case PolicyKind::kSelector:
        return std::make_unique<SelectorPolicy>(p_, o, history_);
    }
    return std::make_unique<NoValidation>();
  }

  void AddNode(int index) {
    SimNode node(p_.seed, index);
    const bool old = rng_.Bernoulli(p_.old_class_share);
    node.rate_factor =
        (old ? p_.old_class_factor : 1) * (rng_.Bernoulli(p_.lemon_share) ? p_.lemon_factor : 1);
    node.severity.assign(p_.kinds.size(), -1);
    node.growth.assign(p_.kinds.size(), 0);
    const double start_h = -p_.warmup_days * kHoursPerDay;
    for (size_t k = 0; k < p_.kinds.size(); ++k)
      node.next_onset_h.push_back(start_h + Onset(node, k));
    // Staggered: as if the fleet had been validated weekly before the history begins.
    node.last_validation_h = start_h - rng_.Uniform() * kHoursPerWeek;
    node.until_h = start_h + node.jobs.Exponential(1 / p_.idle_mean_h);
    const double years = old ? 2 + rng_.Uniform() : rng_.Uniform() * 0.5;
    history_.nodes.push_back({fmt::format("node{:04d}", index), old ? "A100" : "H100",
                              history_.start_s - years * 365 * kSecondsPerDay});
    nodes_.push_back(std::move(node));
  }

  // Hours from now to the kind's next failure onset on the node.
  double Onset(SimNode& node, size_t k) {
    const double per_h = p_.failures_per_1000_node_days / 1000 / kHoursPerDay * node.rate_factor *
                         p_.kinds[k].share / total_share_;
    return node.onset.Exponential(per_h);
  }

  std::vector<NodeState> States() const {
    std::vector<NodeState> states;
    states.reserve(nodes_.size());
    for (const SimNode& n : nodes_) {
      switch (n.activity) {
        case Activity::kIdle:
          states.push_back(NodeState::kIdle);
          break;
        case Activity::kBusy:
          states.push_back(NodeState::kBusy);
          break;
        case Activity::kValidating:
          states.push_back(NodeState::kValidating);
          break;
        case Activity::kDown:
          states.push_back(NodeState::kDown);
          break;
      }
    }
    return states;
  }

  void Step(size_t n, double h, bool validate_before_job) {
    SimNode& node = nodes_[n];
    Degrade(node, h);
    Alerts(n, h);
    if (node.activity == Activity::kBusy) Incidents(n, h);
    if (node.until_h > h) return;
    switch (node.activity) {
      case Activity::kBusy:
        Idle(node, h);
        break;
      case Activity::kDown:
        Idle(node, h);
        break;
      case Activity::kValidating:
        if (!node.to_repair.empty()) {
          for (size_t k : node.to_repair) Repair(node, k, h);
          node.to_repair.clear();
          node.activity = Activity::kDown;
          node.until_h = h + p_.finding_repair_h;
        } else if (node.job_waiting) {
          StartJob(node, h);
        } else {
          Idle(node, h);
        }
        break;
      case Activity::kIdle:
        if (validate_before_job) {
          Validate({static_cast<int>(n), FullSuite(p_)}, h, true);
        } else {
          StartJob(node, h);
        }
        break;
    }
  }

  void Idle(SimNode& node, double h) {
    node.activity = Activity::kIdle;
    node.job_waiting = false;
    node.until_h = h + node.jobs.Exponential(1 / p_.idle_mean_h);
  }

  void StartJob(SimNode& node, double h) {
    node.activity = Activity::kBusy;
    node.job_waiting = false;
    node.until_h = h + node.jobs.Exponential(1 / p_.busy_mean_h);
    node.job_nodes = std::floor(std::exp(node.jobs.Uniform() * std::log(p_.max_job_nodes + 1)));
  }

  void Degrade(SimNode& node, double h) {
    for (size_t k = 0; k < p_.kinds.size(); ++k) {
      if (node.severity[k] >= 0) {
        node.severity[k] = std::min(1.0, node.severity[k] + node.growth[k]);
      } else if (h >= node.next_onset_h[k]) {
        if (p_.kinds[k].gray_days <= 0) {
          node.software_pending = true;
          node.next_onset_h[k] = h + Onset(node, k);
        } else {
          node.severity[k] = 0;
          node.growth[k] = 1 / (node.onset.Exponential(1 / p_.kinds[k].gray_days) * kHoursPerDay);
        }
      }
    }
  }

  void Alerts(size_t n, double h) {
    SimNode& node = nodes_[n];
    for (size_t k = 0; k < p_.kinds.size(); ++k) {
      if (node.severity[k] > 0 &&
          node.events.Bernoulli(p_.kinds[k].alert_per_h * node.severity[k])) {
        history_.alerts.push_back({static_cast<int>(n), SecondsAt(h), p_.kinds[k].name});
      }
    }
    if (node.events.Bernoulli(p_.false_alert_per_h)) {
      const size_t k = node.events.Below(p_.kinds.size());
      if (p_.kinds[k].alert_per_h > 0) {
        history_.alerts.push_back({static_cast<int>(n), SecondsAt(h), p_.kinds[k].name});
      }
    }
  }

  void Incidents(size_t n, double h) {
    SimNode& node = nodes_[n];
    std::optional<size_t> failed;
    for (size_t k = 0; k < p_.kinds.size() && !failed; ++k) {
      const double s = node.severity[k];
      if (s > 0 && node.events.Bernoulli(-std::expm1(-p_.hazard_per_h * s * s))) failed = k;
    }
    if (!failed && node.software_pending) {
      for (size_t k = 0; k < p_.kinds.size(); ++k) {
        if (p_.kinds[k].gray_days <= 0) failed = k;
      }
      node.software_pending = false;
    }
    if (!failed) return;
    const reliability::EttrParams ettr;
    const double lost_h = node.job_nodes * (ettr.restart_s + ettr.interval_s / 2) / kSecondsPerHour;
    history_.incidents.push_back(
        {static_cast<int>(n), SecondsAt(h), p_.kinds[*failed].name, lost_h});
    if (h >= 0) {
      ++outcome_.incidents;
      outcome_.incident_node_hours += lost_h;
    }
    Repair(node, *failed, h);
    node.activity = Activity::kDown;
    node.until_h = h + p_.incident_repair_h;
  }

  void Repair(SimNode& node, size_t k, double h) {
    node.severity[k] = -1;
    node.growth[k] = 0;
    if (p_.kinds[k].gray_days > 0) node.next_onset_h[k] = h + Onset(node, k);
  }

  void Validate(const Request& r, double h, bool job_waiting) {
    SimNode& node = nodes_[static_cast<size_t>(r.node)];
    HistoryValidation v;
    v.node = r.node;
    v.time_s = SecondsAt(h);
    std::vector<char> covered(p_.kinds.size(), 0), found(p_.kinds.size(), 0);
    double seconds = 0;
    for (int b : r.benchmarks) {
      const SimBenchmark& bench = p_.suite[static_cast<size_t>(b)];
      const double s = bench.minutes * 60 * (1 + node.events.Normal(0, p_.benchmark_time_noise));
      v.benchmarks.push_back({bench.name, std::max(1.0, s)});
      seconds += v.benchmarks.back().seconds;
      for (const auto& [kind, sensitivity] : bench.sensitivity) {
        const size_t k = KindIndex(kind);
        covered[k] = 1;
        const double sev = node.severity[k];
        if (sev > 0 &&
            node.events.Bernoulli(sensitivity * std::min(1.0, sev / p_.visible_severity))) {
          found[k] = 1;
          v.findings.push_back({kind == "HBM" ? "HBM" : kind + " 0", kind, bench.name});
        }
      }
    }
    for (size_t k = 0; k < p_.kinds.size(); ++k) {
      if (!covered[k]) continue;
      const double sev = std::max(0.0, node.severity[k]);
      v.margins.emplace_back(p_.kinds[k].name, p_.margin_healthy - p_.margin_slope * sev +
                                                   node.events.Normal(0, p_.margin_noise));
      if (found[k]) node.to_repair.push_back(k);
    }
    if (h >= 0) {
      ++outcome_.validations;
      outcome_.validation_node_hours += seconds / kSecondsPerHour;
      outcome_.findings += static_cast<int>(node.to_repair.size());
    }
    history_.validations.push_back(std::move(v));
    node.last_validation_h = h;
    node.activity = Activity::kValidating;
    node.job_waiting = job_waiting;
    node.until_h = h + seconds / kSecondsPerHour;
  }

  size_t KindIndex(const std::string& kind) const {
    for (size_t k = 0; k < p_.kinds.size(); ++k) {
      if (p_.kinds[k].name == kind) return k;
    }
    return 0;  // Validate() refuses a suite naming an unknown kind
  }

  const FleetSimParams& p_;
  Rng rng_;
  double total_share_ = 0;
  History history_;
  std::vector<SimNode> nodes_;
  SimOutcome outcome_;
};

}  // namespace

std::vector<SimKind> FleetSimParams::DefaultKinds() {
  return {{"GPU", 41.7, 10, 0.03},
          {"HBM", 17.2, 14, 0.05},
          {"network", 10.1, 7, 0.04},
          {"host", 9.7, 10, 0.01},
          {"software", 14.9, 0, 0}};
}

std::vector<SimBenchmark> FleetSimParams::DefaultSuite() {
  return {{"kernel-launch", 2, {{"GPU", 0.2}, {"host", 0.3}}},
          {"gemm-flops", 10, {{"GPU", 0.85}, {"HBM", 0.2}}},
          {"gpu-burn", 15, {{"GPU", 0.6}, {"HBM", 0.4}}},
          {"gpu-copy-bw", 5, {{"HBM", 0.5}, {"host", 0.3}}},
          {"mem-bw", 5, {{"HBM", 0.8}}},
          {"nccl-bw", 10, {{"GPU", 0.3}, {"network", 0.2}}},
          {"ib-loopback", 5, {{"network", 0.8}}},
          {"cpu-memory-bw", 5, {{"host", 0.5}}},
          {"disk-benchmark", 5, {{"host", 0.3}}},
          {"model-benchmarks", 30, {{"GPU", 0.6}, {"HBM", 0.5}, {"host", 0.2}}}};
}

Status Validate(const FleetSimParams& p) {
  const auto bad = [](std::string_view what) {
    return Status::InvalidArgument(fmt::format("simulator: {}", what));
  };
  if (p.nodes < 1 || p.nodes > 100000) return bad("nodes must be in [1, 100000]");
  if (!(p.days > 0 && p.days <= 3650) || !(p.warmup_days >= 7 && p.warmup_days <= 3650)) {
    return bad("days must be in (0, 3650] and the warm-up in [7, 3650]");
  }
  if (!(p.failures_per_1000_node_days > 0) || !(p.busy_mean_h > 0) || !(p.idle_mean_h > 0)) {
    return bad("the failure rate and the busy and idle means must be > 0");
  }
  if (p.kinds.empty() || p.suite.empty()) return bad("kinds and the suite must not be empty");
  double shares = 0;
  for (const SimKind& k : p.kinds) shares += k.share;
  if (!(shares > 0) || !std::isfinite(shares)) return bad("the kinds' shares must sum above 0");
  for (const SimBenchmark& b : p.suite) {
    for (const auto& sensitivity : b.sensitivity) {
      // Not a structured binding: clang 14 cannot capture one in a lambda.
      const std::string& kind = sensitivity.first;
      const bool known = std::any_of(p.kinds.begin(), p.kinds.end(),
                                     [&](const SimKind& k) { return k.name == kind; });
      if (!known) return bad(fmt::format("benchmark {} names an unknown kind {}", b.name, kind));
    }
  }
  return Status::Ok();
}

std::string_view PolicyName(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::kNone:
      return "none";
    case PolicyKind::kWeekly:
      return "weekly";
    case PolicyKind::kBeforeJob:
      return "before-job";
    case PolicyKind::kRandomSubset:
      return "random-subset";
    case PolicyKind::kSelector:
      return "selector";
  }
  return "?";
}

Result<SimOutcome> SimulateFleet(const FleetSimParams& params, const PolicyOptions& policy) {
  VIGIL_RETURN_IF_ERROR(Validate(params));
  FleetSim sim(params);
  return sim.Run(policy);
}

Result<History> WeeklyHistory(int nodes, int days, uint64_t seed) {
  FleetSimParams params;
  params.nodes = nodes;
  params.days = days;
  params.seed = seed;
  PolicyOptions weekly;
  weekly.kind = PolicyKind::kWeekly;
  VIGIL_ASSIGN_OR_RETURN(SimOutcome outcome, SimulateFleet(params, weekly));
  return std::move(outcome.history);
}

}  // namespace vigil::select
