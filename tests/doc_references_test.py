#!/usr/bin/env python3
"""Checks that what the documentation points at exists, so that a renamed file or flag fails a
test instead of a reader:

- every relative Markdown link, `[text](path)`, of README.md, docs/, contrib/, eval/, perf/ and
  fuzz/ names a file or folder that exists (anchors aside);
- every repository path in inline code or prose (`docs/run.md`, `contrib/prometheus/...`,
  `tests/...`) exists, and so does every `docs/NAME.md` that a source file's comments or help
  texts mention;
- with the built binary, every `vigil ...` command in the docs' code (blocks and inline) names
  subcommands that exist, and each of its flags is one that subcommand's --help lists; a global
  flag (-q, -v) after the subcommand is refused, as vigil refuses it.

Usage: doc_references_test.py [VIGIL_BINARY]   (without it, the flags are not checked)
Exit 0 when everything named exists, 1 otherwise (each miss printed with file and line).
"""
import functools
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC_DIRS = ["docs", "contrib", "eval", "perf", "fuzz"]
SOURCE_DIRS = ["src"]
TOP = r"(?:docs|contrib|scripts|src|tests|eval|perf|fuzz|cmake)"
REPO_PATH = re.compile(r"(?<![\w./-])(" + TOP + r"/[\w./-]*[\w/])")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`]+)`")
GLOBAL_FLAGS = {"-q", "--quiet", "-v", "-vv", "-vvv", "--verbose", "-h", "--help"}
VIGIL = None


def markdown_files():
    files = [ROOT / "README.md"]
    for d in DOC_DIRS:
        files += sorted((ROOT / d).rglob("*.md"))
    return files


def lines_with_code(text):
    """(line number, line, inside a fenced block) for each line of a Markdown text."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        yield n, line, fenced


def is_placeholder(path):
    """docs/<module>.md, src/vigil/*/, docs/NAME.md: a pattern the reader fills in."""
    return any(c in path for c in "<>*{}$") or "..." in path or \
        re.search(r"/[A-Z_]+(\.\w+)?/?$", path) is not None


def exists(path):
    """A path names a file or folder of the tree, a program built from PATH.cc (eval/detect_suite),
    or, as the docs write a module's files, one under src/vigil/ (eval/validate_files_test.cc)."""
    path = path.rstrip("/.")
    return any((base / p).exists() for base in (ROOT, ROOT / "src" / "vigil")
               for p in (path, path + ".cc", path + ".py", path + ".sh"))


def check_paths(md, errors):
    text = md.read_text()
    for n, line, fenced in lines_with_code(text):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            if path and not (md.parent / path).exists():
                errors.append(f"{md.relative_to(ROOT)}:{n}: link to {target}, which does not exist")
        if fenced:
            continue  # commands there name the files they make
        # Paths in inline code; in prose only Vigil's own docs (docs/NAME.md), as other projects'
        # paths are quoted in prose too (SuperBench's docs/user-tutorial/...).
        named = [p for span in CODE_SPAN.findall(line) for p in REPO_PATH.findall(span)]
        named += re.findall(r"(?<![\w./-])(docs/[\w-]+\.md)", line)
        for path in named:
            if not is_placeholder(path) and not exists(path):
                errors.append(f"{md.relative_to(ROOT)}:{n}: {path} does not exist")


def check_sources(errors):
    for d in SOURCE_DIRS:
        for f in sorted((ROOT / d).rglob("*")):
            if f.suffix not in (".h", ".cc"):
                continue
            for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                for doc in re.findall(r"(?<![\w./-])(docs/[\w-]+\.md)", line):
                    if not (ROOT / doc).exists():
                        errors.append(f"{f.relative_to(ROOT)}:{n}: {doc} does not exist")


@functools.lru_cache(maxsize=None)
def help_of(path):
    """(subcommands, flags) of `vigil PATH... --help`; None when it is no command."""
    r = subprocess.run([VIGIL, *path, "--help"], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    subs, flags, section = set(), set(), ""
    for line in r.stdout.splitlines():
        if line and not line.startswith(" "):
            section = line.strip().rstrip(":").lower()
            continue
        if section == "subcommands" and line.startswith("  ") and line.split():
            subs.add(line.split()[0])
        if section == "options":
            flags.update(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", line.split("  ")[1]
                                    if line.startswith("  ") and len(line.split("  ")) > 1 else line))
    return subs, flags


def word_flags(word):
    """The flag a word of a command names, or None: `--plot=x` -> --plot, `[--json]` -> --json."""
    w = word.strip("[](),.;|`'\"")
    m = re.match(r"^(--[a-z][\w-]*|-[A-Za-z]{1,3})(=.*)?$", w)
    return m.group(1) if m else None


def check_command(where, words, errors):
    """Checks one `vigil ...` command's words (those after `vigil`)."""
    i = 0
    while i < len(words) and words[i] in GLOBAL_FLAGS:
        i += 1
    paths = [()]
    while i < len(words):
        names = words[i].strip("`").split("|")
        deeper = []
        for p in paths:
            info = help_of(p)
            if info and all(n in info[0] for n in names):
                deeper += [p + (n,) for n in names]
        if not deeper:
            break
        paths, i = deeper, i + 1
    if paths == [()]:
        return  # prose: "vigil is ...", or a placeholder
    for word in words[i:]:
        if word.startswith(("#", "|", ">", "2>", "&&", ";")):
            break
        flag = word_flags(word)
        if not flag or flag in ("-h", "--help"):
            continue
        for p in paths:
            info = help_of(p)
            if info and flag not in info[1]:
                what = "a global flag goes before the subcommand" if flag in GLOBAL_FLAGS \
                    else "no such flag"
                errors.append(f"{where}: `vigil {' '.join(p)}` has no {flag} ({what})")


def commands_in(md):
    """(file:line, words after `vigil`) of each vigil command in the file's code."""
    out, pending, start = [], "", 0
    for n, line, fenced in lines_with_code(md.read_text()):
        pieces = []
        if fenced:
            if line.endswith("\\"):
                pending += line[:-1] + " "
                start = start or n
                continue
            pieces, pending, start = [pending + line], "", 0
        else:
            pieces = CODE_SPAN.findall(line)
        for piece in pieces:
            for m in re.finditer(r"(?:^|[\s(/$])vigil\s+(.*)", piece):
                words = re.split(r"\s+", m.group(1).strip())
                out.append((f"{md.relative_to(ROOT)}:{n}", words))
    return out


def main():
    global VIGIL
    VIGIL = sys.argv[1] if len(sys.argv) > 1 else None
    errors = []
    for md in markdown_files():
        check_paths(md, errors)
        if VIGIL:
            for where, words in commands_in(md):
                check_command(where, words, errors)
    check_sources(errors)
    for e in errors:
        print("FAIL " + e)
    print(f"{len(markdown_files())} Markdown files checked, {len(errors)} references missing")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
