#!/usr/bin/env python3
"""Scores `vigil learn` + `vigil validate` on fleets it was not tuned to (issue 21).

The fleets come from eval/fleetgen (written from a specification, without reading Vigil's
validator or its generator). For each regime and naming generation this generates a fleet, learns
criteria from it, judges every node, and scores the findings beside the three reference rules of
eval/fleetgen/reference_rules.py (SuperBench's production style, a per-metric MAD rule and an IQR
rule) with the same scorer: healthy nodes flagged, precision per node, recall per defect and per
defect size, the right component named, F1. With --bound, eval/validate_bound.py's oracle too:
told the truth's healthy nodes, classes, modes, noise levels and the defects' shapes, it says
what recall the fleet allows at 0.5% of healthy nodes flagged ("bound"), and at the share Vigil
flagged, aside runs ("bound@vigil"). With --reach, per defect kind, the slowdown from which
`vigil learn` says its criteria name a part of that kind ("reach", docs/validate.md "What the
criteria can find") beside the defects of each size found.

    eval/validate_eval.py --vigil build/release/vigil [--nodes 2000] [--seed 1]
        [--regimes clean,correlated,...] [--naming current,v04,v02] [--work DIR]
        [--bound] [--by-kind] [--reach] [--json | --markdown]
    eval/validate_eval.py --table results.json     # a --json run's results as a Markdown table

"Healthy flagged" counts every healthy node with a finding; "aside runs" leaves out the healthy
nodes whose truth says a benchmark failed or did not run there (regime messy), which every rule
reports and an operator wants reported.

Seeds 1-2 have been looked at while building the learner; report figures from other seeds.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'fleetgen'))
import reference_rules  # noqa: E402
import validate_bound  # noqa: E402

REGIMES = ['clean', 'correlated', 'rounded', 'heavy', 'moderate', 'mixed', 'firmware', 'two-classes',
           'messy', 'all']
RULES = ['superbench', 'mad', 'iqr']

# Vigil's component names (validate/anatomy.h) as the truth's kinds.
COMPONENT = [
    (re.compile(r'^GPU (\d+)$'), 'gpu'),
    (re.compile(r'^HBM (\d+)$'), 'hbm'),
    (re.compile(r'^PCIe (\d+)$'), 'pcie'),
    (re.compile(r'^NIC (\d+)$'), 'nic'),
    (re.compile(r'^NVLink (\d+-\d+)$'), 'nvlink'),
    (re.compile(r'^disk nvme(\d+)n\d+$'), 'disk'),
    (re.compile(r'^CPU (\S*)$'), 'cpu'),
]


def component_of(name):
    for pattern, kind in COMPONENT:
        m = pattern.match(name)
        if m:
            index = m.group(1)
            return {'kind': kind, 'index': index}
    return {'kind': 'node', 'index': ''}


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode not in (0, 1):  # 1: some node is defective
        sys.exit('%s failed (exit %d): %s' % (' '.join(cmd), r.returncode, r.stderr.strip()))
    return r


# What `vigil learn --json` says its criteria find ("reach"), by fleet directory.
REACH = {}


def vigil_findings(vigil, fleet, work):
    criteria = os.path.join(work, 'criteria.json')
    learned = run([vigil, '--quiet', 'learn', '--data', fleet, '--out', criteria, '--json'])
    REACH[work] = json.loads(learned.stdout).get('reach', [])
    out = run([vigil, '--quiet', 'validate', '--data', fleet, '--criteria', criteria, '--json'])
    verdicts = json.loads(out.stdout)
    rows = []
    for node in verdicts['nodes']:
        for f in node['findings']:
            rows.append({'node': node['node'], 'component': component_of(f['component']),
                         'keys': [f['metric']]})
    return rows


def benchmark_of_key(key):
    return key.rsplit('/', 1)[0]


def reach_of_kind(reach, truth, kind):
    """The reach row (`vigil learn`'s "reach") that slows what the truth's defects of `kind` move:
    of the rows of their kind of part, for their one benchmark or across benchmarks where their
    keys span several, and for each benchmark they span (any one may flag the part), the one that
    flags the smallest slowdown. None where there is no such row."""
    benchmarks, parts = set(), set()
    for t in truth:
        if t.get('defect') == kind:
            benchmarks |= {benchmark_of_key(k) for k in t.get('keys', [])}
            parts.add(t['component']['kind'])
    if not benchmarks or len(parts) != 1:
        return None
    part = parts.pop()
    rows = [r for r in reach if component_of(r['part'])['kind'] == part
            and (r['benchmark'] in benchmarks or (r['benchmark'] == '' and len(benchmarks) > 1))]
    found = [r for r in rows if r['slowdown'] is not None]
    return min(found, key=lambda r: r['slowdown']) if found else (rows[0] if rows else None)


def recall_by_kind_and_size(truth, findings):
    """{kind: {size: [found, defects]}} over the truth's defects; found: a finding on the node, as
    reference_rules.score counts recall."""
    flagged = {f['node'] for f in findings}
    out = {}
    for t in truth:
        if t.get('healthy'):
            continue
        size = 'gross' if t.get('size_pct') is None else str(t['size_pct'])
        cell = out.setdefault(t.get('defect', '?'), {}).setdefault(size, [0, 0])
        cell[0] += t['node'] in flagged
        cell[1] += 1
    return out


def rule_findings(rule, fleet):
    with tempfile.NamedTemporaryFile('r', suffix='.jsonl') as out:
        run([sys.executable, os.path.join(HERE, 'fleetgen', 'reference_rules.py'), '--fleet', fleet,
             '--rule', rule, '--out', out.name])
        return [json.loads(line) for line in out if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--vigil')
    ap.add_argument('--table', help='print a --json run\'s results as a Markdown table')
    ap.add_argument('--markdown', action='store_true', help='print a Markdown table at the end')
    ap.add_argument('--nodes', type=int, default=2000)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--regimes', default=','.join(REGIMES))
    ap.add_argument('--naming', default='current')
    ap.add_argument('--work', help='keep fleets and findings here (default: a temporary directory)')
    ap.add_argument('--no-rules', action='store_true', help='score Vigil only')
    ap.add_argument('--bound', action='store_true',
                    help='also score eval/validate_bound.py\'s oracle (what recall the data allows '
                    'at 0.5%% of healthy nodes flagged)')
    ap.add_argument('--by-kind', action='store_true',
                    help='also print recall per defect kind and per node noise level')
    ap.add_argument('--reach', action='store_true',
                    help='also print, per defect kind, the slowdown `vigil learn` says its '
                    'criteria flag a part from ("reach") beside the defects found by size')
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    if a.table:
        with open(a.table) as f:
            print_markdown(json.load(f))
        return
    if not a.vigil:
        ap.error('--vigil is required')
    work = a.work or tempfile.mkdtemp(prefix='validate_eval.')
    results = []
    try:
        for naming in a.naming.split(','):
            for regime in a.regimes.split(','):
                d = os.path.join(work, '%s-%s-%d-%d' % (regime, naming, a.nodes, a.seed))
                fleet = os.path.join(d, 'results-summary.jsonl')
                if not os.path.exists(fleet):
                    run([sys.executable, os.path.join(HERE, 'fleetgen', 'fleetgen.py'), '--nodes',
                         str(a.nodes), '--seed', str(a.seed), '--regime', regime, '--naming', naming,
                         '--out', d])
                with open(os.path.join(d, 'truth.jsonl')) as f:
                    truth = [json.loads(line) for line in f if line.strip()]
                methods = [('vigil', lambda: vigil_findings(a.vigil, fleet, d))]
                if not a.no_rules:
                    methods += [(r, lambda r=r: rule_findings(r, fleet)) for r in RULES]
                scored = {}
                if a.bound:
                    oracle = validate_bound.Oracle(d)
                    methods.append(('bound', lambda: oracle.findings(0.005)))
                    # The oracle at Vigil's own operating point (the share of the healthy nodes it
                    # flagged, aside runs): recall compared at as many false findings.
                    methods.append(('bound@vigil', lambda: oracle.findings(
                        flagged_aside_share(scored['vigil']))))
                for name, findings in methods:
                    rows = findings()
                    s = reference_rules.score(truth, rows)
                    s.update({'regime': regime, 'naming': naming, 'method': name})
                    if name == 'vigil' and a.reach:
                        s['reach'] = {kind: {'reach': reach_of_kind(REACH[d], truth, kind),
                                             'by_size': by_size}
                                      for kind, by_size in
                                      recall_by_kind_and_size(truth, rows).items()}
                    scored[name] = s
                    results.append(s)
                    if not a.json and not a.markdown:
                        print_row(s, a.by_kind)
                        sys.stdout.flush()
    finally:
        # Each fleet is about 120 MB; a scoring run of 24 leaves gigabytes behind otherwise.
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    if a.json:
        json.dump(results, sys.stdout, indent=1)
        print()
    if a.markdown:
        print_markdown(results)


def fmt(x):
    return '-' if x is None else '%.3f' % x


def print_row(s, by_kind=False):
    o = s['overall']
    sizes = ' '.join('%s:%s' % (k, fmt(v['recall'])) for k, v in s['by_size'].items())
    print('%-11s %-7s %-10s healthy flagged %4d (%5.1f%%)  P %s  R %s  right %s  F1 %s  recall %s'
          % (s['regime'], s['naming'], s['method'], s['healthy_flagged'],
             100 * (s['healthy_flagged_share'] or 0), fmt(o['precision']), fmt(o['recall']),
             fmt(o['right_component_rate']), fmt(o['f1']), sizes))
    for kind, v in s.get('reach', {}).items():
        r = v['reach']
        where = '-'
        if r:
            where = ('not up to 95%' if r['slowdown'] is None else '%.1f%%' % (100 * r['slowdown']))
            first = r.get('first')
            if first is not None and (r['slowdown'] is None or first < r['slowdown']):
                where += ', first %.1f%%' % (100 * first)
            where += ' (%s %s)' % (r['benchmark'] or '(all)', r['part'])
        found = ' '.join('%s%s:%d/%d' % (k, '%' if k.isdigit() else '', c[0], c[1])
                         for k, c in sorted(v['by_size'].items(), key=lambda kv: (
                             kv[0] == 'gross', int(kv[0]) if kv[0].isdigit() else 0)))
        print('    %-22s reach %-40s found %s' % (kind, where, found))
    if by_kind:
        for kind, v in list(s['by_kind'].items()) + [('noise ' + k, v) for k, v in
                                                     s.get('by_noise', {}).items()]:
            print('    %-22s found %3d of %3d, right component %3d' % (kind, v['found'],
                                                                     v['defects'],
                                                                     v['right_component']))


def flagged_aside_runs(s):
    """Healthy nodes flagged, less those where a benchmark failed or did not run."""
    tags = s['healthy_flagged_by_tag']
    runs = sum(tags.get(t, {}).get('flagged', 0) for t in ('messy=failed', 'messy=missing'))
    healthy = s['healthy'] - sum(tags.get(t, {}).get('healthy', 0)
                                 for t in ('messy=failed', 'messy=missing'))
    return s['healthy_flagged'] - runs, healthy


def flagged_aside_share(s):
    aside, healthy = flagged_aside_runs(s)
    return aside / healthy if healthy else 0.0


def print_markdown(results):
    sizes = ['3', '5', '8', '12', 'gross']
    print('| naming | regime | method | healthy flagged | aside runs | precision | recall | '
          + ' | '.join('recall %s' % (k + '%' if k.isdigit() else k) for k in sizes)
          + ' | right component | F1 |')
    print('|' + '---|' * (9 + len(sizes)))
    for s in results:
        o = s['overall']
        aside, healthy = flagged_aside_runs(s)
        row = [s['naming'], s['regime'], s['method'],
               '%d (%.1f%%)' % (s['healthy_flagged'], 100 * (s['healthy_flagged_share'] or 0)),
               '%d (%.1f%%)' % (aside, 100 * aside / healthy if healthy else 0),
               fmt(o['precision']), fmt(o['recall'])]
        row += [fmt(s['by_size'].get(k, {}).get('recall')) for k in sizes]
        row += [fmt(o['right_component_rate']), fmt(o['f1'])]
        if s['method'] == 'vigil':
            row = ['**%s**' % c if i >= 3 else c for i, c in enumerate(row)]
        print('| ' + ' | '.join(row) + ' |')


if __name__ == '__main__':
    # A kill (SIGTERM) unwinds like an error, so that the temporary directory of jobs or fleets,
    # gigabytes, is removed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
