#include "vigil/remediate/policy.h"

#include <gtest/gtest.h>

#include <string>

namespace vigil::remediate {
namespace {

std::string ErrorOf(std::string_view text) {
  const Result<Policy> p = ParsePolicy(text, "policy.yaml");
  return p.ok() ? std::string("(parsed)") : p.status().message();
}

TEST(PolicyTest, AnEmptyPolicyIsADryRunThatDrainsDefectiveNodesOnSlurm) {
  const Result<Policy> p = ParsePolicy("", "policy.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->mode, Mode::kDryRun);
  EXPECT_EQ(p->backend, BackendKind::kSlurm);
  EXPECT_EQ(p->ActionFor(Trigger::kDefective), Action::kDrain);
  EXPECT_EQ(p->ActionFor(Trigger::kPassingValidation), Action::kResume);
  EXPECT_FALSE(p->ActionFor(Trigger::kCriticalAlert));
  EXPECT_FALSE(p->ActionFor(Trigger::kLemon));
  EXPECT_DOUBLE_EQ(p->max_drained_share, 0.05);
}

TEST(PolicyTest, EveryFieldIsRead) {
  const Result<Policy> p = ParsePolicy(R"(mode: enforce
backend: command
slurm: {conf: /etc/slurm/slurm.conf, scontrol: /usr/bin/scontrol, timeout: 5s}
command: {argv: ["/usr/local/bin/cordon", "{action}", "{node}", "{reason}"], timeout: 1m}
on:
  defective: drain
  critical_alert: drain
  lemon: none
  passing_validation: resume
lemon: {defective: 2, uploads: 4}
breaker: {max_drained_share: 0.1}
rate_limit: {actions: 3, per: 10m}
dedupe: 2h
retry: {initial: 10s, max: 5m, attempts: 4}
)",
                                       "policy.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->mode, Mode::kEnforce);
  EXPECT_EQ(p->backend, BackendKind::kCommand);
  EXPECT_EQ(p->slurm.conf, "/etc/slurm/slurm.conf");
  EXPECT_EQ(p->slurm.scontrol, "/usr/bin/scontrol");
  EXPECT_DOUBLE_EQ(p->slurm.timeout_s, 5);
  EXPECT_EQ(p->command.argv.size(), 4u);
  EXPECT_EQ(p->command.argv[2], "{node}");
  EXPECT_DOUBLE_EQ(p->command.timeout_s, 60);
  EXPECT_EQ(p->ActionFor(Trigger::kCriticalAlert), Action::kDrain);
  EXPECT_FALSE(p->ActionFor(Trigger::kLemon));
  EXPECT_EQ(p->lemon_defective, 2);
  EXPECT_EQ(p->lemon_uploads, 4);
  EXPECT_DOUBLE_EQ(p->max_drained_share, 0.1);
  EXPECT_EQ(p->rate_actions, 3);
  EXPECT_DOUBLE_EQ(p->rate_per_s, 600);
  EXPECT_DOUBLE_EQ(p->dedupe_s, 7200);
  EXPECT_DOUBLE_EQ(p->retry_initial_s, 10);
  EXPECT_DOUBLE_EQ(p->retry_max_s, 300);
  EXPECT_EQ(p->retry_attempts, 4);
}

TEST(PolicyTest, AnOnMapActsOnlyOnTheTriggersItNames) {
  const Result<Policy> p = ParsePolicy("on: {lemon: drain}\n", "policy.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->ActionFor(Trigger::kLemon), Action::kDrain);
  EXPECT_FALSE(p->ActionFor(Trigger::kDefective));
  EXPECT_FALSE(p->ActionFor(Trigger::kPassingValidation));
}

TEST(PolicyTest, ErrorsNameTheLineAndTheField) {
  EXPECT_EQ(ErrorOf("mode: dry-run\n\n\nbackend: slurmm\n"),
            "policy.yaml:4: backend: \"slurmm\" is not one of slurm, command");
  EXPECT_EQ(ErrorOf("mode: enforce\nmodes: x\n"),
            "policy.yaml:2: modes: unknown key (expected one of mode, backend, slurm, command, "
            "on, lemon, breaker, rate_limit, dedupe, retry)");
  EXPECT_EQ(ErrorOf("retry:\n  initial: 30s\n  attempt: 3\n"),
            "policy.yaml:3: retry.attempt: unknown key (expected one of initial, max, attempts)");
  EXPECT_EQ(ErrorOf("breaker: {max_drained_share: 1.5}\n"),
            "policy.yaml:1: breaker.max_drained_share: 1.5 is out of range (0 to 1)");
  EXPECT_EQ(ErrorOf("dedupe: soon\n"),
            "policy.yaml:1: dedupe: bad duration \"soon\": expected a non-negative number with "
            "a unit such as 90s, 5m, 2h or 1d");
  EXPECT_EQ(ErrorOf("on:\n  defective: resume\n"),
            "policy.yaml:2: on.defective: \"resume\" is not one of drain, none");
  EXPECT_EQ(ErrorOf("backend: command\n"),
            "policy.yaml:1: command.argv: the command backend needs the program to run");
  EXPECT_EQ(ErrorOf("lemon: {defective: 6, uploads: 5}\n"),
            "policy.yaml:1: lemon.defective: 6 is more than lemon.uploads (5)");
  EXPECT_EQ(ErrorOf("rate_limit: {actions: 2.5}\n"),
            "policy.yaml:1: rate_limit.actions: expected a whole number, got 2.5");
  EXPECT_EQ(ErrorOf("retry: {initial: 1m, max: 10s}\n"),
            "policy.yaml:1: retry.max: 10 s is shorter than retry.initial (1 min)");
  EXPECT_EQ(ErrorOf("- mode\n"), "policy.yaml:1: policy: expected a mapping of keys to values");
  EXPECT_EQ(ErrorOf("command:\n  argv: []\n"),
            "policy.yaml:2: command.argv: expected a list of the program and its arguments");
  const std::string bad = ErrorOf("mode: [enforce\n");
  EXPECT_EQ(bad.rfind("policy.yaml:", 0), 0u) << bad;
  EXPECT_NE(bad.find("not valid YAML"), std::string::npos) << bad;
}

}  // namespace
}  // namespace vigil::remediate
