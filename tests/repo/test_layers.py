"""The import direction is part of the design: each layer imports only the layers below it.

    eventlog (the log core)  <-  projections  <-  processors  <-  eventlog.app  <-  eventlog.cli
                       ^-- eventlog.ingest (adapters: produce events) --^

Checked on the source with ``ast``, every import statement anywhere in a module (functions
included), except those under ``if TYPE_CHECKING:``: a type-only name is not a dependency at
run time (processors annotate ``ws: Workspace``, the composition root that runs them).
``eventlog/__init__.py`` is the public facade and may reach every layer (lazily);
``eventlog/entry.py`` is the console script, the top of the cli layer (it lives outside
``eventlog.cli`` only so a context hook can reach the daemon before click is imported), and
``eventlog/help_cache.py`` belongs to that layer too (``evlog --help`` without click).
"""

from __future__ import annotations

import ast
import os

import pytest

from tests.conftest import REPO

LAYERS = ["core", "projections", "processors", "ingest", "app", "cli"]
ALLOWED = {
    "core": {"core"},
    "projections": {"core", "projections"},
    "processors": {"core", "projections", "processors"},
    "ingest": {"core", "ingest"},
    "app": {"core", "projections", "processors", "ingest", "app"},
    "cli": set(LAYERS),
}


def layer_of(module: str) -> str | None:
    """The layer a dotted module name belongs to (None: not ours, or the facade)."""
    parts = module.split(".")
    if parts[0] == "projections":
        return "projections"
    if parts[0] == "processors":
        return "processors"
    if parts[0] != "eventlog" or len(parts) == 1:
        return None
    if module in ("eventlog.entry", "eventlog.help_cache"):
        return "cli"
    return {"app": "app", "ingest": "ingest", "cli": "cli"}.get(parts[1], "core")


def our_modules() -> list[tuple[str, str]]:
    out = []
    for top in ("eventlog", "projections", "processors"):
        for dirpath, _dirs, files in os.walk(os.path.join(REPO, top)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, REPO)[:-3].replace(os.sep, ".")
                    out.append((rel.removesuffix(".__init__"), path))
    return sorted(out)


def runtime_imports(path: str, module: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import not guarded by ``if TYPE_CHECKING:``."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module.split(".")
                pkg = base if path.endswith("__init__.py") else base[:-1]
                target = ".".join(pkg[: len(pkg) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


@pytest.mark.parametrize(("module", "path"), our_modules(),
                         ids=[m for m, _p in our_modules()])
def test_every_module_imports_only_its_own_layer_and_those_below(module: str, path: str) -> None:
    mine = layer_of(module)
    if mine is None:
        return  # the facade (eventlog/__init__.py)
    wrong = [f"line {line}: {target} ({layer_of(target)})" for line, target in runtime_imports(path, module)
             if layer_of(target) is not None and layer_of(target) not in ALLOWED[mine]]
    assert not wrong, f"{module} ({mine}) imports from a layer above it: " + "; ".join(wrong)


def test_the_layer_rule_catches_an_upward_import(tmp_path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from eventlog.app.workspace import Workspace\n"
                   "if TYPE_CHECKING:\n    from processors.runner import RunReport\n")
    targets = [t for _line, t in runtime_imports(str(bad), "eventlog.bad")]
    assert targets == ["eventlog.app.workspace"]
    assert layer_of("eventlog.app.workspace") not in ALLOWED[layer_of("eventlog.log")]
