#!/usr/bin/env python3
"""Checks contrib/kubernetes/ without a cluster: every manifest parses and has what the API server
requires of it, selectors match their pods' labels, and every `vigil` flag the manifests pass is
one that the built binary's --help lists (so a renamed flag fails here, not at 3 a.m. on a node).

Usage: kubernetes_manifests_test.py VIGIL_BINARY
"""
import pathlib
import re
import shlex
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
MANIFESTS = sorted((ROOT / "contrib" / "kubernetes").glob("*.yaml"))


def fail(where, what):
    print(f"FAIL {where}: {what}")
    return 1


def vigil_invocations(container):
    """The argument lists of each vigil run in a container: its args when the image's
    entrypoint (vigil) runs them, else each `vigil ...` line of a shell script."""
    if "command" not in container:
        return [container.get("args", [])]
    script = " ".join(container.get("args", []))
    out = []
    for line in re.split(r"[;\n]|\bdo\b|\bthen\b", script.replace("\\\n", " ")):
        words = shlex.split(line, comments=True) if line.strip() else []
        if words and words[0].endswith("/vigil"):
            out.append(words[1:])
    return out


def check_flags(vigil, where, args):
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return fail(where, f"no subcommand in {args}")
    help_text = subprocess.run([vigil, words[0], "--help"], capture_output=True, text=True).stdout
    errors = 0
    # vigil's global flags go before the subcommand: after it, vigil refuses them (exit 2).
    after = args[args.index(words[0]) + 1:]
    for a in after:
        if a in ("-q", "--quiet", "-v", "-vv", "--verbose"):
            errors += fail(where, f"global flag {a} after `{words[0]}`: it goes before the subcommand")
    for a in args:
        if a.startswith("--"):
            flag = a.split("=", 1)[0]
            if not re.search(re.escape(flag) + r"\b", help_text):
                errors += fail(where, f"`vigil {words[0]}` has no flag {flag}")
    return errors


def pod_spec(doc):
    kind = doc["kind"]
    if kind in ("Deployment", "DaemonSet", "StatefulSet"):
        return doc["spec"]["template"]["spec"]
    if kind == "Job":
        return doc["spec"]["template"]["spec"]
    return None


def main():
    vigil = sys.argv[1]
    errors = 0
    kinds = set()
    for path in MANIFESTS:
        for doc in yaml.safe_load_all(path.read_text()):
            where = f"{path.name}: {doc.get('kind')} {doc.get('metadata', {}).get('name') or doc.get('metadata', {}).get('generateName')}"
            for field in ("apiVersion", "kind", "metadata"):
                if field not in doc:
                    errors += fail(where, f"no {field}")
            kinds.add(doc["kind"])
            if doc["kind"] in ("Deployment", "DaemonSet"):
                selector = doc["spec"]["selector"]["matchLabels"]
                labels = doc["spec"]["template"]["metadata"]["labels"]
                if any(labels.get(k) != v for k, v in selector.items()):
                    errors += fail(where, f"selector {selector} does not match labels {labels}")
            spec = pod_spec(doc)
            if spec is None:
                continue
            volumes = {v["name"] for v in spec.get("volumes", [])}
            for c in spec["containers"]:
                for m in c.get("volumeMounts", []):
                    if m["name"] not in volumes:
                        errors += fail(where, f"mount of an undeclared volume {m['name']}")
                if "vigil" not in c["image"]:
                    continue
                for args in vigil_invocations(c):
                    errors += check_flags(vigil, where, args)
    for kind in ("Deployment", "Service", "DaemonSet", "Job", "ConfigMap", "ClusterRole"):
        if kind not in kinds:
            errors += fail("contrib/kubernetes", f"no {kind}")
    print(f"{len(MANIFESTS)} manifests checked, {errors} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
