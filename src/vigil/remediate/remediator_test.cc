#include "vigil/remediate/remediator.h"

#include <gtest/gtest.h>

#include <memory>

#include "vigil/remediate/fake_backend.h"

namespace vigil::remediate {
namespace {

Policy Enforcing() {
  Policy p;
  p.mode = Mode::kEnforce;
  p.rate_actions = 1000;
  p.on[1] = Action::kDrain;  // critical alerts too
  return p;
}

Event Defective(const std::string& node) {
  return Event{Trigger::kDefective, node, "vigil: GPU 3 gpu-gemm/fp16 30% below the fleet"};
}

Event Passing(const std::string& node) { return Event{Trigger::kPassingValidation, node, ""}; }

class RemediatorTest : public ::testing::Test {
 protected:
  // A remediator over a fleet of `nodes` with a fake backend that knows them too.
  void Make(Policy policy, size_t nodes = 40, bool knows_drains = true) {
    auto backend = std::make_unique<FakeBackend>(nodes, knows_drains);
    backend_ = backend.get();
    remediator_ = std::make_unique<Remediator>(std::move(policy), std::move(backend), log_, clock_,
                                               [nodes] { return nodes; });
  }

  std::vector<std::string> Outcomes() const {
    std::vector<std::string> out;
    for (const AuditRecord& r : log_.All()) {
      out.push_back(fmt::format("{} {} {}{}", ActionName(r.action), r.node, OutcomeName(r.outcome),
                                r.attempt > 0 ? fmt::format(" #{}", r.attempt) : ""));
    }
    return out;
  }

  FakeClock clock_{1.8e9};
  MemoryAuditLog log_;
  FakeBackend* backend_ = nullptr;
  std::unique_ptr<Remediator> remediator_;
};

TEST_F(RemediatorTest, DryRunRecordsEveryDecisionButNeverCallsTheBackend) {
  Make(Policy{});
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kDryRun);
  EXPECT_EQ(remediator_->Decide(Passing("n1")), Outcome::kDryRun);
  EXPECT_EQ(remediator_->Decide(Passing("n2")), std::nullopt);  // not drained: nothing to do
  EXPECT_EQ(remediator_->Decide(Event{Trigger::kCriticalAlert, "n3", "x"}), std::nullopt);
  EXPECT_EQ(remediator_->RunDueForTest(), 0u);
  EXPECT_TRUE(backend_->calls().empty());
  EXPECT_EQ(Outcomes(), (std::vector<std::string>{"drain n1 dry-run", "resume n1 dry-run"}));
  const std::vector<AuditRecord> all = log_.All();
  EXPECT_EQ(all[0].reason, "vigil: GPU 3 gpu-gemm/fp16 30% below the fleet");
  EXPECT_EQ(all[0].trigger, Trigger::kDefective);
  EXPECT_DOUBLE_EQ(all[0].time, 1.8e9);
  const RemediationStatus s = remediator_->Snapshot();
  EXPECT_EQ((s.decisions.at({Action::kDrain, Outcome::kDryRun})), 1);
}

TEST_F(RemediatorTest, EnforceQueuesAndTheWorkerDrainsWithTheReason) {
  Make(Enforcing());
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kQueued);
  EXPECT_TRUE(backend_->calls().empty());  // Decide never calls the backend
  EXPECT_EQ(remediator_->RunDueForTest(), 1u);
  EXPECT_EQ(backend_->drained().at("n1"), "vigil: GPU 3 gpu-gemm/fp16 30% below the fleet");
  EXPECT_EQ(Outcomes(), (std::vector<std::string>{"drain n1 queued", "drain n1 acted #1"}));
  EXPECT_EQ(log_.All()[1].command, "fake drain n1");
  EXPECT_EQ(remediator_->Snapshot().drained, std::vector<std::string>{"n1"});
}

TEST_F(RemediatorTest, TheBreakerOpensAtTheLimitAndStaysOpenUntilReset) {
  Make(Enforcing(), 40);  // 5% of 40: 2 nodes
  EXPECT_EQ(remediator_->Snapshot().limit, 2u);
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kQueued);
  EXPECT_EQ(remediator_->Decide(Defective("n2")), Outcome::kQueued);
  // Queued drains count: a burst cannot queue past the limit.
  EXPECT_EQ(remediator_->Decide(Defective("n3")), Outcome::kBreakerOpen);
  remediator_->RunDueForTest();
  EXPECT_EQ(backend_->drained().size(), 2u);
  EXPECT_TRUE(remediator_->Snapshot().breaker_open);
  EXPECT_EQ(remediator_->Decide(Event{Trigger::kCriticalAlert, "n4", "vigil: gpu4 xid 79"}),
            Outcome::kBreakerOpen);
  // One record when it opens, not one per refusal.
  const std::vector<std::string> outcomes = Outcomes();
  EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), "breaker n3 opened"), 1);

  // Resumes still run; the breaker stays open with room under the limit.
  EXPECT_EQ(remediator_->Decide(Passing("n1")), Outcome::kQueued);
  remediator_->RunDueForTest();
  EXPECT_EQ(backend_->drained().count("n1"), 0u);
  clock_.Advance(7200);
  EXPECT_EQ(remediator_->Decide(Defective("n5")), Outcome::kBreakerOpen);
  EXPECT_EQ(backend_->drained().size(), 1u);

  EXPECT_TRUE(remediator_->ResetBreaker());
  EXPECT_FALSE(remediator_->ResetBreaker());
  EXPECT_FALSE(remediator_->Snapshot().breaker_open);
  EXPECT_EQ(remediator_->Decide(Defective("n5")), Outcome::kQueued);
  remediator_->RunDueForTest();
  EXPECT_EQ(backend_->drained().size(), 2u);
  EXPECT_EQ(remediator_->Decide(Defective("n6")), Outcome::kBreakerOpen);
  EXPECT_EQ(log_.All().back().outcome, Outcome::kBreakerOpen);
  const RemediationStatus s = remediator_->Snapshot();
  EXPECT_EQ((s.decisions.at({Action::kDrain, Outcome::kBreakerOpen})), 4);
  EXPECT_EQ((s.decisions.at({Action::kDrain, Outcome::kActed})), 3);
}

TEST_F(RemediatorTest, SlurmsOwnListingCountsTowardTheBreaker) {
  Make(Enforcing(), 40);
  // Node-local health checks drained two nodes with Vigil's reason; a person drained another.
  backend_->DrainByHand("h1", "vigil: GPU 0 ecc");
  backend_->DrainByHand("h2", "vigil: NIC 1 down");
  backend_->DrainByHand("p1", "fan noise");
  ASSERT_TRUE(remediator_->Restore().ok());
  EXPECT_EQ(remediator_->Snapshot().drained, (std::vector<std::string>{"h1", "h2"}));
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kBreakerOpen);
  EXPECT_TRUE(backend_->calls().empty());
}

TEST_F(RemediatorTest, TheRateLimitCountsActionsInItsWindow) {
  Policy p = Enforcing();
  p.rate_actions = 2;
  p.rate_per_s = 600;
  p.max_drained_share = 1;
  Make(p);
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kQueued);
  clock_.Advance(100);
  EXPECT_EQ(remediator_->Decide(Defective("n2")), Outcome::kQueued);
  clock_.Advance(100);
  EXPECT_EQ(remediator_->Decide(Defective("n3")), Outcome::kRateLimited);
  clock_.Advance(401);  // n1's action left the window
  EXPECT_EQ(remediator_->Decide(Defective("n3")), Outcome::kQueued);
  EXPECT_EQ(remediator_->Decide(Defective("n4")), Outcome::kRateLimited);
}

TEST_F(RemediatorTest, TheSameActionOnTheSameNodeWithinTheDedupeWindowIsADuplicate) {
  Policy p = Enforcing();
  p.dedupe_s = 3600;
  Make(p, 1000);
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kQueued);
  EXPECT_EQ(remediator_->Decide(Event{Trigger::kCriticalAlert, "n1", "x"}), Outcome::kDuplicate);
  remediator_->RunDueForTest();
  EXPECT_EQ(remediator_->Decide(Passing("n1")), Outcome::kQueued);
  remediator_->RunDueForTest();
  clock_.Advance(1800);
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kDuplicate);
  clock_.Advance(1801);
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kQueued);
  EXPECT_EQ(backend_->calls(), (std::vector<std::string>{"drain n1", "resume n1"}));
}

TEST_F(RemediatorTest, AFailingActionIsRetriedWithExponentialBackOffEachAttemptRecorded) {
  Policy p = Enforcing();
  p.retry_initial_s = 30;
  p.retry_max_s = 100;
  p.retry_attempts = 5;
  Make(p);
  backend_->FailNext(10);
  const double t0 = clock_.WallSeconds();
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kQueued);
  std::vector<double> attempts;
  for (int step = 0; step < 400; ++step) {
    const size_t before = log_.All().size();
    remediator_->RunDueForTest();
    if (log_.All().size() > before) attempts.push_back(clock_.WallSeconds() - t0);
    clock_.Advance(1);
  }
  // 30 s, then 60, then 100 (the most), 100: five attempts, the last one fails for good.
  EXPECT_EQ(attempts, (std::vector<double>{0, 30, 90, 190, 290}));
  const std::vector<AuditRecord> all = log_.All();
  ASSERT_EQ(all.size(), 6u);
  for (size_t i = 1; i < 5; ++i) {
    EXPECT_EQ(all[i].outcome, Outcome::kRetrying);
    EXPECT_EQ(all[i].attempt, static_cast<int>(i));
    EXPECT_EQ(all[i].command, "fake drain n1");
    EXPECT_NE(all[i].output.find("connection refused"), std::string::npos) << all[i].output;
  }
  EXPECT_EQ(all[5].outcome, Outcome::kFailed);
  EXPECT_EQ(all[5].attempt, 5);
  EXPECT_TRUE(backend_->drained().empty());
  EXPECT_EQ((remediator_->Snapshot().decisions.at({Action::kDrain, Outcome::kFailed})), 1);
}

TEST_F(RemediatorTest, AnAttemptKeepsAtMostSomeKilobytesOfOutput) {
  // A backend whose command printed a megabyte.
  class Chatty : public FakeBackend {
   public:
    Attempt Drain(std::string_view node, std::string_view reason) override {
      Attempt a = FakeBackend::Drain(node, reason);
      a.output = std::string(1 << 20, 'x');
      return a;
    }
  };
  auto backend = std::make_unique<Chatty>();
  remediator_ = std::make_unique<Remediator>(Enforcing(), std::move(backend), log_, clock_,
                                             [] { return size_t{40}; });
  remediator_->Decide(Defective("n1"));
  remediator_->RunDueForTest();
  EXPECT_LE(log_.All().back().output.size(), kMaxAuditOutput + 10);
}

TEST_F(RemediatorTest, AnActionThatSucceedsOnARetryIsActed) {
  Make(Enforcing());
  backend_->FailNext(1);
  remediator_->Decide(Defective("n1"));
  remediator_->RunDueForTest();
  clock_.Advance(30);
  remediator_->RunDueForTest();
  EXPECT_EQ(Outcomes(), (std::vector<std::string>{"drain n1 queued", "drain n1 retrying #1",
                                                  "drain n1 acted #2"}));
}

TEST_F(RemediatorTest, AResumeOfANodeSomeoneElseDrainedIsRefused) {
  Make(Enforcing());
  remediator_->Decide(Defective("n1"));
  remediator_->RunDueForTest();
  // A person drains the node again with a reason of their own.
  backend_->DrainByHand("n1", "replace GPU 3, ticket 4411");
  EXPECT_EQ(remediator_->Decide(Passing("n1")), Outcome::kQueued);
  remediator_->RunDueForTest();
  EXPECT_EQ(backend_->drained().at("n1"), "replace GPU 3, ticket 4411");
  EXPECT_EQ(log_.All().back().outcome, Outcome::kNotVigils);
  // Not Vigil's any more: a later passing validation does nothing.
  clock_.Advance(7200);
  EXPECT_EQ(remediator_->Decide(Passing("n1")), std::nullopt);
  // A node someone drained that Vigil never held is not even considered.
  backend_->DrainByHand("p2", "maintenance");
  EXPECT_EQ(remediator_->Decide(Passing("p2")), std::nullopt);
  EXPECT_EQ(backend_->drained().at("p2"), "maintenance");
}

TEST_F(RemediatorTest, TheCommandBackendResumesOnlyTheNodesVigilsRecordHolds) {
  Make(Enforcing(), 40, /*knows_drains=*/false);
  EXPECT_EQ(remediator_->Decide(Passing("n1")), std::nullopt);
  remediator_->Decide(Defective("n1"));
  remediator_->RunDueForTest();
  EXPECT_EQ(remediator_->Decide(Passing("n1")), Outcome::kQueued);
  remediator_->RunDueForTest();
  EXPECT_EQ(backend_->calls(), (std::vector<std::string>{"drain n1", "resume n1"}));
}

TEST_F(RemediatorTest, RestoreReadsTheDrainedNodesAndTheBreakerBackFromTheLog) {
  Make(Enforcing(), 40, false);
  remediator_->Decide(Defective("n1"));
  remediator_->Decide(Defective("n2"));
  remediator_->Decide(Defective("n3"));  // opens the breaker
  remediator_->RunDueForTest();
  remediator_.reset();
  Make(Enforcing(), 40, false);
  ASSERT_TRUE(remediator_->Restore().ok());
  const RemediationStatus s = remediator_->Snapshot();
  EXPECT_TRUE(s.breaker_open);
  EXPECT_EQ(s.drained, (std::vector<std::string>{"n1", "n2"}));
}

TEST_F(RemediatorTest, TheWorkerThreadRunsActionsWhileDecideNeverWaitsOnAHungBackend) {
  Make(Enforcing());
  backend_->Hang();
  remediator_->Start();
  EXPECT_EQ(remediator_->Decide(Defective("n1")), Outcome::kQueued);
  EXPECT_EQ(remediator_->Decide(Defective("n2")), Outcome::kQueued);  // n1's call hangs meanwhile
  backend_->Release();
  for (int i = 0; i < 500 && backend_->drained().size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(backend_->drained().size(), 2u);
  remediator_->Stop();
}

TEST(UploadEventTest, ALemonIsDefectiveInEnoughOfItsLatestUploads) {
  Policy p;
  p.on = {std::nullopt, std::nullopt, Action::kDrain, Action::kResume};
  p.lemon_defective = 3;
  p.lemon_uploads = 5;
  using V = Verdict;
  UploadFacts u{"n1",
                V::kDefective,
                true,
                "vigil: GPU 3 hbm",
                {V::kDefective, V::kHealthy, V::kDefective, V::kHealthy, V::kHealthy}};
  EXPECT_EQ(UploadEvent(p, u), std::nullopt);  // 2 of 5, and defective alone does nothing
  u.recent = {V::kDefective, V::kHealthy, V::kDefective, V::kHealthy, V::kDefective};
  const std::optional<Event> e = UploadEvent(p, u);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->trigger, Trigger::kLemon);
  EXPECT_EQ(e->reason, "vigil: GPU 3 hbm (lemon: 3 of the last 5 uploads defective)");
  u.recent.push_back(V::kDefective);  // only the latest 5 count
  u.recent[4] = V::kHealthy;
  EXPECT_EQ(UploadEvent(p, u), std::nullopt);

  p.on[0] = Action::kDrain;
  EXPECT_EQ(UploadEvent(p, u)->trigger, Trigger::kDefective);
  u.verdict = V::kHealthy;
  EXPECT_EQ(UploadEvent(p, u)->trigger, Trigger::kPassingValidation);
  u.validation = false;  // the health check's upload resumes nothing
  EXPECT_EQ(UploadEvent(p, u), std::nullopt);
  u.verdict = V::kUnjudged;
  u.validation = true;
  EXPECT_EQ(UploadEvent(p, u), std::nullopt);
}

TEST(DrainReasonTest, IsOneLineWithVigilsPrefixAndBounded) {
  EXPECT_EQ(DrainReason("GPU 3", "gpu-gemm/fp16 30% below the fleet"),
            "vigil: GPU 3 gpu-gemm/fp16 30% below the fleet");
  EXPECT_EQ(DrainReason("NIC 1", "a\nb"), "vigil: NIC 1 a b");
  EXPECT_EQ(DrainReason("GPU 0", std::string(500, 'x')).size(), kMaxReason);
}

}  // namespace
}  // namespace vigil::remediate
