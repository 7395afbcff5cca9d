#!/usr/bin/env python3
"""What recall a fleet from eval/fleetgen allows at issue 21's budget of healthy nodes flagged.

An oracle, not a detector: it is told what no validator knows, and is scored with the same scorer
as Vigil and the reference rules (eval/validate_eval.py --bound) to say how much of a recall
target the data itself allows. It knows
  - which nodes are healthy, and each node's class, firmware mode and noise multiplier (truth.jsonl);
  - every defect's shape: which keys a defect of each component moves, and by what share of its
    size (fleetgen's own defect_effects).
From the healthy nodes of each class and mode it reads every key's centre (median) and spread
(1.4826 MAD of the relative deviation). A node's evidence for a defect of component C is the
matched filter of the keys C moves: sum(a_k z_k) / sqrt(sum(a_k^2)), with z_k the key's
relative deviation the worse way over its spread and the node's noise multiplier, and
a_k = w_k / spread_k (w_k: the share of the defect's size that key k moves by). With Gaussian
noise and independent keys that is the most powerful test of a defect of that shape (Neyman-
Pearson); it is not a strict bound where the noise is heavy-tailed or shared between keys
(regimes heavy and correlated), where a test shaped to that noise would do better.

A node is flagged for C where that evidence exceeds one threshold, the smallest that flags at
most --budget of the healthy nodes (those the messy regime left whole) on any component: the
threshold is read from the healthy nodes themselves, in sample, which flatters the oracle. A
component with a measurement that did not come back from a run that failed (its benchmark's
return code not 0; a gross defect fails the run on the component) or did not run is flagged
whatever the threshold, as every rule flags a failed run.

    eval/validate_bound.py --fleet DIR [--budget 0.005] [--out FINDINGS.jsonl]

DIR holds fleetgen's results-summary.jsonl, truth.jsonl and meta.json. Python 3, standard
library only.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'fleetgen'))
import fleetgen  # noqa: E402
import reference_rules  # noqa: E402

MAD_SCALE = 1.4826


def hypotheses(layout, disks):
    """[(component, {key: weight})]: every defect fleetgen can place on a node of this layout,
    each at size 1 (a NIC's twice: over all message sizes and over the large ones only)."""
    out = []

    def add(kind, index, comp, **extra):
        d = {'defect': kind, 'f': 1.0, 'index': index, 'large_only': False}
        d.update(extra)
        w = fleetgen.defect_effects(d, layout)
        if w:
            out.append((comp, w))

    for g in range(fleetgen.NGPU):
        add('slow_gpu', str(g), ('gpu', str(g)))
        add('slow_hbm', str(g), ('hbm', str(g)))
        add('slow_pcie', str(g), ('pcie', str(g)))
        add('kernel_launch', str(g), ('gpu', str(g)))
    for h in range(fleetgen.NHCA):
        add('slow_nic', str(h), ('nic', str(h)))
        add('slow_nic', str(h), ('nic', str(h)), large_only=True)
    for a in range(fleetgen.NGPU):
        for b in range(a + 1, fleetgen.NGPU):
            add('slow_nvlink', '%d-%d' % (a, b), ('nvlink', '%d-%d' % (a, b)))
    for k in range(disks):
        add('slow_disk', str(k), ('disk', str(k)))
    return out


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def numeric(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def group_of(t):
    """A node's class and firmware mode (fleetgen writes them only in the regimes that vary them)."""
    return t.get('class', 'a100'), t.get('mode', 'fw-a')


def evidence(fleet, truth, naming):
    """{node: [(component, evidence)]} over every hypothesis of the node's class."""
    direction = {}
    groups = {}  # (class, mode) -> healthy nodes
    for node, t in truth.items():
        if t.get('healthy') and 'messy' not in t and node in fleet:
            groups.setdefault(group_of(t), []).append(node)
    # Each key's centre and relative spread per (class, mode), from its healthy nodes.
    stats = {}
    for g, nodes in groups.items():
        keys = {}
        for n in nodes:
            for k, v in fleet[n].items():
                if numeric(v) and v > 0:
                    keys.setdefault(k, []).append(v)
        s = {}
        for k, xs in keys.items():
            if len(xs) < 10:
                continue
            c = median(xs)
            spread = MAD_SCALE * median([abs(x / c - 1) for x in xs])
            if spread > 0:
                s[k] = (c, spread)
        stats[g] = s
    hyp = {c: hypotheses(fleetgen.build_layout(naming, c), fleetgen.CLASSES[c]['disks'])
           for c in fleetgen.CLASSES}
    out = {}
    for node, t in truth.items():
        vals = fleet.get(node)
        s = stats.get(group_of(t))
        if vals is None or s is None:
            continue
        noise = t.get('noise_x', 1.0)
        rows = []
        for comp, weights in hyp[group_of(t)[0]]:
            num = den = 0.0
            failed = False  # a key the class reports is absent, its benchmark's run not a success
            for k, w in weights.items():
                v = vals.get(k)
                if k in s and v is None:
                    failed |= vals.get(k.rsplit('/', 1)[0] + '/return_code') != 0
                if k not in s or not numeric(v) or v <= 0:
                    continue
                if k not in direction:
                    direction[k] = fleetgen.classify(k)[2]
                d = direction[k]
                if d == 0:
                    continue
                c, spread = s[k]
                z = (1 - v / c if d > 0 else v / c - 1) / (spread * noise)
                a = w / spread
                num += a * z
                den += a * a
            if failed:
                # Measurements of the component did not come back from a run that failed on it or
                # did not run: every rule reports that, and so does the oracle.
                rows.append((comp, math.inf))
            elif den > 0:
                rows.append((comp, num / math.sqrt(den)))
        out[node] = rows
    return out


def threshold(ev, truth, budget):
    """The smallest evidence that flags at most `budget` of the whole healthy nodes."""
    worst = sorted((max((e for _, e in ev[n]), default=-math.inf) for n, t in truth.items()
                    if t.get('healthy') and 'messy' not in t and n in ev), reverse=True)
    allowed = int(math.floor(budget * len(worst)))
    return worst[allowed] if allowed < len(worst) else -math.inf


class Oracle:
    """One fleet's evidence, read once; its findings at any budget."""

    def __init__(self, fleet_dir):
        fleet = reference_rules.load_fleet(os.path.join(fleet_dir, 'results-summary.jsonl'))
        with open(os.path.join(fleet_dir, 'truth.jsonl')) as f:
            self.truth = {r['node']: r for r in (json.loads(line) for line in f if line.strip())}
        with open(os.path.join(fleet_dir, 'meta.json')) as f:
            naming = json.load(f)['naming']
        self.ev = evidence(fleet, self.truth, naming)

    def findings(self, budget):
        t = threshold(self.ev, self.truth, budget)
        rows = []
        for node in sorted(self.ev):
            comps = sorted({comp for comp, e in self.ev[node] if e > t})
            for kind, index in comps:
                rows.append({'node': node, 'component': {'kind': kind, 'index': index},
                             'keys': []})
        return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--fleet', required=True, help="a fleetgen output directory")
    ap.add_argument('--budget', type=float, default=0.005,
                    help='share of the healthy nodes that may be flagged (issue 21: 0.5%%)')
    ap.add_argument('--out', help='write the findings here as JSON lines (default: stdout)')
    a = ap.parse_args()
    if not 0 <= a.budget < 1:
        ap.error('--budget must lie in [0, 1)')
    rows = Oracle(a.fleet).findings(a.budget)
    f = open(a.out, 'w') if a.out else sys.stdout
    for r in rows:
        f.write(json.dumps(r) + '\n')
    if a.out:
        f.close()


if __name__ == '__main__':
    main()
