"""Report functions longer than a limit (60 lines) or more complex than one (McCabe 15), for CI.

    python tools/func_sizes.py                       # eventlog projections processors
    python tools/func_sizes.py eventlog --max-lines 60 --max-complexity 15 --json
    python tools/func_sizes.py --check               # tools/lint.sh: only new offenders fail

Lines are counted from a function's ``def`` (decorators excluded) to its last line,
docstring included; complexity is McCabe's as ruff's C901 counts it (see ``complexity``). Exit status 1 when any function is over a limit (``--report-only``: always 0).

``--check`` (what ``tools/lint.sh`` runs) lets the functions in ``KNOWN_OFFENDERS`` pass,
reported on stderr as known: the exit status is 1 for an offender not in that list, and for
an entry of the list that is no longer over a limit (remove it: the list only shrinks).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass

DEFAULT_PATHS = ("eventlog", "projections", "processors")
MAX_LINES = 60
MAX_COMPLEXITY = 15
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Functions known to be over a limit, as "path/from/the/repo/root.py:name" (every function of that
#: name in that file): to split (issue 20). ``--check`` fails on any other offender.
KNOWN_OFFENDERS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class FunctionSize:
    """One function: where it is, its length in lines and its McCabe complexity."""

    path: str
    line: int
    name: str
    lines: int
    complexity: int


def complexity(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """McCabe complexity of ``fn`` as ruff's C901 counts it: 1, plus 1 for each ``if``/``elif``, ``for``
    and ``while``, plus each ``except`` clause and a ``try``'s ``else``, and each ``case`` but ``case _:``; a
    nested function adds 1 and its own decisions, a nested class its methods'; boolean operators,
    conditional expressions and comprehensions add nothing."""
    return 1 + _decisions(fn.body)


def _decisions(body: list[ast.stmt]) -> int:
    score = 0
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.expr):
            continue
        if isinstance(node, ast.ClassDef):
            score += _decisions(node.body)
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            score += 1 + _decisions(node.body)
            continue
        if isinstance(node, ast.If | ast.For | ast.AsyncFor | ast.While):
            score += 1
        elif isinstance(node, ast.Try | ast.TryStar):
            score += len(node.handlers) + bool(node.orelse)
        elif isinstance(node, ast.Match):
            score += sum(not _wildcard(case) for case in node.cases)
        todo.extend(ast.iter_child_nodes(node))
    return score


def _wildcard(case: ast.match_case) -> bool:
    """``case _:`` (no guard): the fall-through of a match adds no path, as ``else`` adds none."""
    return isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None and case.guard is None


def functions(path: str) -> Iterator[FunctionSize]:
    """Every function and method defined in the Python file ``path``."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            yield FunctionSize(path, node.lineno, node.name, end - node.lineno + 1, complexity(node))


def python_files(paths: list[str]) -> Iterator[str]:
    """The ``.py`` files under ``paths`` (files or directories), in a stable order."""
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            yield from (os.path.join(root, f) for f in sorted(files) if f.endswith(".py"))


def offenders(paths: list[str], max_lines: int = MAX_LINES, max_complexity: int = MAX_COMPLEXITY) -> list[FunctionSize]:
    """Functions over either limit, longest first."""
    found = [fs for p in python_files(paths) for fs in functions(p)
             if fs.lines > max_lines or fs.complexity > max_complexity]
    return sorted(found, key=lambda fs: (-fs.lines, fs.path, fs.line))


def relative(path: str, root: str = ROOT) -> str:
    """``path`` relative to ``root``, ``/`` separated (as ``KNOWN_OFFENDERS`` names files)."""
    return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")


def key(fs: FunctionSize, root: str = ROOT) -> str:
    """``fs`` as ``KNOWN_OFFENDERS`` names it: its file relative to ``root``, ``:``, its name."""
    return f"{relative(fs.path, root)}:{fs.name}"


def check(found: list[FunctionSize], scanned: list[str], known: frozenset[str] = KNOWN_OFFENDERS,
          root: str = ROOT) -> tuple[list[FunctionSize], list[str]]:
    """(offenders of ``found`` not in ``known``, entries of ``known`` in a ``scanned`` file that no
    offender of ``found`` matches any more)."""
    keys = {key(fs, root) for fs in found}
    files = {relative(p, root) for p in scanned}
    stale = sorted(k for k in known - keys if k.rpartition(":")[0] in files)
    return [fs for fs in found if key(fs, root) not in known], stale


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
    ap.add_argument("--max-lines", type=int, default=MAX_LINES)
    ap.add_argument("--max-complexity", type=int, default=MAX_COMPLEXITY)
    ap.add_argument("--json", action="store_true", help="one JSON object per function and line")
    ap.add_argument("--report-only", action="store_true", help="exit 0 even when functions are over a limit")
    ap.add_argument("--check", action="store_true",
                    help="fail only on offenders not in KNOWN_OFFENDERS, and on entries of it no longer over a limit")
    args = ap.parse_args(argv)
    found = offenders(args.paths, args.max_lines, args.max_complexity)
    if args.check:
        return _check(found, list(python_files(args.paths)), args.max_lines, args.max_complexity)
    for fs in found:
        if args.json:
            print(json.dumps(asdict(fs)))
        else:
            print(f"{fs.path}:{fs.line}: {fs.name}: {fs.lines} lines, complexity {fs.complexity}")
    print(f"{len(found)} function(s) over {args.max_lines} lines or complexity {args.max_complexity}", file=sys.stderr)
    return 0 if args.report_only or not found else 1


def _check(found: list[FunctionSize], scanned: list[str], max_lines: int, max_complexity: int) -> int:
    new, stale = check(found, scanned)
    for fs in found:
        if fs not in new:
            print(f"known (to split, issue 20): {fs.path}:{fs.line}: {fs.name}: {fs.lines} lines, "
                  f"complexity {fs.complexity}", file=sys.stderr)
    for fs in new:
        print(f"{fs.path}:{fs.line}: {fs.name}: {fs.lines} lines, complexity {fs.complexity} "
              f"(over {max_lines} lines or complexity {max_complexity}; split it)")
    for entry in stale:
        print(f"{entry}: in KNOWN_OFFENDERS (tools/func_sizes.py) but not over a limit: remove it")
    print(f"{len(new)} new offender(s), {len(stale)} stale allow-list entr(y/ies), "
          f"{len(found) - len(new)} known offender(s)", file=sys.stderr)
    return 1 if new or stale else 0


if __name__ == "__main__":
    sys.exit(main())
