"""What a user sees of a log, for the replication tests: every session file and MEMORY.md, and the history.

``views(log, out)`` replays the log into ``out`` (``Projector.rebuild``, as ``evlog replay``) and
returns each user-visible file's bytes by relative path, plus ``"history"``: the history's
lines as every device holds them (``HistoryProjection.converged``: cursors are local positions).
"""

from __future__ import annotations

import os

from eventlog.fsio import OS_FS
from eventlog.log import Log
from projections import default_projections
from projections.history import HISTORY_FILE, converged, read_entries
from projections.projector import Projector

VISIBLE_DIRS = ("sessions", "memory")
LOCAL_FILES = {HISTORY_FILE, os.path.join("memory", "short-term.md"), os.path.join("memory", "long-term.md")}


def views(log: Log, out) -> dict[str, bytes]:  # noqa: ANN001 - a path
    """The user-visible projections of ``log`` (see the module docstring)."""
    out = str(out)
    os.makedirs(out, exist_ok=True)
    proj = Projector(log, out, default_projections(out, OS_FS, live=False), OS_FS, checkpoint=False)
    proj.rebuild()
    found: dict[str, bytes] = {}
    for top in VISIBLE_DIRS:
        for root, _dirs, files in os.walk(os.path.join(out, top)):
            for name in files:
                rel = os.path.relpath(os.path.join(root, name), out)
                if rel not in LOCAL_FILES and not name.startswith("."):
                    with open(os.path.join(root, name), "rb") as f:
                        found[rel] = f.read()
    path = os.path.join(out, HISTORY_FILE)
    found["history"] = b""
    if os.path.exists(path):
        with open(path, "rb") as f:
            found["history"] = converged(read_entries(f.read()))
    return found
