"""The CLI's command modules reach the library through the front door (issue 20, item 4).

Where ``import eventlog`` names an entry point (``open_workspace``, ``init_workspace``,
``run``, ``remember``, ``memory``, ``recall``, ``LocalSessionStore``, ...), a command module
imports it from ``eventlog``, not from the module that defines it, so the CLI uses the API
a library user sees. ``eventlog.cli.__init__`` (the lazy root), and the sync and export
commands (owned elsewhere) are not checked.
"""

from __future__ import annotations

import ast
import os

import eventlog
from tests.conftest import REPO

CLI_DIR = os.path.join(REPO, "eventlog", "cli")
NOT_CHECKED = {"__init__.py", "sync_command.py", "export_command.py"}


def _front_door_targets() -> set[tuple[str, str]]:
    """(module, name) pairs that ``from module import name`` would bypass the front door with."""
    out = set()
    for module, attr in eventlog._LAZY.values():
        if attr is None:  # a module the front door names: ``from eventlog.app import memory``
            parent, _, leaf = module.rpartition(".")
            out.add((parent, leaf))
        else:
            out.add((module, attr))
    out.add(("eventlog.app.workspace", "Workspace"))  # Workspace.open: eventlog.open_workspace
    return out


def _bypasses(path: str, targets: set[tuple[str, str]]) -> list[str]:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [f"{os.path.basename(path)}:{node.lineno} from {node.module} import {a.name}"
                      for a in node.names if (node.module, a.name) in targets]
    return found


def test_command_modules_import_the_library_entry_points_from_the_front_door():
    targets = _front_door_targets()
    bypassing = []
    for name in sorted(os.listdir(CLI_DIR)):
        if name.endswith(".py") and name not in NOT_CHECKED:
            bypassing += _bypasses(os.path.join(CLI_DIR, name), targets)
    assert bypassing == [], "import these from eventlog (the front door): " + "; ".join(bypassing)


def test_the_check_sees_a_bypass(tmp_path):
    bad = tmp_path / "bad_command.py"
    bad.write_text("def f():\n    from eventlog.app.workspace import init_workspace\n    from eventlog.app import memory\n")
    assert len(_bypasses(str(bad), _front_door_targets())) == 2
