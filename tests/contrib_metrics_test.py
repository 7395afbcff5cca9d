#!/usr/bin/env python3
"""Checks contrib/grafana/vigil-fleet.json and contrib/prometheus/vigil-rules.yml against what the
built Vigil exports, so that a renamed metric or label fails here rather than as an empty panel
or an alert that never fires.

The dashboard must be Grafana's dashboard JSON model with a ${DS_PROMETHEUS} input, every panel
(rows aside) must query that datasource with at least one expression, and panel ids must be
unique. Then, for the dashboard's expressions (its template variables' included) and the rules':
every `vigil_*` metric they name must be one that the real `vigil serve` exports on /metrics
(started on a free port with remediation on, after an upload of a defective node, so that the node
series exist) or that `vigil run --textfile` writes; every label a selector matches on, and every
label of a `by (...)`, must be one those series carry (or job/instance, which Prometheus adds).

Usage: contrib_metrics_test.py VIGIL_BINARY
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "contrib" / "grafana" / "vigil-fleet.json"
RULES = ROOT / "contrib" / "prometheus" / "vigil-rules.yml"
TOKEN = "contrib-test-token"
# Labels Prometheus attaches to every scraped series.
TARGET_LABELS = {"job", "instance"}

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"')
SELECTOR = re.compile(r"\b(vigil_[a-z0-9_]+)\s*(?:\{([^}]*)\})?")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")


def fail(where, what):
    print(f"FAIL {where}: {what}")
    return 1


def exposition_labels(text, into):
    """Adds each sample's metric name and label names of exposition `text` to `into`."""
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError(f"not an exposition line: {line!r}")
        into.setdefault(m.group(1), set()).update(LABEL.findall(m.group(2) or ""))


def wait_for_file(path, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    return None


def run_vigil_node(vigil, tmp):
    """A health run that finds the root filesystem too full (min_free=16T): a defective document
    to upload, and the textfile's series."""
    doc = tmp / "doc.json"
    run = subprocess.run([vigil, "run", "--suite", "health", "--node", "gpu-001", "--scratch", str(tmp),
                          "--set", "host-health.min_free=16T", "--out", str(doc), "--textfile", str(tmp)],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 1 or not doc.exists():
        raise RuntimeError(f"vigil run: exit {run.returncode}: {run.stderr}")
    return doc.read_bytes(), (tmp / "vigil.prom").read_text()


def served_metrics(vigil, tmp, document):
    """/metrics of a real `vigil serve` (dry-run remediation on) after one upload of `document`."""
    (tmp / "token").write_text(TOKEN)
    (tmp / "policy.yaml").write_text("mode: dry-run\n")
    port_file = tmp / "port"
    serve = subprocess.Popen([vigil, "serve", "--db", str(tmp / "fleet.db"), "--listen", "127.0.0.1:0",
                              "--port-file", str(port_file), "--token-file", str(tmp / "token"),
                              "--remediation", str(tmp / "policy.yaml")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = wait_for_file(port_file, 10)
        if port is None:
            serve.kill()
            raise RuntimeError(f"vigil serve did not start: {serve.communicate()[1]}")
        base = f"http://127.0.0.1:{port}"
        upload = urllib.request.Request(f"{base}/api/v1/results", data=document, method="POST",
                                        headers={"Authorization": f"Bearer {TOKEN}",
                                                 "Content-Type": "application/json"})
        with urllib.request.urlopen(upload, timeout=30) as answer:
            verdicts = [r["verdict"] for r in json.load(answer)["results"]]
            if verdicts != ["defective"]:
                raise RuntimeError(f"the upload was judged {verdicts}, not defective")
        with urllib.request.urlopen(f"{base}/metrics", timeout=30) as answer:
            return answer.read().decode()
    finally:
        serve.terminate()
        serve.wait(timeout=10)


def check_expression(where, expr, exported):
    """Names and labels of `expr` against the exported series; the number of errors."""
    errors = 0
    names = []
    for name, matchers in SELECTOR.findall(expr):
        names.append(name)
        if name not in exported:
            errors += fail(where, f"{name} is not exported by vigil serve or vigil run --textfile")
            continue
        for label in MATCHER.findall(matchers):
            if label not in exported[name] | TARGET_LABELS:
                errors += fail(where, f"{name} has no label {label!r} (it has {sorted(exported[name])})")
    known = set(TARGET_LABELS)
    for name in names:
        known |= exported.get(name, set())
    for grouping in GROUPING.findall(expr):
        for label in filter(None, (g.strip() for g in grouping.split(","))):
            if names and label not in known:
                errors += fail(where, f"by ({label}): no series of {sorted(set(names))} has it")
    return errors


def panels_of(dashboard):
    for p in dashboard["panels"]:
        yield p
        yield from p.get("panels", [])


def check_dashboard_model(dashboard):
    errors = 0
    inputs = {i["name"]: i for i in dashboard.get("__inputs", [])}
    if inputs.get("DS_PROMETHEUS", {}).get("pluginId") != "prometheus":
        errors += fail(DASHBOARD.name, "no __inputs DS_PROMETHEUS of the prometheus plugin")
    if not 36 <= dashboard.get("schemaVersion", 0) <= 41:
        errors += fail(DASHBOARD.name, f"schemaVersion {dashboard.get('schemaVersion')}")
    for key in ("title", "uid", "panels", "templating", "time"):
        if key not in dashboard:
            errors += fail(DASHBOARD.name, f"no {key}")
    ids = [p["id"] for p in panels_of(dashboard)]
    if len(ids) != len(set(ids)):
        errors += fail(DASHBOARD.name, f"panel ids repeat: {ids}")
    for p in panels_of(dashboard):
        where = f"{DASHBOARD.name}: panel {p.get('title')!r}"
        if "gridPos" not in p:
            errors += fail(where, "no gridPos")
        if p["type"] == "row":
            continue
        targets = p.get("targets", [])
        if not targets or not all(t.get("expr", "").strip() for t in targets):
            errors += fail(where, "a panel without an expression in each target")
        for t in targets:
            if t.get("datasource", p.get("datasource", {})).get("uid") != "${DS_PROMETHEUS}":
                errors += fail(where, "a target not on ${DS_PROMETHEUS}")
    return errors


def dashboard_expressions(dashboard):
    for p in panels_of(dashboard):
        for t in p.get("targets", []):
            yield f"{DASHBOARD.name}: panel {p['title']!r} {t['refId']}", t["expr"]
    for v in dashboard["templating"]["list"]:
        query = v.get("query")
        yield f"{DASHBOARD.name}: variable {v['name']}", query["query"] if isinstance(query, dict) else query


def rule_expressions():
    for group in yaml.safe_load(RULES.read_text())["groups"]:
        for rule in group["rules"]:
            yield f"{RULES.name}: {rule.get('alert') or rule.get('record')}", rule["expr"]


def main():
    vigil = sys.argv[1]
    dashboard = json.loads(DASHBOARD.read_text())  # a ValueError here is the test's failure
    errors = check_dashboard_model(dashboard)
    exported = {}
    with tempfile.TemporaryDirectory() as tmp:
        document, textfile = run_vigil_node(vigil, pathlib.Path(tmp))
        exposition_labels(textfile, exported)
        exposition_labels(served_metrics(vigil, pathlib.Path(tmp), document), exported)
    # The series an upload of a defective node, and remediation, make: if these are missing the
    # check below would pass on too little.
    for name in ("vigil_node_healthy", "vigil_failing_components", "vigil_remediation_breaker_open",
                 "vigil_node_verdict", "vigil_run_figure"):
        if name not in exported:
            errors += fail("exported", f"{name} missing after the upload")
    checked = 0
    for where, expr in list(dashboard_expressions(dashboard)) + list(rule_expressions()):
        errors += check_expression(where, expr, exported)
        checked += 1
    print(f"{checked} expressions checked against {len(exported)} exported metrics; {errors} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
