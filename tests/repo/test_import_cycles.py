"""No import circle in the library (issue 20): the modules imported when a module loads form no cycle.

Read from the source with ``ast``: every import statement at a module's top level (inside
``if``/``try``/``with`` too, not under ``if TYPE_CHECKING:``, not inside functions). ``from
package import submodule`` depends on the submodule, not on the package's ``__init__``.
Imports inside functions are deferred by design (the CLI's lazy commands, the front door, a
model's client); they are not load-time circles, and ``test_layers.py`` keeps their direction.
"""

from __future__ import annotations

import ast
import os

from tests.conftest import REPO

PACKAGES = ("eventlog", "projections", "processors")


def _modules() -> dict[str, str]:
    out = {}
    for pkg in PACKAGES:
        for folder, _dirs, files in os.walk(os.path.join(REPO, pkg)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    mod = os.path.relpath(path, REPO)[:-3].replace(os.sep, ".")
                    out[mod.removesuffix(".__init__")] = path
    return out


def _load_time_imports(path: str, mods: dict[str, str]) -> set[str]:
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for n in nodes:
            if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
                continue
            if isinstance(n, ast.Import):
                found.update(a.name for a in n.names)
            elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                subs = [f"{n.module}.{a.name}" for a in n.names if f"{n.module}.{a.name}" in mods]
                found.update(subs)
                if len(subs) < len(n.names):
                    found.add(n.module)
            elif isinstance(n, ast.If | ast.Try | ast.With):
                visit([*n.body, *getattr(n, "orelse", []), *(s for h in getattr(n, "handlers", []) for s in h.body),
                       *getattr(n, "finalbody", [])])

    with open(path, encoding="utf-8") as f:
        visit(ast.parse(f.read()).body)
    return {m for m in found if m in mods}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative enough for this size)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_library_has_no_load_time_import_circle():
    mods = _modules()
    graph = {m: _load_time_imports(p, mods) - {m} for m, p in mods.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
