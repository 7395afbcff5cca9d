#!/usr/bin/env python3
"""Fails when a module uses a module that docs/architecture.md does not allow.

The module table of docs/architecture.md is the configuration: its rows name each module and the
modules it may use. This script reads it, then checks
  - every #include "vigil/<module>/..." and "cli/..." in the .cc, .h, .cu and .cuh files under
    src/vigil/<module>/ and src/cli/, and
  - every vigil_<module> target named in target_link_libraries, vigil_module(... DEPS ...) and
    vigil_test(... DEPS ...) of each module's CMakeLists.txt.
A module may always use itself; the table may only let a module use modules listed above it (so
there is no cycle); test files (*_test.cc) and test targets (vigil_test) may also use `testing`
and the modules `testing` may use (its generated fleets come from there).
The "Known exceptions" table of the same document allows exactly the uses it lists (file:line and
what is used), and nothing else: an exception that matches nothing is an error.

Exit codes: 0 every use is allowed; 1 violations (each printed as path:line: ...); 2 the document
cannot be read or its table cannot be parsed.

Usage: check-deps.py [--root DIR]   (DIR: the repository, by default the one holding this script)
Python 3, standard library only.
"""

import argparse
import os
import re
import sys

DOC = "docs/architecture.md"
TEST_MODULE = "testing"  # what test files and test targets may use besides their module's list
SOURCE_SUFFIXES = (".cc", ".h", ".cu", ".cuh")
NONE_CELLS = {"", "-", "—", "–", "nothing", "none"}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]((?:vigil/([A-Za-z0-9_]+)/|cli/)[^">]*)[">]')


class TableError(Exception):
    """The document cannot be used as configuration (exit 2)."""


def cells(line):
    """The cells of a markdown table row, stripped; None when the line is not a row."""
    line = line.strip()
    if not line.startswith("|"):
        return None
    parts = line.strip("|").split("|")
    return [p.strip() for p in parts]


def is_separator(row):
    return all(re.fullmatch(r":?-{3,}:?", c) for c in row)


def tables(lines):
    """Yields (first line number, header cells, [(line number, cells)]) for each table."""
    i = 0
    while i < len(lines):
        header = cells(lines[i])
        if header is None or i + 1 >= len(lines):
            i += 1
            continue
        sep = cells(lines[i + 1])
        if sep is None or not is_separator(sep):
            i += 1
            continue
        rows = []
        j = i + 2
        while j < len(lines) and cells(lines[j]) is not None:
            rows.append((j + 1, cells(lines[j])))
            j += 1
        yield i + 1, [h.lower() for h in header], rows
        i = j


def name_of(cell):
    """`core` -> core; `cli` (src/cli) -> cli."""
    m = re.search(r"`([^`]+)`", cell)
    word = m.group(1) if m else (cell.split() or [""])[0]
    return word.strip()


def parse_modules(text):
    """{module: set of modules it may use} from the table with columns module, holds, may use."""
    lines = text.splitlines()
    for _, header, rows in tables(lines):
        if header[:1] != ["module"] or "may use" not in header:
            continue
        col = header.index("may use")
        table = {}
        for no, row in rows:
            if len(row) != len(header):
                raise TableError(f"{DOC}:{no}: {len(row)} cells, the header has {len(header)}")
            module = name_of(row[0])
            if not re.fullmatch(r"[a-z][a-z0-9_]*", module):
                raise TableError(f"{DOC}:{no}: cannot read a module name in {row[0]!r}")
            if module in table:
                raise TableError(f"{DOC}:{no}: module {module} has two rows")
            uses = set()
            if row[col].strip("` ").lower() not in NONE_CELLS:
                for item in row[col].split(","):
                    used = item.strip().strip("`").strip()
                    if not used:
                        raise TableError(f"{DOC}:{no}: an empty entry in may use {row[col]!r}")
                    uses.add(used)
            table[module] = (no, uses)
        if not table:
            raise TableError(f"{DOC}: the module table has no rows")
        order = list(table)
        for module, (no, uses) in table.items():
            for used in sorted(uses):
                if used not in table:
                    raise TableError(f"{DOC}:{no}: {module} may use {used!r}, which is not a "
                                     "module of the table")
                if order.index(used) > order.index(module):
                    raise TableError(f"{DOC}:{no}: {module} may use {used}, which the table lists "
                                     "below it: a module may only use modules above it")
        return {m: uses - {m} for m, (_, uses) in table.items()}
    raise TableError(f"{DOC}: no table with the columns 'module' ... 'may use'")


def parse_exceptions(text):
    """[(path, line, what, doc line)] from the table of the section "Known exceptions"."""
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines):
        if re.match(r"#+\s+Known exceptions\b", line.strip(), re.IGNORECASE):
            start = i
            break
    if start is None:
        return []
    end = len(lines)
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    for j in range(start + 1, len(lines)):
        m = re.match(r"(#+)\s", lines[j])
        if m and len(m.group(1)) <= level:
            end = j
            break
    out = []
    for first, header, rows in tables(lines[start:end]):
        if "where" not in header or "uses" not in header:
            raise TableError(f"{DOC}:{start + first}: the known exceptions table needs the columns "
                             "'where' (path:line) and 'uses' (a header or a vigil_ target)")
        w, u = header.index("where"), header.index("uses")
        for no, row in rows:
            no += start
            if len(row) != len(header):
                raise TableError(f"{DOC}:{no}: {len(row)} cells, the header has {len(header)}")
            m = re.fullmatch(r"`?([^`:\s]+):(\d+)`?", row[w])
            if not m:
                raise TableError(f"{DOC}:{no}: 'where' must be path:line, not {row[w]!r}")
            what = row[u].strip("` ")
            if not what:
                raise TableError(f"{DOC}:{no}: 'uses' is empty")
            out.append((m.group(1), int(m.group(2)), what, no))
    return out


def module_dirs(root):
    """{module: its folder relative to root}: each folder under src/vigil, and cli for src/cli."""
    dirs = {}
    base = os.path.join(root, "src", "vigil")
    if os.path.isdir(base):
        for name in sorted(os.listdir(base)):
            if os.path.isdir(os.path.join(base, name)):
                dirs[name] = os.path.join("src", "vigil", name)
    if os.path.isdir(os.path.join(root, "src", "cli")):
        dirs["cli"] = os.path.join("src", "cli")
    return dirs


def source_files(root, folder):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, f), root)


def strip_cmake_comment(line):
    quoted = False
    for i, c in enumerate(line):
        if c == '"':
            quoted = not quoted
        elif c == "#" and not quoted:
            return line[:i]
    return line


def cmake_calls(path, names):
    """Yields (command, [(line, argument)]) for each call of a command in `names`."""
    with open(path, encoding="utf-8") as f:
        lines = [strip_cmake_comment(l) for l in f.read().splitlines()]
    words = []  # (line, token), parentheses as tokens of their own
    for no, line in enumerate(lines, 1):
        for tok in re.findall(r'"[^"]*"|[()]|[^\s()]+', line):
            words.append((no, tok))
    i = 0
    while i < len(words):
        no, tok = words[i]
        if tok.lower() in names and i + 1 < len(words) and words[i + 1][1] == "(":
            depth, j, args = 1, i + 2, []
            while j < len(words) and depth:
                t = words[j][1]
                depth += t == "("
                depth -= t == ")"
                if depth:
                    args.append(words[j])
                j += 1
            yield tok.lower(), args
            i = j
        else:
            i += 1


LINK_COMMANDS = {"target_link_libraries", "vigil_module", "vigil_test"}
DEFINE_COMMANDS = {"vigil_module", "vigil_test", "add_library", "add_executable"}
KEYWORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "SOURCES", "DEPS", "PRIVATE_DEPS", "LABELS"}


def targets(root, dirs):
    """{target: module} for the targets the modules' CMakeLists.txt define, and the names of
    targets defined outside the modules (cmake/*.cmake: flags), which are no module."""
    owner = {}
    for module, folder in dirs.items():
        path = os.path.join(root, folder, "CMakeLists.txt")
        if not os.path.exists(path):
            continue
        for command, args in cmake_calls(path, DEFINE_COMMANDS):
            if args:
                name = args[0][1]
                owner["vigil_" + name if command == "vigil_module" else name] = module
    other = set()
    cmake_dir = os.path.join(root, "cmake")
    if os.path.isdir(cmake_dir):
        for f in sorted(os.listdir(cmake_dir)):
            if f.endswith(".cmake") or f == "CMakeLists.txt":
                for _, args in cmake_calls(os.path.join(cmake_dir, f), {"add_library"}):
                    if args:
                        other.add(args[0][1])
    return owner, other


def linked(path):
    """Yields (line, target, by a test) for each target a CMakeLists.txt links a target to."""
    tests = {args[0][1] for _, args in cmake_calls(path, {"vigil_test"}) if args}
    for command, args in cmake_calls(path, LINK_COMMANDS):
        if not args:
            continue
        consumer = args[0][1]
        test = command == "vigil_test" or consumer in tests or consumer.endswith("_test")
        if command == "target_link_libraries":
            deps = args[1:]
        else:  # vigil_module / vigil_test: what follows DEPS and PRIVATE_DEPS
            deps, on = [], False
            for no, tok in args[1:]:
                if tok in KEYWORDS:
                    on = tok in ("DEPS", "PRIVATE_DEPS")
                elif on:
                    deps.append((no, tok))
        for no, tok in deps:
            if tok not in KEYWORDS:
                yield no, tok, test


def allowed_text(allowed, module, test):
    uses = sorted(allowed.get(module, ()))
    text = ", ".join(uses) if uses else "nothing"
    if test and TEST_MODULE not in uses and module != TEST_MODULE:
        extra = [TEST_MODULE] + sorted(allowed.get(TEST_MODULE, ()))
        text += f"; tests also {', '.join(extra)}"
    return text


def check(root):
    """(violations, files read, links read, exceptions used); raises TableError."""
    try:
        with open(os.path.join(root, DOC), encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise TableError(f"cannot read {DOC}: {e.strerror}")
    allowed = parse_modules(text)
    exceptions = parse_exceptions(text)
    dirs = module_dirs(root)
    problems = []
    for module in sorted(dirs):
        if module not in allowed:
            problems.append(f"{dirs[module]}: module {module} has no row in {DOC}")
    for module in sorted(allowed):
        if module not in dirs:
            problems.append(f"{DOC}: module {module} is in the table, but "
                            f"{os.path.join('src', 'vigil', module)} does not exist")

    used_exceptions = set()

    def excused(path, line, what):
        for k, (epath, eline, ewhat, doc_line) in enumerate(exceptions):
            if epath == path and ewhat == what:
                used_exceptions.add(k)
                if eline != line:
                    problems.append(f"{DOC}:{doc_line}: the known exception {epath}:{eline} "
                                    f"({ewhat}) is now at line {line}: update it")
                return True
        return False

    def permitted(module, other, test):
        return (other == module or other in allowed.get(module, ()) or
                (test and (other == TEST_MODULE or other in allowed.get(TEST_MODULE, ()))))

    files = 0
    for module, folder in sorted(dirs.items()):
        for path in source_files(root, folder):
            files += 1
            test = path.endswith("_test.cc")
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                for no, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    other = m.group(2) or "cli"
                    if permitted(module, other, test) or excused(path, no, m.group(1)):
                        continue
                    problems.append(f"{path}:{no}: {module} includes {other}, which {DOC} does "
                                    f"not allow (may use: {allowed_text(allowed, module, test)})")

    owner, other_targets = targets(root, dirs)
    links = 0
    for module, folder in sorted(dirs.items()):
        path = os.path.join(folder, "CMakeLists.txt")
        if not os.path.exists(os.path.join(root, path)):
            continue
        for no, target, test in linked(os.path.join(root, path)):
            if target in owner:
                other = owner[target]
            elif target.startswith("vigil_") and target not in other_targets:
                problems.append(f"{path}:{no}: {module} links {target}, which no CMakeLists.txt "
                                f"under src/ defines")
                continue
            else:
                continue  # a system library or a flags target
            links += 1
            if permitted(module, other, test) or excused(path, no, target):
                continue
            problems.append(f"{path}:{no}: {module} links {target} ({other}), which {DOC} does "
                            f"not allow (may use: {allowed_text(allowed, module, test)})")

    for k, (epath, eline, ewhat, doc_line) in enumerate(exceptions):
        if k not in used_exceptions:
            problems.append(f"{DOC}:{doc_line}: the known exception {epath}:{eline} ({ewhat}) "
                            "matches no forbidden use in the code: remove it")
    return problems, files, links, len(used_exceptions)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.dirname(here),
                        help="the repository (default: the one holding this script)")
    args = parser.parse_args()
    try:
        problems, files, links, excused = check(args.root)
    except TableError as e:
        print(f"check-deps: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-deps: {len(problems)} violations of {DOC}", file=sys.stderr)
        return 1
    print(f"check-deps: {files} files and {links} CMake links follow {DOC} "
          f"({excused} known exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
