"""Shared helpers of the convert_*.py scripts: read a file of a fetched source repository and
write Vigil's long telemetry CSV and fault labels CSV (docs/formats.md). Standard library only."""

import argparse
import csv
import os
import subprocess

# Where relative times start, when a source has no wall-clock time.
EPOCH = 1790000000


def arguments(doc, repository):
    """The command line every converter takes (--src, --commit, --out), parsed; --out exists
    afterwards. `doc` is the script's docstring, `repository` the source's owner/name."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--src", required=True, help=f"{repository} work tree or git dir")
    ap.add_argument("--commit", default="HEAD", help="commit to read from a git dir")
    ap.add_argument("--out", default="out", help="output folder")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    return a


def read_source(src, path, commit="HEAD"):
    """Returns the bytes of `path` in the repository `src`.

    `src` is either a work tree (the file is read from disk) or a git directory, bare or not, such
    as the one `fetch` leaves under /work/.mirror (the file is read at `commit` with git show).
    """
    on_disk = os.path.join(src, path)
    if os.path.isfile(on_disk):
        with open(on_disk, "rb") as f:
            return f.read()
    return subprocess.run(
        ["git", "--git-dir", src, "show", f"{commit}:{path}"],
        check=True, capture_output=True).stdout


def source_commit(src, commit="HEAD"):
    """The full hash of `commit` in `src`, or None where `src` is not a git directory."""
    r = subprocess.run(["git", "--git-dir", src, "rev-parse", commit],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def fmt(x):
    """A number as short text that reads back to the same float."""
    return repr(float(x)) if x != int(x) else str(int(x))


def write_telemetry(path, rows):
    """Writes rows (timestamp, machine, metric, value, component) sorted by time, then machine and
    metric, so that equal inputs give byte-identical files."""
    rows = sorted(rows, key=lambda r: (r[0], r[1], r[2], r[4]))
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["timestamp", "machine", "metric", "value", "component"])
        for t, m, k, v, c in rows:
            w.writerow([fmt(t), m, k, fmt(v), c])
    return len(rows)


def write_labels(path, labels):
    """Writes labels (machine, onset, kind, end); end None means to the end of the data."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["machine", "onset", "kind", "end"])
        for m, onset, kind, end in sorted(labels):
            w.writerow([m, fmt(onset), kind, "" if end is None else fmt(end)])
