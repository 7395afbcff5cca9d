#!/usr/bin/env python3
"""Unit tests of detect_eval.py's scoring: which gradual faults count as never visible, and what
the summary then reports. Python 3, standard library only.

Usage: detect_eval_test.py
"""
import contextlib
import csv
import io
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import detect_eval as de  # noqa: E402

T0 = 1790000000.0


def write(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


class VisibleSeconds(unittest.TestCase):
    def test_a_fault_under_the_visible_size_is_never_visible(self):
        self.assertEqual(de.visible_seconds(T0, 0.09, 100, T0 + 3600, []), 0)

    def test_counts_from_where_the_ramp_reaches_the_visible_size(self):
        # 0.4 at 800 s reaches 0.1 at 200 s: visible from T0+200 to the end at T0+1000.
        self.assertAlmostEqual(de.visible_seconds(T0, 0.4, 800, T0 + 1000, []), 800)

    def test_training_gaps_are_cut_out(self):
        gaps = [(T0 + 300, T0 + 500), (T0 + 900, float("inf"))]
        self.assertAlmostEqual(de.visible_seconds(T0, 0.4, 800, T0 + 1000, gaps), 500)

    def test_a_gap_over_the_whole_span_leaves_nothing(self):
        self.assertEqual(de.visible_seconds(T0, 1.0, 100, T0 + 1000, [(T0, T0 + 2000)]), 0)


class MarkUnseen(unittest.TestCase):
    def job(self, faults, benign):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        write(os.path.join(d, "faults.csv"), ["machine", "onset", "kind", "size", "ramp_s", "gpu"],
              faults)
        write(os.path.join(d, "benign.csv"), ["machine", "start", "end", "kind"],
              [["*", T0, T0 + 50, "job_init"]] + benign)
        labels = [{"machine": m, "onset": float(t), "kind": k, "end": None}
                  for m, t, k, *_ in faults]
        return d, labels

    def test_a_gradual_fault_stopped_by_another_machines_fatal_fault_is_never_visible(self):
        # 0.4 over 800 s reaches 0.1 at +700; the GPU is lost at +740 and the job is down (hang
        # until the watchdog, kill, restart) until the data ends at +1800.
        d, labels = self.job([["a", T0 + 500, "straggler_gradual", 0.4, 800, 1],
                              ["b", T0 + 740, "gpu_lost", 0, 0, 2]],
                             [["*", T0 + 1340, T0 + 1500, "job_killed_by_watchdog"],
                              ["*", T0 + 1500, T0 + 1800, "job_restart_init"]])
        kinds = [l["kind"] for l in de.mark_unseen(d, labels, 0.5)]
        self.assertEqual(kinds, [de.UNSEEN, "gpu_lost"])

    def test_a_gradual_fault_that_trained_a_minute_at_the_visible_size_counts(self):
        d, labels = self.job([["a", T0 + 500, "straggler_gradual", 0.4, 800, 1],
                              ["b", T0 + 761, "gpu_lost", 0, 0, 2]],
                             [["*", T0 + 1361, T0 + 1500, "job_killed_by_watchdog"],
                              ["*", T0 + 1500, T0 + 1800, "job_restart_init"]])
        kinds = [l["kind"] for l in de.mark_unseen(d, labels, 0.5)]
        self.assertEqual(kinds, [de.GRADUAL, "gpu_lost"])

    def test_jobs_without_faults_csv_are_left_alone(self):
        labels = [{"machine": "a", "onset": T0, "kind": de.GRADUAL, "end": None}]
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(de.mark_unseen(d, labels, 1)[0]["kind"], de.GRADUAL)


class Summary(unittest.TestCase):
    def test_recall_over_visible_faults_is_reported_beside_the_whole(self):
        labels = [{"machine": "a", "onset": T0, "kind": de.UNSEEN, "end": None},
                  {"machine": "b", "onset": T0, "kind": "straggler", "end": None}]
        alerts = [{"machine": "b", "kind": "divergence", "detected": T0 + 30, "evidence": []}]
        s = de.score(alerts, labels, 2, 1.0)
        line = de.summary_line("job", s)
        self.assertIn("recall 0.500 (1/2)", line)
        self.assertIn("visible size 1.000 (1/1); never visible 1, 0 of them found", line)

    def test_the_divergence_faults_median_pools_the_kinds_that_begin_at_full_size(self):
        s = {"by_kind": {
            "straggler": {"faults": 2, "hits": 2, "latencies": [30.0, 70.0]},
            "host_slow": {"faults": 2, "hits": 1, "latencies": [50.0]},
            "straggler_gradual": {"faults": 1, "hits": 1, "latencies": [900.0]},
            "gpu_lost": {"faults": 1, "hits": 1, "latencies": [4.0]}}}
        last = de.kind_table(s).splitlines()[-1]
        self.assertIn("divergence faults together", last)
        self.assertIn("3/4", last)
        self.assertIn("median    50 s", last)
        # Runs scored before the training column existed print their latencies there too.
        self.assertIn("(in training:    50 s,    70 s)", last)

    def test_a_hit_counts_the_time_the_job_trained_beside_the_time_from_onset(self):
        # A straggler from +0, another machine's fatal fault stops the job from +30 until its
        # restart ends at +800 (its hang, the kill and the restart overlap), named at +860.
        labels = [{"machine": "a", "onset": T0, "kind": "straggler", "end": None}]
        alerts = [{"machine": "a", "kind": "divergence", "detected": T0 + 860, "evidence": []}]
        gaps = [(T0 + 30, T0 + 630), (T0 + 600, T0 + 700), (T0 + 700, T0 + 800)]
        k = de.score(alerts, labels, 1, 1.0, gaps)["by_kind"]["straggler"]
        self.assertEqual(k["latencies"], [860.0])
        self.assertEqual(k["training"], [90.0])
        self.assertIn("median   860 s  p95   860 s  (in training:    90 s,    90 s)",
                      de.kind_table({"by_kind": {"straggler": k}}))


class AlertsKept(unittest.TestCase):
    LABELS = [{"machine": "b", "onset": T0, "kind": "straggler", "end": None},
              {"machine": "c", "onset": T0, "kind": "machine_down", "end": None}]
    ALERTS = [{"machine": "a", "kind": "divergence", "rule": "peers", "onset": T0 + 1,
               "detected": T0 + 60, "evidence": []},
              {"machine": "b", "kind": "divergence", "rule": "peers", "onset": T0 + 2,
               "detected": T0 + 61, "evidence": []},
              {"machine": "c", "kind": "divergence", "rule": "peers", "onset": T0 + 3,
               "detected": T0 + 62, "evidence": []},
              {"machine": "*", "kind": "job", "rule": "shared", "onset": T0 + 4,
               "detected": T0 + 63, "evidence": []}]

    def run_of(self, alerts, name="job"):
        s = de.score(alerts, self.LABELS, 3, 1.0)
        s["name"], s["flags"] = name, ["--seed", "1"]
        return s

    def test_each_alert_is_kept_with_how_it_scored(self):
        kept = {x[0]: x for x in self.run_of(self.ALERTS)["alert_list"]}
        self.assertEqual(kept["a"], ["a", "divergence", "peers", T0 + 1, T0 + 60, "false"])
        self.assertEqual(kept["b"][-1], "hit")
        self.assertEqual(kept["c"][-1], "coincidental")  # a divergence is not a machine down
        self.assertEqual(kept["*"][-1], "job")

    def test_compare_names_the_alerts_only_one_run_has(self):
        before = [self.run_of(self.ALERTS), self.run_of(self.ALERTS, "other")]
        after = [self.run_of(self.ALERTS[1:]), self.run_of(self.ALERTS, "other")]
        lines = de.compare(before, after)
        self.assertEqual(len(lines), 2)
        self.assertEqual(lines[0], "job --seed 1:")
        self.assertIn("  - ('a', 'divergence', 'peers'", lines[1])
        self.assertIn("'false')", lines[1])
        self.assertEqual(de.compare(before, before), [])

    def test_a_report_of_field_runs_only_prints_them(self):
        # --jobs matching no generated job runs the field data only: no generated total to print.
        field = self.run_of(self.ALERTS, "field pai_job1.csv")
        del field["flags"]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            de.report([field])
        self.assertNotIn("all generated jobs", out.getvalue())
        self.assertIn("field pai_job1.csv", out.getvalue())

    def test_compare_counts_where_a_run_kept_no_alerts_and_names_unmatched_jobs(self):
        old = self.run_of(self.ALERTS)
        del old["alert_list"]
        lines = de.compare([old], [self.run_of(self.ALERTS[1:]), self.run_of([], "new")])
        self.assertEqual(lines, ["job --seed 1:", "  alerts: 3 -> 2", "  false: 1 -> 0",
                                 "new --seed 1: only in the second run"])


class BenignUnions(unittest.TestCase):
    """One host's benign events joined into one deviation (88,200's two clock dips of 40 and 50 s,
    75 s together, were named at the second's end)."""

    def unions(self, benign, interval=5):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "benign.csv"), ["machine", "start", "end", "kind"],
                  [["*", T0, T0 + 50, "job_init"]] + benign)
            return de.benign_unions(d, interval)

    def scored(self, benign, signal="step_time", detected=T0 + 958, interval=5):
        alert = {"machine": "a", "kind": "divergence", "rule": "peers", "onset": T0 + 890,
                 "detected": detected, "evidence": [{"signal": signal}]}
        s = de.score([alert], [], 2, 1.0, (), self.unions(benign, interval), interval)
        return s["alert_list"][0][-1], s

    DIPS = [["a", T0 + 882, T0 + 922, "gpu_clock_dip:gpu0"],
            ["a", T0 + 907.5, T0 + 957, "gpu_clock_dip:gpu6"]]

    def test_two_overlapping_dips_longer_than_the_persistence_are_a_benign_union(self):
        verdict, s = self.scored(self.DIPS)
        self.assertEqual(verdict, "benign_union")
        self.assertEqual((s["alerts"], s["false"], s["benign_unions"]), (0, 0, 1))
        self.assertIn("(+0 job, +1 benign union)", de.summary_line("job", s))

    def test_one_event_within_the_persistence_is_a_false_alert(self):
        self.assertEqual(self.scored(self.DIPS[1:])[0], "false")

    def test_a_signal_the_events_do_not_move_is_a_false_alert(self):
        self.assertEqual(self.scored(self.DIPS, signal="net_rx_bytes")[0], "false")

    def test_an_alert_long_after_the_union_ended_is_a_false_alert(self):
        self.assertEqual(self.scored(self.DIPS, detected=T0 + 1000)[0], "false")

    def test_a_scrape_interval_of_training_between_events_parts_them(self):
        parted = [["a", T0 + 882, T0 + 922, "gpu_clock_dip:gpu0"],
                  ["b", T0 + 900, T0 + 990, "gpu_clock_dip:gpu0"],
                  ["a", T0 + 927, T0 + 957, "noisy_neighbour"]]
        self.assertEqual(self.scored(parted)[0], "false")
        self.assertEqual(self.scored(parted, interval=10)[0], "benign_union")

    def test_a_job_wide_stop_between_events_joins_them_and_counts_nothing(self):
        # Two noisy neighbours of 35 s with a checkpoint of 100 s between them: 70 s of training.
        events = [["a", T0 + 800, T0 + 835, "noisy_neighbour"],
                  ["*", T0 + 836, T0 + 936, "checkpoint"],
                  ["a", T0 + 937, T0 + 972, "noisy_neighbour"]]
        self.assertEqual(self.unions(events)[("a", "step_time")], [(T0 + 800, T0 + 972, 70)])
        self.assertEqual(self.scored(events, detected=T0 + 975)[0], "benign_union")

    def test_a_signal_with_a_longer_persistence_needs_a_longer_union(self):
        crons = [["a", T0 + 800, T0 + 860, "cron_cpu_busy"],
                 ["a", T0 + 861, T0 + 921, "cron_cpu_busy"]]
        self.assertEqual(self.scored(crons, signal="cpu_idle", detected=T0 + 921)[0], "false")
        crons.append(["a", T0 + 921, T0 + 951, "cron_cpu_busy"])
        self.assertEqual(self.scored(crons, signal="cpu_idle", detected=T0 + 951)[0],
                         "benign_union")


class TrainingGaps(unittest.TestCase):
    def gaps(self, benign, labels):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "benign.csv"), ["machine", "start", "end", "kind"], benign)
            return sorted(de.training_gaps(d, labels))

    def test_every_job_wide_pause_is_a_gap_and_no_single_machine_event_or_instant(self):
        # jobgen's seed 116,002 at 5 s: a collective hang, then an evaluation 5 s after a
        # straggler began; a batch-size ramp is an instant, a noisy neighbour one machine's.
        benign = [["*", T0, T0 + 56, "job_init"],
                  ["*", T0 + 758, T0 + 758, "batch_size_ramp"],
                  ["*", T0 + 805, T0 + 1078, "collective_hang"],
                  ["a", T0 + 1057, T0 + 1078, "noisy_neighbour"],
                  ["*", T0 + 1084, T0 + 1169, "evaluation"],
                  ["*", T0 + 1921, T0 + 1971, "checkpoint"],
                  ["*", T0 + 2100, T0 + 2130, "dataloader_stall"]]
        self.assertEqual(self.gaps(benign, []),
                         [(T0, T0 + 56), (T0 + 805, T0 + 1078), (T0 + 1084, T0 + 1169),
                          (T0 + 1921, T0 + 1971), (T0 + 2100, T0 + 2130)])
        # Named 151 s after its onset at +1079: 5 s before the evaluation, 60 s after it.
        self.assertEqual(de.seconds_training(T0 + 1079, T0 + 1230, self.gaps(benign, [])), 66)

    def test_a_fatal_faults_hang_lasts_until_the_watchdogs_kill(self):
        benign = [["*", T0, T0 + 50, "job_init"],
                  ["*", T0 + 400, T0 + 460, "checkpoint"],
                  ["*", T0 + 1340, T0 + 1500, "job_killed_by_watchdog"],
                  ["*", T0 + 1500, T0 + 1800, "job_restart_init"]]
        labels = [{"machine": "b", "onset": T0 + 740, "kind": "gpu_lost", "end": None},
                  {"machine": "c", "onset": T0 + 2000, "kind": "hang", "end": None}]
        self.assertIn((T0 + 740, T0 + 1340), self.gaps(benign, labels))
        self.assertIn((T0 + 2000, float("inf")), self.gaps(benign, labels))


class SecondsTraining(unittest.TestCase):
    def test_overlapping_gaps_count_once_and_only_within_the_span(self):
        # 330 s, of which 80 + 50 stopped.
        gaps = [(T0 + 50, T0 + 150), (T0 + 100, T0 + 200), (T0 + 400, float("inf"))]
        self.assertEqual(de.seconds_training(T0 + 120, T0 + 450, gaps), 330 - (80 + 50))

    def test_no_gaps_all_of_it(self):
        self.assertEqual(de.seconds_training(T0, T0 + 100, []), 100)


if __name__ == "__main__":
    unittest.main()
