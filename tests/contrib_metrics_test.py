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

Then, when Debian's prometheus is installed, a real Prometheus scrapes that service (job "vigil")
and the textfile (job "node", as node-exporter would serve it): every expression of the dashboard
and the rules must be accepted by its query API, and every panel must show data (one of its
queries returns a series). Without prometheus that part is skipped, saying so.

Usage: contrib_metrics_test.py VIGIL_BINARY
"""
import contextlib
import functools
import http.server
import json
import os
import pathlib
import re
import subprocess
import sys
import socket
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "contrib" / "grafana" / "vigil-fleet.json"
RULES = ROOT / "contrib" / "prometheus" / "vigil-rules.yml"
TOKEN = "contrib-test-token"
# Labels Prometheus attaches to every scraped series.
TARGET_LABELS = {"job", "instance"}
PROMETHEUS = "/usr/bin/prometheus"
# What Grafana puts in place of the dashboard's variables ("All") before a query.
VARIABLES = {"$__rate_interval": "1m", "$instance": ".*", "$hardware": ".*"}

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
    run = subprocess.run([vigil, "run", "--suite", "health", "--node", "gpu-001",
                          "--scratch", str(tmp), "--set", "host-health.min_free=16T",
                          "--out", str(doc), "--textfile", str(tmp)],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 1 or not doc.exists():
        raise RuntimeError(f"vigil run: exit {run.returncode}: {run.stderr}")
    return doc.read_bytes(), (tmp / "vigil.prom").read_text()


@contextlib.contextmanager
def vigil_serve(vigil, tmp):
    """A real `vigil serve` (dry-run remediation on) on a free port; yields its URL."""
    (tmp / "token").write_text(TOKEN)
    (tmp / "policy.yaml").write_text("mode: dry-run\n")
    port_file = tmp / "port"
    serve = subprocess.Popen([vigil, "serve", "--db", str(tmp / "fleet.db"),
                              "--listen", "127.0.0.1:0", "--port-file", str(port_file),
                              "--token-file", str(tmp / "token"),
                              "--remediation", str(tmp / "policy.yaml")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = wait_for_file(port_file, 10)
        if port is None:
            serve.kill()
            raise RuntimeError(f"vigil serve did not start: {serve.communicate()[1]}")
        yield f"http://127.0.0.1:{port}"
    finally:
        serve.terminate()
        serve.wait(timeout=10)


def upload(base, document):
    """POSTs the results document; it must be judged defective."""
    request = urllib.request.Request(f"{base}/api/v1/results", data=document, method="POST",
                                     headers={"Authorization": f"Bearer {TOKEN}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        verdicts = [r["verdict"] for r in json.load(answer)["results"]]
    if verdicts != ["defective"]:
        raise RuntimeError(f"the upload was judged {verdicts}, not defective")


@contextlib.contextmanager
def textfile_server(directory):
    """DIR over HTTP, as node-exporter's textfile collector would export it; yields host:port."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def query(prometheus, expr):
    """The instant query's answer; an HTTP 400 (a bad expression) is returned as its JSON."""
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        return get_json(url)
    except urllib.error.HTTPError as e:
        return json.loads(e.read() or b"{}") | {"status": "error"}


@contextlib.contextmanager
def prometheus_scraping(tmp, vigil_target, node_target):
    """A real Prometheus scraping the service and the textfile every second; yields its URL once
    each target has been scraped a few times (so that rate() has samples)."""
    port = free_port()
    (tmp / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        f"  - {{job_name: vigil, static_configs: [{{targets: ['{vigil_target}']}}]}}\n"
        "  - {job_name: node, metrics_path: /vigil.prom,\n"
        f"     static_configs: [{{targets: ['{node_target}']}}]}}\n")
    log = open(tmp / "prometheus.log", "w")
    prometheus = subprocess.Popen([PROMETHEUS, f"--config.file={tmp / 'prometheus.yml'}",
                                   f"--storage.tsdb.path={tmp / 'data'}",
                                   f"--web.listen-address=127.0.0.1:{port}"],
                                  stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                answer = query(url, "count_over_time(up[1m]) >= 4 and up == 1")
                if len(answer.get("data", {}).get("result", [])) == 2:
                    yield url
                    return
            time.sleep(0.5)
        raise RuntimeError("prometheus did not scrape both targets within 60 s: "
                           + (tmp / "prometheus.log").read_text()[-2000:])
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=10)
        log.close()


def with_variables(expr):
    for name, value in VARIABLES.items():
        expr = expr.replace(name, value)
    # A variable's label_values(SELECTOR, LABEL): the selector is what Prometheus is asked.
    m = re.fullmatch(r"label_values\((.*),\s*[a-zA-Z_]+\)", expr.strip())
    return m.group(1) if m else expr


def check_in_prometheus(prometheus, dashboard):
    """Every expression is accepted; every panel shows data. The number of errors."""
    errors = 0
    for where, expr in list(dashboard_expressions(dashboard)) + list(rule_expressions()):
        answer = query(prometheus, with_variables(expr))
        if answer.get("status") != "success":
            errors += fail(where, f"Prometheus refuses {expr!r}: {answer.get('error')}")
    for p in panels_of(dashboard):
        if p["type"] == "row":
            continue
        if not any(query(prometheus, with_variables(t["expr"])).get("data", {}).get("result")
                   for t in p["targets"]):
            errors += fail(f"{DASHBOARD.name}: panel {p['title']!r}", "no query returns data")
    return errors


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
                errors += fail(where,
                               f"{name} has no label {label!r} (it has {sorted(exported[name])})")
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
        text = query["query"] if isinstance(query, dict) else query
        yield f"{DASHBOARD.name}: variable {v['name']}", text


def rule_expressions():
    for group in yaml.safe_load(RULES.read_text())["groups"]:
        for rule in group["rules"]:
            yield f"{RULES.name}: {rule.get('alert') or rule.get('record')}", rule["expr"]


def main():
    vigil = sys.argv[1]
    dashboard = json.loads(DASHBOARD.read_text())  # a ValueError here is the test's failure
    errors = check_dashboard_model(dashboard)
    exported = {}
    with tempfile.TemporaryDirectory() as tmp_name, contextlib.ExitStack() as stack:
        tmp = pathlib.Path(tmp_name)
        document, textfile = run_vigil_node(vigil, tmp)
        exposition_labels(textfile, exported)
        base = stack.enter_context(vigil_serve(vigil, tmp))
        upload(base, document)
        with urllib.request.urlopen(f"{base}/metrics", timeout=30) as answer:
            exposition_labels(answer.read().decode(), exported)
        if os.access(PROMETHEUS, os.X_OK):
            node = stack.enter_context(textfile_server(tmp))
            prometheus = stack.enter_context(
                prometheus_scraping(tmp, base.removeprefix("http://"), node))
            errors += check_in_prometheus(prometheus, dashboard)
        else:
            print(f"SKIP the queries in Prometheus: {PROMETHEUS} is not installed")
    # The series an upload of a defective node, remediation and the textfile make: without them
    # the check below would pass on too little.
    for name in ("vigil_node_healthy", "vigil_failing_components", "vigil_remediation_breaker_open",
                 "vigil_node_verdict", "vigil_run_figure"):
        if name not in exported:
            errors += fail("exported", f"{name} missing after the upload")
    checked = 0
    for where, expr in list(dashboard_expressions(dashboard)) + list(rule_expressions()):
        errors += check_expression(where, expr, exported)
        checked += 1
    print(f"{checked} expressions checked against {len(exported)} exported metrics; "
          f"{errors} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
