#!/usr/bin/env python3
"""Run the examples of README.md and docs/*.md and compare their output with the text.

usage: doctest.py [--bin LLMSTEP] [--lib LIBLLMSTEP_SO] [--python PY] [--update] [-v]
                  [-j N] [--timeout S] [FILE.md ...]

Conventions (also in README.md, "Docs"):

- Examples live in indented (4-space) code blocks whose first line starts with `$ ` or
  `>>> `. Fenced blocks, and indented blocks of commands merely listed (no prompt), are
  not examples.
- `$ ` starts a shell command (a line ending in `\\` continues it). The lines after it, up
  to the next `$ ` or `>>> ` line or the end of the block (trailing blank lines dropped),
  are what it prints: its stdout, then its stderr. A command shown without output is
  listed, not run.
- `>>> ` starts a Python session, one fresh interpreter up to the next `$ ` line or the
  end of the block: `... ` followed by code continues a statement, and the other lines
  are what the interactive interpreter prints (an exception as its traceback).
- A command that exits non-zero passes only when the doc shows its error: the last line
  of its stderr must be in the expected text.
- A line `...` in the expected output stands for any number of lines (0 or more).
  Trailing white space is ignored; everything else is compared exactly, line by line.
- Markers, an HTML comment as the last non-blank line before a block, for all its
  examples:
    <!-- doctest: skip (reason) -->          not run; reported as skipped with the reason
                                             (a GPU, the network, an install, over 20 s)
    <!-- doctest: numbers-vary (reason) -->  every number matches any number, and a run of
                                             spaces any run of spaces (timings)
  A block that names `../shared/` (command or output) is skipped, saying so, when
  ../shared/data is absent.

How commands run: under bash, from the repository root as a scratch folder of links to the
root's entries sees it (a file a command writes at the top level, such as a plot, is
thrown away; `../shared` resolves as from the checkout), with LC_ALL=C. `build/llmstep`
and a bare `llmstep` run the binary under test (--bin, else $LLMSTEP_BIN, else
build/llmstep). `python3` and the sessions run an interpreter that imports numpy
(--python, else $PYTHON, /usr/bin/python3, python3; without one these examples are
skipped) with PYTHONPATH=python/ and LLMSTEP_LIBRARY the built libllmstep.so (--lib, else
lib/libllmstep.so beside the binary), as tests/python.sh runs the package.

--update rewrites, in place, the expected output of every failing example with what it
printed. Examples with `...` lines or numbers-vary, and commands that exit non-zero, are
only reported (edit those by hand). The last line printed is
`doctest: N passed, N failed, N skipped`; the exit status is 1 when an example fails, 2 on
a usage error or a block this script cannot read.
"""

import argparse
import concurrent.futures
import difflib
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

INDENT = "    "
MARKER = re.compile(r"^\s*<!--\s*doctest:\s*(skip|numbers-vary)\s*(?:\((.*)\))?\s*-->\s*$")
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
BIN_IN_TEXT = re.compile(r"(?<![\w/.-])(?:\./)?build/llmstep(?![\w/.-])")

# The Python session driver: runs the statements (JSON on stdin) as the interactive
# interpreter does, echoing each one with its prompts, everything on stdout.
SESSION_DRIVER = r"""
import code, json, sys
sys.stderr = sys.stdout
console = code.InteractiveConsole(filename="<stdin>")
for lines in json.load(sys.stdin):
    more = False
    for i, line in enumerate(lines):
        print(("... " if i else ">>> ") + line)
        sys.stdout.flush()
        more = console.push(line)
    if more:
        console.push("")
    sys.stdout.flush()
"""


class DocError(Exception):
    """A block or marker that does not follow the conventions."""


class Example:
    """One command (`$`) or one session (`>>>`) with its expected output.

    start: the doc line (0-based) of its first prompt; out_start/out_end: the lines of
    its expected output, which --update replaces (for a session, the whole block)."""

    def __init__(self, path, kind, source, expected, start, out_start, out_end, mode):
        self.path, self.kind, self.source, self.expected = path, kind, source, expected
        self.start, self.out_start, self.out_end, self.mode = start, out_start, out_end, mode
        self.skip = None
        self.returncode = 0
        self.needs_shared = False
        self.status = None
        self.actual = None
        self.detail = ""
        self.seconds = 0.0

    def where(self):
        return f"{self.path}:{self.start + 1}"

    def title(self):
        first = self.source[0] if self.kind == "$" else self.source[0][0]
        return (self.kind + " " + first.rstrip(" \\"))[:100]


def parse_markers(path, lines, start):
    """The marker of the block starting at line `start`: (kind, reason) or (None, None)."""
    i = start - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    if i >= 0:
        m = MARKER.match(lines[i])
        if m:
            return m.group(1), (m.group(2) or "").strip()
        if lines[i].lstrip().startswith("<!--") and "doctest" in lines[i]:
            raise DocError(f"{path}:{i + 1}: not a marker this script knows: {lines[i]}")
    return None, None


def code_blocks(lines):
    """Yield (start, end) of each indented code block outside fenced blocks."""
    i, n, fenced = 0, len(lines), False
    while i < n:
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
            i += 1
            continue
        if fenced:
            i += 1
            continue
        if line.startswith(INDENT) and line.strip() and (i == 0 or not lines[i - 1].strip()
                                                         or MARKER.match(lines[i - 1])):
            j = i
            while j < n and (lines[j].startswith(INDENT) or not lines[j].strip()):
                j += 1
            while j > i and not lines[j - 1].strip():
                j -= 1
            yield i, j
            i = j
            continue
        i += 1


def trim(block_lines):
    while block_lines and not block_lines[-1].strip():
        block_lines = block_lines[:-1]
    return block_lines


def parse_file(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    examples = []
    for start, end in code_blocks(lines):
        body = [l[len(INDENT):] if l.startswith(INDENT) else "" for l in lines[start:end]]
        mark, reason = parse_markers(path, lines, start)
        if not body[0].startswith(("$ ", ">>> ")):
            if mark:
                raise DocError(f"{path}:{start + 1}: a marker on a block that is "
                                 "not an example")
            continue
        found = parse_block(path, body, start, mark)
        text = "\n".join(body)
        for ex in found:
            if mark == "skip":
                ex.skip = reason or "marked skip"
            ex.needs_shared = "../shared/" in text
        examples.extend(found)
    return lines, examples


def parse_block(path, body, start, mark):
    """The examples of one block: a `$ ` line starts a command, whose output runs to the
    next `$ ` or `>>> ` line; a `>>> ` line outside a session starts one, which runs to the
    next `$ ` line."""
    found, i = [], 0
    while i < len(body):
        first = i
        if body[i].startswith("$ "):
            cmd = [body[i][2:]]
            while cmd[-1].endswith("\\") and i + 1 < len(body):
                i += 1
                cmd.append(body[i])
            i += 1
            out_start = i
            while i < len(body) and not body[i].startswith(("$ ", ">>> ")):
                i += 1
            expected = trim(body[out_start:i])
            if expected:
                found.append(Example(path, "$", cmd, expected, start + first,
                                     start + out_start, start + out_start + len(expected),
                                     mark))
        elif body[i].startswith(">>> "):
            statements = []
            while i < len(body) and not body[i].startswith("$ "):
                if body[i].startswith(">>> "):
                    statements.append([body[i][4:]])
                elif body[i].startswith("... ") and statements:
                    statements[-1].append(body[i][4:])
                i += 1
            expected = trim(body[first:i])
            found.append(Example(path, ">>>", statements, expected, start + first,
                                 start + first, start + first + len(expected), mark))
        else:
            raise DocError(f"{path}:{start + i + 1}: expected a `$ ` or `>>> ` "
                             "line")
    return found


def normalize(line, numbers_vary):
    line = line.rstrip()
    if numbers_vary:
        line = re.sub(r"\s+", " ", NUMBER.sub("#", line))
    return line


def matches(expected, actual, numbers_vary):
    """`...` lines match any run of lines; the rest line by line (a glob over lines)."""
    exp = [None if e.strip() == "..." else normalize(e, numbers_vary) for e in expected]
    act = [normalize(a, numbers_vary) for a in actual]
    # reach[j]: the first i patterns can match the first j lines
    reach = [True] + [False] * len(act)
    for e in exp:
        nxt = [False] * (len(act) + 1)
        if e is None:
            seen = False
            for j in range(len(act) + 1):
                seen = seen or reach[j]
                nxt[j] = seen
        else:
            for j in range(1, len(act) + 1):
                nxt[j] = reach[j - 1] and act[j - 1] == e
        reach = nxt
    return reach[len(act)]


def imports_numpy(python):
    try:
        r = subprocess.run([python, "-c", "import numpy"], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0


def find_python():
    """The first of $PYTHON, /usr/bin/python3, python3 that imports numpy, or None."""
    for cand in [os.environ.get("PYTHON"), "/usr/bin/python3", "python3"]:
        if cand and imports_numpy(cand):
            return shutil.which(cand) or cand
    return None


class Runner:
    def __init__(self, args, root):
        self.root = root
        self.timeout = args.timeout
        self.bin = args.bin
        lib = args.lib or os.path.join(os.path.dirname(self.bin), "lib", "libllmstep.so")
        self.lib = os.path.abspath(lib)
        self.python = args.python or find_python()
        self.shared = os.path.isdir(os.path.join(root, "..", "shared", "data"))
        self.tmp = tempfile.mkdtemp(prefix="llmstep-doctest.")
        # The scratch root: links to the checkout's entries (and ../shared beside it).
        self.cwd = os.path.join(self.tmp, "root")
        os.mkdir(self.cwd)
        for name in os.listdir(root):
            if name != ".git":
                os.symlink(os.path.join(root, name), os.path.join(self.cwd, name))
        if os.path.isdir(os.path.join(root, "..", "shared")):
            os.symlink(os.path.realpath(os.path.join(root, "..", "shared")),
                       os.path.join(self.tmp, "shared"))
        # Commands find `llmstep` and `python3` here first.
        shims = os.path.join(self.tmp, "bin")
        os.mkdir(shims)
        os.symlink(self.bin, os.path.join(shims, "llmstep"))
        if self.python:
            os.symlink(self.python, os.path.join(shims, "python3"))
        self.env = dict(os.environ)
        self.env.update(PATH=shims + os.pathsep + self.env.get("PATH", ""), LC_ALL="C",
                        PYTHONPATH=os.path.join(root, "python"), PYTHONDONTWRITEBYTECODE="1",
                        LLMSTEP_LIBRARY=self.lib)
        self.env.pop("LLMSTEP_DATA_DIR", None)
        self.shell = shutil.which("bash") or "/bin/sh"

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def uses_python(self, ex):
        if ex.kind == ">>>":
            return True
        return re.search(r"\bpython3\b", " ".join(ex.source)) is not None

    def run(self, ex):
        if ex.skip:
            ex.status = "skipped"
            return ex
        if ex.needs_shared and not self.shared:
            ex.status, ex.skip = "skipped", "needs ../shared/data, absent here"
            return ex
        if self.uses_python(ex) and not self.python:
            ex.status, ex.skip = "skipped", "no python3 that imports numpy (--python)"
            return ex
        t0 = time.monotonic()
        try:
            if ex.kind == "$":
                command = BIN_IN_TEXT.sub(shlex.quote(self.bin), "\n".join(ex.source))
                r = subprocess.run([self.shell, "-c", command], cwd=self.cwd, env=self.env,
                                   capture_output=True, text=True, timeout=self.timeout)
            else:
                r = subprocess.run([self.python, "-c", SESSION_DRIVER], cwd=self.cwd,
                                   env=self.env, input=json.dumps(ex.source),
                                   capture_output=True, text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            ex.seconds = time.monotonic() - t0
            ex.status, ex.actual = "failed", []
            ex.detail = f"timed out after {self.timeout:g} s"
            return ex
        ex.seconds = time.monotonic() - t0
        out, err = r.stdout, r.stderr
        ex.returncode = r.returncode
        ex.actual = trim((out + err).rstrip("\n").split("\n")) if (out + err).strip() else []
        numbers_vary = ex.mode == "numbers-vary"
        ok = matches(ex.expected, ex.actual, numbers_vary)
        if r.returncode != 0:
            last = err.strip().split("\n")[-1].rstrip() if err.strip() else ""
            shown = any(l.rstrip() == last for l in ex.expected) if last else False
            if not shown:
                ok = False
                ex.detail = (f"exit status {r.returncode}, and the doc does not show the error"
                             + (f" ({last})" if last else " (nothing on stderr)"))
        ex.status = "passed" if ok else "failed"
        return ex


def report_failure(ex):
    print(f"FAIL {ex.where()}: {ex.title()}")
    if ex.detail:
        print(f"  {ex.detail}")
    diff = difflib.unified_diff(ex.expected, ex.actual or [], "expected (doc)", "actual",
                                lineterm="", n=2)
    for line in diff:
        print("  " + line)


def can_update(ex):
    if ex.mode == "numbers-vary":
        return "numbers-vary block"
    if any(e.strip() == "..." for e in ex.expected):
        return "the expected output has `...` lines"
    if ex.detail.startswith("timed out"):
        return "timed out"
    if ex.returncode != 0:
        return f"exit status {ex.returncode}: a failing command is not written into the doc"
    if not ex.actual:
        return "the command printed nothing"
    for line in ex.actual:
        if line.strip() == "..." or (ex.kind == "$" and line.startswith(("$ ", ">>> "))):
            return f"the output has a line the convention reads as syntax: {line!r}"
    return None


def update_file(path, lines, examples):
    """Replace each example's expected output with its actual output (bottom up)."""
    for ex in sorted(examples, key=lambda e: e.out_start, reverse=True):
        new = [(INDENT + l).rstrip() for l in ex.actual]
        lines[ex.out_start:ex.out_end] = new
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", help="the llmstep binary (default $LLMSTEP_BIN, build/llmstep)")
    ap.add_argument("--lib", help="libllmstep.so for Python (default beside the binary)")
    ap.add_argument("--python", help="a python3 that imports numpy")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the expected output of failing examples in place")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per example")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="examples run at once")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per example")
    ap.add_argument("files", nargs="*", help="default README.md and docs/*.md")
    args = ap.parse_args()

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = args.files or [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "*.md")))
    args.bin = os.path.abspath(args.bin or os.environ.get("LLMSTEP_BIN")
                               or os.path.join(root, "build", "llmstep"))
    if not os.access(args.bin, os.X_OK):
        print(f"doctest: no llmstep binary at {args.bin} (build it, or give --bin)",
              file=sys.stderr)
        return 2
    if args.python:
        args.python = shutil.which(args.python) or args.python
        if not imports_numpy(args.python):
            print(f"doctest: --python {args.python} cannot import numpy", file=sys.stderr)
            return 2
    parsed = {}
    for path in files:
        rel = os.path.relpath(os.path.abspath(path), root)
        try:
            lines, examples = parse_file(path)
        except DocError as exc:
            print(f"doctest: {exc}", file=sys.stderr)
            return 2
        for ex in examples:
            ex.path = rel
        parsed[path] = (lines, examples)
    every = [ex for _, exs in parsed.values() for ex in exs]

    t0 = time.monotonic()
    runner = Runner(args, root)
    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            list(pool.map(runner.run, every))
    finally:
        runner.close()

    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for ex in every:
        counts[ex.status] += 1
        if ex.status == "skipped":
            print(f"SKIP {ex.where()}: {ex.title()}: {ex.skip}")
        elif ex.status == "failed":
            report_failure(ex)
        elif args.verbose:
            print(f"ok   {ex.where()}: {ex.title()} ({ex.seconds:.2f} s)")
    if args.update:
        for path, (lines, examples) in parsed.items():
            todo = []
            for ex in examples:
                if ex.status != "failed":
                    continue
                why = can_update(ex)
                if why:
                    print(f"not updated {ex.where()}: {why}")
                else:
                    todo.append(ex)
                    print(f"updated {ex.where()}")
            if todo:
                update_file(path, lines, todo)
    print(f"(doctest took {time.monotonic() - t0:.1f} s)")
    print(f"doctest: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped']} skipped")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
