#!/usr/bin/env python3
"""Unit tests of validate_bound.py, the oracle that says what recall a fleetgen fleet allows at a
budget of healthy nodes flagged. Python 3, standard library only.

Usage: validate_bound_test.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, 'fleetgen'))
import reference_rules  # noqa: E402
import validate_bound as vb  # noqa: E402


def generate(out, regime, sizes, seed=3):
    subprocess.run([sys.executable, os.path.join(HERE, 'fleetgen', 'fleetgen.py'), '--nodes', '400',
                    '--seed', str(seed), '--regime', regime, '--defect-rate', '0.1', '--sizes',
                    sizes, '--out', out], check=True, capture_output=True)


def truth_of(fleet_dir):
    with open(os.path.join(fleet_dir, 'truth.jsonl')) as f:
        return [json.loads(line) for line in f if line.strip()]


class Bound(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix='validate_bound_test.')
        cls.clean = os.path.join(cls.dir, 'clean')
        generate(cls.clean, 'clean', '3,12')
        cls.oracle = vb.Oracle(cls.clean)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_flags_no_more_healthy_nodes_than_the_budget(self):
        truth = truth_of(self.clean)
        healthy = sum(1 for t in truth if t['healthy'])
        for budget in (0.0, 0.005, 0.02):
            s = reference_rules.score(truth, self.oracle.findings(budget))
            self.assertLessEqual(s['healthy_flagged'], int(budget * healthy), budget)
        # A budget of nothing sets the threshold at the most suspect healthy node's evidence.
        self.assertEqual(reference_rules.score(truth, self.oracle.findings(0.0))[
            'healthy_flagged'], 0)

    def test_a_defect_of_a_known_shape_and_size_four_times_the_noise_is_found_and_named(self):
        # Clean noise: 12% is several spreads of every key it moves, 3% about one.
        s = reference_rules.score(truth_of(self.clean), self.oracle.findings(0.005))
        self.assertGreaterEqual(s['by_size']['12']['recall'], 0.9)
        self.assertGreaterEqual(s['by_size']['12']['right_component_rate'], 0.9)
        self.assertLess(s['by_size']['3']['recall'], s['by_size']['12']['recall'])

    def test_a_component_whose_measurements_did_not_come_back_is_flagged(self):
        # Gross defects fail their benchmark's run on the component (its keys absent): found and
        # named, as every rule reports a failed run; before, the oracle read no evidence there.
        d = os.path.join(self.dir, 'gross')
        generate(d, 'clean', 'gross')
        truth = truth_of(d)
        failed = [t for t in truth if t.get('failed')]
        self.assertTrue(failed)
        s = reference_rules.score(truth, vb.Oracle(d).findings(0.005))
        self.assertEqual(s['by_size']['gross']['recall'], 1.0)
        self.assertEqual(s['by_size']['gross']['right_component_rate'], 1.0)

    def test_every_component_a_defect_can_hit_has_a_hypothesis(self):
        import fleetgen
        for cls, spec in fleetgen.CLASSES.items():
            comps = {c for c, _ in vb.hypotheses(fleetgen.build_layout('current', cls),
                                                 spec['disks'])}
            self.assertEqual(len([c for c in comps if c[0] == 'nvlink']), 28, cls)
            self.assertEqual(len([c for c in comps if c[0] == 'disk']), spec['disks'], cls)
            for kind in ('gpu', 'hbm', 'pcie', 'nic'):
                self.assertEqual(len([c for c in comps if c[0] == kind]), 8, (cls, kind))

    def test_a_node_moved_the_way_a_defect_moves_it_has_the_evidence_of_its_size(self):
        # Every node within 2% of one value (its MAD 1%: a spread of 1.48%), one node's HBM 4
        # keys 10% slow: 6.7 spreads on each of its two keys make 9.5 (sqrt(2) x 6.7); a healthy
        # node's 2% on both at most 1.9.
        import fleetgen
        layout = fleetgen.build_layout('current', 'a100')
        hbm = dict(vb.hypotheses(layout, 4))[('hbm', '4')]
        fleet, truth = {}, {}
        for i in range(40):
            node = 'n%02d' % i
            vals = {k: 100.0 * (1 + 0.01 * (i % 5 - 2)) for k in hbm}
            if i == 7:
                vals = {k: v * (1 - 0.1 * w) for (k, v), w in zip(vals.items(), hbm.values())}
            fleet[node] = vals
            truth[node] = {'node': node, 'healthy': i != 7, 'class': 'a100', 'mode': 'fw-a'}
        ev = vb.evidence(fleet, truth, 'current')
        hbm4 = {n: e for n, rows in ev.items() for c, e in rows if c == ('hbm', '4')}
        self.assertAlmostEqual(hbm4['n07'], 0.1 / (vb.MAD_SCALE * 0.01) * 2 ** 0.5, places=3)
        self.assertLess(max(abs(e) for n, e in hbm4.items() if n != 'n07'), 2)

    def test_vigils_operating_point_is_its_share_of_healthy_nodes_flagged_aside_runs(self):
        import validate_eval
        s = {'healthy': 100, 'healthy_flagged': 5,
             'healthy_flagged_by_tag': {'messy=failed': {'healthy': 6, 'flagged': 3},
                                        'messy=missing': {'healthy': 4, 'flagged': 0},
                                        'messy=extra': {'healthy': 5, 'flagged': 1}}}
        self.assertAlmostEqual(validate_eval.flagged_aside_share(s), 2 / 90)

    def test_a_defect_kind_is_told_the_reach_of_what_it_moves(self):
        import validate_eval
        reach = [
            {'benchmark': 'kernel-launch', 'part': 'GPU 0', 'slowdown': 0.082},
            {'benchmark': 'gemm-flops', 'part': 'GPU 0', 'slowdown': 0.006},
            {'benchmark': 'mem-bw', 'part': 'HBM 0', 'slowdown': None},
            {'benchmark': 'gpu-copy-bw', 'part': 'HBM 0', 'slowdown': 0.042},
            {'benchmark': '', 'part': 'HBM 0', 'slowdown': 0.014},
            {'benchmark': 'disk-benchmark', 'part': 'disk nvme0n1', 'slowdown': None},
        ]
        truth = [
            {'node': 'a', 'healthy': True},
            {'node': 'b', 'defect': 'kernel_launch', 'size_pct': 8,
             'component': {'kind': 'gpu', 'index': '3'},
             'keys': ['kernel-launch/event_overhead:3', 'kernel-launch/wall_overhead:3']},
            {'node': 'c', 'defect': 'slow_hbm', 'size_pct': 5,
             'component': {'kind': 'hbm', 'index': '1'},
             'keys': ['mem-bw/d2d_bw:1', 'gpu-copy-bw/gpu1_to_gpu1_write_by_sm_bw']},
            {'node': 'd', 'defect': 'slow_hbm', 'size_pct': None,
             'component': {'kind': 'hbm', 'index': '2'}, 'keys': ['mem-bw/d2d_bw:2']},
            {'node': 'e', 'defect': 'slow_disk', 'size_pct': 8,
             'component': {'kind': 'disk', 'index': '0'},
             'keys': ['disk-benchmark/nvme0n1_rand_read_write_read_iops']},
            {'node': 'f', 'defect': 'slow_nic', 'size_pct': 8,
             'component': {'kind': 'nic', 'index': '0'}, 'keys': ['ib-loopback/ib_write_bw_8:0']},
        ]
        # Its one benchmark's row of its kind of part; of several benchmarks, the one of them (or
        # across them) that flags the smallest slowdown; a row that flags none where it is all.
        self.assertEqual(validate_eval.reach_of_kind(reach, truth, 'kernel_launch')['slowdown'],
                         0.082)
        self.assertEqual(validate_eval.reach_of_kind(reach, truth, 'slow_hbm')['slowdown'], 0.014)
        self.assertIsNone(validate_eval.reach_of_kind(reach, truth, 'slow_disk')['slowdown'])
        self.assertIsNone(validate_eval.reach_of_kind(reach, truth, 'slow_nic'))
        found = [{'node': 'b'}, {'node': 'b'}, {'node': 'd'}, {'node': 'a'}]
        self.assertEqual(validate_eval.recall_by_kind_and_size(truth, found), {
            'kernel_launch': {'8': [1, 1]}, 'slow_hbm': {'5': [0, 1], 'gross': [1, 1]},
            'slow_disk': {'8': [0, 1]}, 'slow_nic': {'8': [0, 1]}})

    def test_a_budget_outside_zero_to_one_is_refused(self):
        r = subprocess.run([sys.executable, os.path.join(HERE, 'validate_bound.py'), '--fleet',
                            self.clean, '--budget', '1.5'], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn('--budget', r.stderr)


if __name__ == '__main__':
    unittest.main()
