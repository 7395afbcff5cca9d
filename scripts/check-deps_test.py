#!/usr/bin/env python3
"""Test of check-deps.py on fixture trees in a temporary directory: an allowed and a forbidden
include and link, test files and `testing`, known exceptions (matching, moved, stale), and tables
it must refuse. Python 3, standard library only; well under a second.

Usage: check-deps_test.py
"""

import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-deps.py")
_spec = importlib.util.spec_from_file_location("check_deps", CHECKER)
check_deps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_deps)

TABLE = """\
# Architecture

| module | holds | may use |
|---|---|---|
| `core` | basics | — |
| `results` | documents | core |
| `sim` | generators | core |
| `cli` (`src/cli`) | subcommands | core, results, sim |
| `testing` | test support | results |
"""

FILES = {
    "src/vigil/core/status.h": "#pragma once\n",
    "src/vigil/core/CMakeLists.txt": "vigil_module(core SOURCES status.cc)\n",
    "src/vigil/results/summary.cc": (
        '#include "vigil/results/summary.h"\n'
        '#include "vigil/core/status.h"\n'
        "\n"
        '#include "vigil/sim/gen.h"\n'),
    "src/vigil/results/summary_test.cc": (
        '#include "vigil/results/summary.h"\n'
        '#include "vigil/testing/temp_dir.h"\n'),
    "src/vigil/results/CMakeLists.txt": (
        "vigil_module(results\n"
        "  SOURCES summary.cc\n"
        "  DEPS vigil_core)  # a comment naming vigil_sim is no link\n"
        "target_link_libraries(vigil_results PRIVATE vigil_flags vigil_sim)\n"
        "vigil_test(results_test SOURCES summary_test.cc DEPS vigil_results vigil_testing)\n"),
    "src/vigil/sim/gen.h": '#include "vigil/core/status.h"\n',
    "src/vigil/sim/CMakeLists.txt": "vigil_module(sim SOURCES gen.cc DEPS vigil_core)\n",
    "src/vigil/testing/temp_dir.h": '#include "vigil/results/summary.h"\n',
    "src/vigil/testing/CMakeLists.txt": "add_library(vigil_testing STATIC temp_dir.cc)\n",
    "src/cli/main.cc": '#include "cli/common.h"\n#include "vigil/sim/gen.h"\n',
    "src/cli/CMakeLists.txt": "add_library(vigil_cli STATIC main.cc)\n"
                              "target_link_libraries(vigil_cli PUBLIC vigil_sim vigil_results)\n",
    "cmake/VigilOptions.cmake": "add_library(vigil_flags INTERFACE)\n",
}

FORBIDDEN_INCLUDE = ("src/vigil/results/summary.cc:4: results includes sim, which "
                     "docs/architecture.md does not allow (may use: core)")
FORBIDDEN_LINK = ("src/vigil/results/CMakeLists.txt:4: results links vigil_sim (sim), which "
                  "docs/architecture.md does not allow (may use: core)")

failures = []


def write(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


def run(root, process):
    """The checker's exit code and output: in a process of its own, or (fast) in this one."""
    if process:
        p = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True,
                           text=True)
        return p.returncode, p.stdout + p.stderr
    out = io.StringIO()
    argv = sys.argv
    sys.argv = [CHECKER, "--root", root]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            rc = check_deps.main()
    finally:
        sys.argv = argv
    return rc, out.getvalue()


def expect(name, root, code, present=(), absent=(), process=False):
    rc, out = run(root, process)
    problems = []
    if rc != code:
        problems.append(f"exit {rc}, expected {code}")
    problems += [f"no line {s!r}" for s in present if s not in out]
    problems += [f"unexpected {s!r}" for s in absent if s in out]
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}\n--- output:\n{out}")


def tree(doc=TABLE, changes=None):
    """A fixture tree: FILES with `doc` as docs/architecture.md, and `changes` (path: text)."""
    root = tempfile.mkdtemp(dir=base)
    files = dict(FILES)
    files["docs/architecture.md"] = doc
    files.update(changes or {})
    write(root, files)
    return root


with tempfile.TemporaryDirectory() as base:
    # The forbidden include and link are named with file and line; the allowed ones, the test
    # file's use of testing and the comment are not.
    expect("forbidden", tree(), 1, present=[FORBIDDEN_INCLUDE, FORBIDDEN_LINK],
           absent=["summary.cc:2", "summary_test.cc", "CMakeLists.txt:3", "CMakeLists.txt:5",
                   "src/cli/", "testing/temp_dir.h:"], process=True)

    clean = {"src/vigil/results/summary.cc": '#include "vigil/core/status.h"\n',
             "src/vigil/results/CMakeLists.txt":
                 "vigil_module(results SOURCES summary.cc DEPS vigil_core)\n"}
    expect("clean", tree(changes=clean), 0,
           present=["follow docs/architecture.md"])

    # A test file may use what `testing` may use (its generated fixtures come from there); a
    # library file may not.
    expect("tests use what testing uses",
           tree(changes=dict(clean, **{"src/vigil/core/status_test.cc":
                                       '#include "vigil/results/summary.h"\n'})), 0)
    expect("a library file does not",
           tree(changes=dict(clean, **{"src/vigil/core/status.cc":
                                       '#include "vigil/results/summary.h"\n'})), 1,
           present=["src/vigil/core/status.cc:1: core includes results, which "
                    "docs/architecture.md does not allow (may use: nothing)"])

    # testing in a file that is not a test.
    expect("testing outside tests",
           tree(changes={"src/vigil/results/helper.cc": '#include "vigil/testing/temp_dir.h"\n'}),
           1, present=["src/vigil/results/helper.cc:1: results includes testing, which "
                       "docs/architecture.md does not allow (may use: core)"])

    # Known exceptions: exactly these uses pass; a moved or a stale entry fails.
    exceptions = TABLE + """
## Known exceptions

| where | module | uses | why |
|---|---|---|---|
| `src/vigil/results/summary.cc:4` | results | `vigil/sim/gen.h` | a reason |
| `src/vigil/results/CMakeLists.txt:4` | results | `vigil_sim` | the same |

## Data paths
"""
    expect("excepted", tree(exceptions), 0, present=["(2 known exceptions)"])
    expect("moved", tree(exceptions.replace("summary.cc:4", "summary.cc:9")), 1,
           present=["the known exception src/vigil/results/summary.cc:9 (vigil/sim/gen.h) is "
                    "now at line 4"])
    expect("stale",
           tree(exceptions, {"src/vigil/results/summary.cc": '#include "vigil/core/status.h"\n'}),
           1, present=["summary.cc:4 (vigil/sim/gen.h) matches no forbidden use"])

    # The map matches the folders.
    expect("no row", tree(changes={"src/vigil/store/store.h": "#pragma once\n"}), 1,
           present=["src/vigil/store: module store has no row"])
    expect("no folder", tree(TABLE + "| `plan` | later | core |\n"), 1,
           present=["module plan is in the table, but src/vigil/plan does not exist"])

    # Tables it cannot use: exit 2 with a message.
    expect("no table", tree("# Architecture\n\nNothing here.\n"), 2,
           present=["check-deps: docs/architecture.md: no table with the columns"])
    expect("unknown module", tree(TABLE.replace("| core, results, sim |", "| core, plan |")), 2,
           present=["cli may use 'plan', which is not a module of the table"])
    expect("upwards", tree(TABLE.replace("| generators | core |", "| generators | core, cli |")), 2,
           present=["sim may use cli, which the table lists below it"])
    expect("bad row", tree(TABLE + "| `store` | two cells |\n"), 2,
           present=["2 cells, the header has 3"])
    root = tree()
    os.remove(os.path.join(root, "docs", "architecture.md"))
    expect("missing document", root, 2, present=["cannot read docs/architecture.md"])

if failures:
    print("\n".join(failures), file=sys.stderr)
    print(f"check-deps_test: {len(failures)} cases failed", file=sys.stderr)
    sys.exit(1)
print("check-deps_test: all cases pass")
