#!/usr/bin/env python3
"""Three reference rules that judge a SuperBench fleet file, and a scorer (eval/fleetgen/README.md).

  reference_rules.py --fleet results-summary.jsonl --rule superbench|mad|iqr --out findings.jsonl
  reference_rules.py score --truth truth.jsonl --findings findings.jsonl [--json]

Findings: one line per (node, component) flagged:
  {"node": ..., "component": {"kind": ..., "index": ...}, "keys": [...]}
Standard library only.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleetgen import classify  # noqa: E402  (the naming table: component and direction of a key)

MAD_K = 3.5
MAD_SCALE = 1.4826
EPS = 1e-12


def load_fleet(path):
    """{node: {key: value}}; a node listed twice keeps its later (newer) line."""
    fleet = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            d = json.loads(line)
            node = d.pop('node')
            fleet[node] = d
    return fleet


def columns(fleet):
    cols = {}
    for node, vals in fleet.items():
        for k, v in vals.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                cols.setdefault(k, []).append(v)
    return cols


def quantile(xs, q):
    """Linear interpolation between order statistics (numpy's default)."""
    n = len(xs)
    if n == 1:
        return xs[0]
    p = (n - 1) * q
    i = int(p)
    if i >= n - 1:
        return xs[-1]
    return xs[i] + (xs[i + 1] - xs[i]) * (p - i)


def thresholds(fleet, rule):
    """{key: (direction, low, high)}: a value is flagged below low (higher is better) or above
    high (lower is better)."""
    out = {}
    for k, xs in columns(fleet).items():
        _, _, d = classify(k)
        if k.endswith('/return_code'):
            out[k] = (-1, None, 0)
            continue
        if d == 0:
            continue
        xs.sort()
        if rule == 'superbench':
            mean = sum(xs) / len(xs)
            out[k] = (d, mean * 0.9, mean * 1.1)
        elif rule == 'mad':
            med = quantile(xs, 0.5)
            mad = quantile(sorted(abs(x - med) for x in xs), 0.5)
            w = MAD_K * MAD_SCALE * max(mad, EPS)
            out[k] = (d, med - w, med + w)
        else:
            q1, q3 = quantile(xs, 0.25), quantile(xs, 0.75)
            iqr = q3 - q1
            out[k] = (d, q1 - 1.5 * iqr, q3 + 1.5 * iqr)
    return out


def judge(fleet, rule):
    th = thresholds(fleet, rule)
    present = {}
    if rule == 'superbench':
        for vals in fleet.values():
            for k in vals:
                present[k] = present.get(k, 0) + 1
    common = [k for k, c in present.items() if c > len(fleet) / 2]
    findings = []
    for node in sorted(fleet):
        vals = fleet[node]
        flagged = {}
        for k, v in vals.items():
            t = th.get(k)
            if t is None or not isinstance(v, (int, float)):
                continue
            d, lo, hi = t
            bad = (v < lo) if d > 0 else (v > hi)
            if bad:
                kind, idx, _ = classify(k)
                flagged.setdefault((kind, idx), []).append(k)
        if rule == 'superbench':
            for k in common:
                if k not in vals:
                    kind, idx, _ = classify(k)
                    flagged.setdefault((kind, idx), []).append(k)
        for (kind, idx), keys in sorted(flagged.items()):
            findings.append({'node': node, 'component': {'kind': kind, 'index': idx}, 'keys': keys})
    return findings


# ----------------------------------------------------------------------------------------------
# Scorer
# ----------------------------------------------------------------------------------------------

def norm_comp(c):
    kind, idx = c.get('kind', ''), str(c.get('index', ''))
    if '-' in idx:
        a, b = idx.split('-', 1)
        try:
            a, b = sorted((int(a), int(b)))
            idx = '%d-%d' % (a, b)
        except ValueError:
            pass
    return kind, idx


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def score(truth_rows, finding_rows):
    truth = {}
    for t in truth_rows:
        truth[t['node']] = t
    found = {}
    for f in finding_rows:
        found.setdefault(f['node'], set()).add(norm_comp(f.get('component', {})))
    healthy = [n for n, t in truth.items() if t.get('healthy')]
    bad = [n for n, t in truth.items() if not t.get('healthy')]
    fp = [n for n in healthy if n in found]
    unknown = [n for n in found if n not in truth]

    def stats(defects):
        tp = [n for n in defects if n in found]
        right = [n for n in tp if norm_comp(truth[n]['component']) in found[n]]
        nfp = len(fp) + len(unknown)
        prec = len(tp) / (len(tp) + nfp) if tp or nfp else None
        rec = len(tp) / len(defects) if defects else None
        f1 = (2 * prec * rec / (prec + rec)) if prec and rec else (0.0 if defects else None)
        return {'defects': len(defects), 'found': len(tp), 'right_component': len(right),
                'precision': prec, 'recall': rec,
                'right_component_rate': len(right) / len(tp) if tp else None, 'f1': f1}

    bysize = {}
    for n in bad:
        s = truth[n].get('size_pct')
        bysize.setdefault('gross' if s is None else str(s), []).append(n)
    bykind = {}
    for n in bad:
        bykind.setdefault(truth[n].get('defect', '?'), []).append(n)
    bynoise = {}  # the node's noise level (regimes heavy and all): small defects hide in it
    for n in bad:
        bynoise.setdefault('x%g' % truth[n].get('noise_x', 1), []).append(n)
    out = {'nodes': len(truth), 'healthy': len(healthy),
           'healthy_flagged': len(fp),
           'healthy_flagged_share': len(fp) / len(healthy) if healthy else None,
           'flagged_unknown_nodes': len(unknown),
           'overall': stats(bad),
           'by_size': {k: stats(v) for k, v in sorted(bysize.items(), key=lambda kv: (
               kv[0] == 'gross', int(kv[0]) if kv[0].isdigit() else 0))},
           'by_kind': {k: stats(v) for k, v in sorted(bykind.items())},
           'by_noise': {k: stats(v) for k, v in sorted(bynoise.items())}}
    # Healthy nodes flagged, broken down by the truth's extra fields.
    tags = {}
    for n in healthy:
        t = truth[n]
        for name in ('noisy', 'mode', 'class', 'messy', 'retested'):
            if name in t:
                v = t[name]
                if name == 'messy':
                    v = v.split(':')[0]
                key = '%s=%s' % (name, v)
                a = tags.setdefault(key, [0, 0])
                a[0] += 1
                a[1] += n in found
    out['healthy_flagged_by_tag'] = {k: {'healthy': a[0], 'flagged': a[1],
                                         'share': a[1] / a[0] if a[0] else None}
                                     for k, a in sorted(tags.items())}
    return out


def _f(x):
    return '   -  ' if x is None else '%6.3f' % x


def print_table(s):
    print('nodes %d, healthy %d, healthy flagged %d (%s)%s' % (
        s['nodes'], s['healthy'], s['healthy_flagged'], _f(s['healthy_flagged_share']).strip(),
        ', flagged nodes not in the truth %d' % s['flagged_unknown_nodes']
        if s['flagged_unknown_nodes'] else ''))
    print('%-16s %7s %6s %9s %6s %9s %6s' % ('size', 'defects', 'found', 'precision', 'recall',
                                             'right-cmp', 'F1'))
    rows = [(k + ('%' if k.isdigit() else ''), v) for k, v in s['by_size'].items()]
    rows.append(('overall', s['overall']))
    for name, r in rows:
        print('%-16s %7d %6d %9s %6s %9s %6s' % (name, r['defects'], r['found'], _f(r['precision']),
                                                 _f(r['recall']), _f(r['right_component_rate']),
                                                 _f(r['f1'])))
    print('by kind:')
    for name, r in s['by_kind'].items():
        print('%-16s %7d %6d %9s %6s %9s %6s' % (name, r['defects'], r['found'], _f(r['precision']),
                                                 _f(r['recall']), _f(r['right_component_rate']),
                                                 _f(r['f1'])))
    if s['healthy_flagged_by_tag']:
        print('healthy flagged by tag:')
        for k, a in s['healthy_flagged_by_tag'].items():
            print('  %-28s %5d of %5d (%s)' % (k, a['flagged'], a['healthy'], _f(a['share']).strip()))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == 'score':
        p = argparse.ArgumentParser(prog='reference_rules.py score',
                                    description='Score findings against a fleetgen truth.')
        p.add_argument('--truth', required=True)
        p.add_argument('--findings', required=True)
        p.add_argument('--json', action='store_true', help='print the figures as JSON')
        a = p.parse_args(argv[1:])
        s = score(load_jsonl(a.truth), load_jsonl(a.findings))
        if a.json:
            print(json.dumps(s, indent=1))
        else:
            print_table(s)
        return 0
    p = argparse.ArgumentParser(description='Judge a SuperBench fleet file with a reference rule.')
    p.add_argument('--fleet', required=True, help='results-summary.jsonl')
    p.add_argument('--rule', required=True, choices=['superbench', 'mad', 'iqr'])
    p.add_argument('--out', required=True, help='findings.jsonl')
    a = p.parse_args(argv)
    findings = judge(load_fleet(a.fleet), a.rule)
    with open(a.out, 'w') as f:
        for x in findings:
            f.write(json.dumps(x) + '\n')
    print('%s: %d findings on %d nodes -> %s' % (a.rule, len(findings),
                                                  len({x['node'] for x in findings}), a.out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
