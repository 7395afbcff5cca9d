#!/usr/bin/env python3
"""Unit tests of detect_together.py: the jobs it writes and how it tallies a run's alerts.
Python 3, standard library only.

Usage: detect_together_test.py
"""
import csv
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import detect_together as dt  # noqa: E402


class WriteJob(unittest.TestCase):
    def test_the_slow_workers_are_slower_from_the_onset_only(self):
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "job.csv")
            dt.write_job(path, 4, 2, 1.5, 7)
            with open(path) as f:
                rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 4 * dt.SAMPLES)
        times = [float(r["timestamp"]) for r in rows]
        self.assertEqual(times, sorted(times))  # in time order, as detect reads it fastest
        onset = dt.START + dt.INTERVAL * dt.ONSET

        def mean(worker, after):
            v = [float(r["value"]) for r in rows
                 if r["machine"] == worker and (float(r["timestamp"]) >= onset) == after]
            return sum(v) / len(v)

        for worker in ("w0", "w1"):
            self.assertAlmostEqual(mean(worker, True) / mean(worker, False), 1.5, delta=0.03)
        for worker in ("w2", "w3"):
            self.assertAlmostEqual(mean(worker, True) / mean(worker, False), 1.0, delta=0.03)

    def test_a_seed_gives_the_same_job(self):
        with tempfile.TemporaryDirectory() as work:
            a, b = os.path.join(work, "a.csv"), os.path.join(work, "b.csv")
            dt.write_job(a, 3, 1, 1.25, 3)
            dt.write_job(b, 3, 1, 1.25, 3)
            with open(a) as fa, open(b) as fb:
                self.assertEqual(fa.read(), fb.read())


class Tally(unittest.TestCase):
    def test_counts_slow_and_other_workers_named_once_each_and_job_alerts(self):
        alerts = [{"machine": "w0"}, {"machine": "w0"}, {"machine": "w3"}, {"machine": "w12"},
                  {"machine": "*"}]
        self.assertEqual(dt.tally(alerts, 4), (2, 1, 1))
        self.assertEqual(dt.tally([], 4), (0, 0, 0))


if __name__ == "__main__":
    unittest.main()
