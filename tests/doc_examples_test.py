#!/usr/bin/env python3
"""Runs the worked examples of the documentation against the built binary, so that the docs and
the program cannot drift apart.

In a Markdown file (README.md, docs/*.md), a fenced block whose info string is `sh test` is a
worked example: its commands run in order, one `bash -c` each (a line ending in `\\` goes on to
the next), in a fresh temporary directory per file with the built `vigil` first on PATH and
VIGIL_SRC set to the source tree (the docs say so to their reader). A command's trailing comment
says what it must do:

    vigil validate ...   # exit 1: node 01 is defective
    promtool check rules x.yml   # needs promtool

`exit N` expects exit code N (default 0); `needs TOOL` skips the command, with a note, when TOOL
is not installed. A command ending in `&` runs in the background and is stopped after the file.

A fenced block whose info string is `text output`, right after a worked example, is what its last
command prints: each of its lines (but `...`) must be a line, or part of one, of that command's
stdout, with runs of spaces counted as one. So the output a reader sees in the docs is real.

Usage: doc_examples_test.py VIGIL_BINARY [FILE.md ...]   (default: README.md and docs/*.md)
Exit 0 when every example ran as its file says, 1 otherwise.
"""
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIMEOUT_S = 300
FENCE = re.compile(r"^```(.*)$")


def blocks(text):
    """(info string, lines) of each fenced block of a Markdown text, and whether the one before it
    ended on the line just before this one's start (blank lines aside)."""
    out, lines, info, body, last_end = [], text.splitlines(), None, [], -10
    for n, line in enumerate(lines):
        m = FENCE.match(line)
        if info is None and m:
            info, body, start = m.group(1).strip(), [], n
        elif info is not None and line.startswith("```"):
            between = lines[last_end + 1:start]
            out.append((info, body, start + 1, all(not b.strip() for b in between)))
            info, last_end = None, n
        elif info is not None:
            body.append(line)
    return out


def trailing_comment(command):
    """The comment at the end of a shell command (' # ...' outside quotes), or ''."""
    for m in reversed(list(re.finditer(r"\s#\s", command))):
        before = command[:m.start()]
        if before.count("'") % 2 == 0 and before.count('"') % 2 == 0:
            return command[m.end():]
    return ""


def commands(body):
    """The commands of a worked example: continuation lines joined, comment lines dropped."""
    out, pending = [], ""
    for line in body:
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def squeeze(s):
    return re.sub(r"[ \t]+", " ", s.strip())


class FileRun:
    def __init__(self, path, vigil):
        self.path = path
        self.dir = tempfile.mkdtemp(prefix="vigil-doc-")
        self.env = dict(os.environ)
        self.env["PATH"] = str(pathlib.Path(vigil).resolve().parent) + os.pathsep + self.env["PATH"]
        self.env["VIGIL_SRC"] = str(ROOT)
        self.background = []
        self.failures = 0
        self.last_out = None

    def where(self):
        return os.path.relpath(self.path, ROOT)

    def fail(self, line, what):
        print(f"FAIL {self.where()}:{line}: {what}")
        self.failures += 1

    def run(self, command, line):
        comment = trailing_comment(command)
        expected = int(m.group(1)) if (m := re.search(r"\bexit (\d+)", comment)) else 0
        for tool in re.findall(r"\bneeds ([\w.-]+)", comment):
            if shutil.which(tool, path=self.env["PATH"]) is None:
                print(f"SKIP {self.where()}:{line}: {tool} is not installed: {command}")
                self.last_out = None
                return
        if command.rstrip().endswith("&"):
            print(f"started in the background: {command}")
            self.background.append(subprocess.Popen(
                ["bash", "-c", command.rstrip()[:-1]], cwd=self.dir, env=self.env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
            self.last_out = None  # an output block after it has nothing to match
            return
        try:
            r = subprocess.run(["bash", "-c", command], cwd=self.dir, env=self.env,
                               capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.fail(line, f"ran past {TIMEOUT_S} s: {command}")
            return
        print(f"ran (exit {r.returncode}) {command}")
        if r.returncode != expected:
            self.fail(line, f"exit {r.returncode}, the doc says {expected}: {command}\n"
                            f"--- stdout\n{r.stdout[-3000:]}--- stderr\n{r.stderr[-3000:]}")
        self.last_out = r.stdout

    def check_output(self, body, line):
        if self.last_out is None:
            return
        printed = [squeeze(s) for s in self.last_out.splitlines()]
        for n, expected in enumerate(body):
            want = squeeze(expected)
            if want and want != "..." and not any(want in p for p in printed):
                self.fail(line + n + 1, f"not printed: {expected!r}\n--- stdout\n{self.last_out[-3000:]}")

    def stop(self):
        for p in self.background:
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(p.pid, signal.SIGKILL)
        shutil.rmtree(self.dir, ignore_errors=True)


def run_file(path, vigil):
    """Runs the worked examples of one file; the number of failures."""
    run = FileRun(path, vigil)
    examples = 0
    try:
        after_example = False
        for info, body, line, adjacent in blocks(path.read_text()):
            words = info.split()
            if words[:2] == ["sh", "test"]:
                examples += 1
                for command in commands(body):
                    run.run(command, line)
                after_example = True
                continue
            if words[:2] == ["text", "output"]:
                if not (after_example and adjacent):
                    run.fail(line, "an output block that follows no worked example")
                else:
                    run.check_output(body, line)
            after_example = False
    finally:
        run.stop()
    if examples:
        print(f"{run.where()}: {examples} worked examples, {run.failures} failures")
    elif path.name.startswith("quickstart-"):
        run.fail(1, "a quick start without a worked example (```sh test): nothing checks it")
    return run.failures


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    vigil = sys.argv[1]
    files = [pathlib.Path(f).resolve() for f in sys.argv[2:]] or \
        [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    failures = sum(run_file(f, vigil) for f in files)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
