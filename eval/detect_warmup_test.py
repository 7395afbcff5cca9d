#!/usr/bin/env python3
"""Unit tests of detect_warmup.py: the jobs it writes and how it scores a job's alerts.
Python 3, standard library only.

Usage: detect_warmup_test.py
"""
import csv
import os
import statistics
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import detect_warmup as dw  # noqa: E402


def cpu_job(kind, faulty):
    """The first seed of `kind` whose target's events and fault are on its CPU idle."""
    for seed in dw.KINDS[kind]:
        _, p = dw.make(seed, kind)
        if p["signal"] == "cpu" and (p["fault"] is not None) == faulty:
            return seed, p
    raise AssertionError(f"no {kind} job on the CPU")


class Make(unittest.TestCase):
    def test_a_seed_gives_the_same_job(self):
        self.assertEqual(dw.make(3, "main"), dw.make(3, "main"))
        self.assertNotEqual(dw.make(3, "main")[0], dw.make(4, "main")[0])

    def test_the_targets_cpu_idle_falls_to_the_faults_level_from_its_start(self):
        seed, p = cpu_job("control", True)
        start, level, mode = p["fault"]
        self.assertEqual((start, mode), (1200.0, "late"))
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "job.csv")
            dw.write_job(path, seed, "control")
            with open(path) as f:
                rows = [r for r in csv.DictReader(f)
                        if r["machine"] == p["target"] and r["metric"] == "cpu_idle"]
        times = [float(r["timestamp"]) - dw.T0 for r in rows]
        self.assertEqual(times, sorted(times))

        def mean(lo, hi):
            return statistics.mean(float(r["value"]) for r, t in zip(rows, times) if lo <= t < hi)

        self.assertAlmostEqual(mean(start, p["duration_s"]) / mean(400, start), level, delta=0.02)

    def test_stress_jobs_are_fault_free_with_two_long_events_of_the_target_alone(self):
        for seed in list(dw.KINDS["stress"])[:5]:
            _, p = dw.make(seed, "stress")
            self.assertIsNone(p["fault"])
            self.assertEqual(p["placement"], "unique")
            self.assertEqual(len(p["events"]), 2)
            for start, end, _ in p["events"]:
                self.assertTrue(100 <= start and end <= 320 and 49.9 <= end - start <= 70.1)

    def test_an_eq_fault_begins_in_the_window_at_an_earlier_events_level(self):
        for seed in list(dw.KINDS["eq"])[:5]:
            _, p = dw.make(seed, "eq")
            start, level, mode = p["fault"]
            self.assertEqual(mode, "warm_eq")
            self.assertTrue(100 < start <= 300)
            self.assertIn(level, [e[2] for e in p["events"] if e[0] < start])


class Score(unittest.TestCase):
    JOB = {"kind": "main", "seed": 1, "target": "node-003", "placement": "typical",
           "events": [], "fault": [200.0, 0.6, "warm"], "machines": 20, "duration_s": 3600}

    def test_the_first_alert_on_the_target_from_the_faults_start_is_the_hit(self):
        alerts = [{"machine": "node-003", "onset": 190, "detected": 250},
                  {"machine": "node-003", "onset": 200, "detected": 270},
                  {"machine": "node-007", "onset": 500, "detected": 560},
                  {"machine": "node-003", "onset": 900, "detected": 960}]
        s = dw.score(self.JOB, alerts)
        self.assertEqual(s["hit"]["detected"], 270)
        self.assertEqual(s["delay"], 70)
        self.assertEqual(len(s["before"]), 1)
        self.assertEqual([a["machine"] for a in s["false"]], ["node-007"])

    def test_every_alert_of_a_fault_free_job_is_false(self):
        job = dict(self.JOB, fault=None)
        s = dw.score(job, [{"machine": "node-003", "onset": 600, "detected": 660}])
        self.assertIsNone(s["hit"])
        self.assertEqual(len(s["false"]), 1)

    def test_the_table_counts_misses_and_false_alerts_per_family(self):
        missed = dict(self.JOB, alerts=[])
        found = dict(self.JOB, seed=2, alerts=[{"machine": "node-003", "onset": 210,
                                                "detected": 260}])
        free = dict(self.JOB, seed=3, fault=None, placement="unique",
                    alerts=[{"machine": "node-001", "onset": 600, "detected": 660}])
        lines = dw.table([missed, found, free])
        self.assertIn("| no fault, unique | 1 | - | 0 | 1 | - |", lines)
        self.assertIn("| warm, typical | 2 | 1 of 2 | 0 | 0 | 60 |", lines)
        self.assertEqual(lines[-2], "Jobs 3: faults missed 1 of 2, jobs with a false alert 1 "
                                    "(1 fault-free)")
        # One true alert, one false, over 3 jobs of 20 machines for an hour.
        self.assertEqual(lines[-1], "Precision 0.500, recall 0.500, false alerts 1 "
                                    "(0.0167 per machine-hour over 60)")

    def test_compare_lists_only_the_jobs_whose_alerts_differ(self):
        a = [dict(self.JOB, alerts=[]), dict(self.JOB, seed=2, alerts=[])]
        b = [dict(self.JOB, alerts=[{"machine": "node-003", "rule": "peers", "onset": 210,
                                     "detected": 260}]), dict(self.JOB, seed=2, alerts=[])]
        lines = dw.compare(a, b)
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].startswith("main 1 "))
        self.assertTrue(lines[0].endswith("missed -> named after 60 s"))


if __name__ == "__main__":
    unittest.main()
