"""Replay: rebuild projections from the log, prove they match, look back in time.

* ``rebuild(ws)`` throws the workspace's projection files and checkpoint away and
  replays the whole log into them (what ``evlog replay`` does).
* ``rebuild_into(log, out_dir, until_seq)`` replays into another directory, optionally
  stopping at a seq: the state "as of" that point (``--to`` and ``--until``).
* ``check(ws)`` brings the live projections up to date, rebuilds them from scratch in
  memory and compares every file byte for byte; it returns the files that drifted
  (``--check``). Nothing is written to the live workspace but its flush.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from eventlog.errors import ConfigError
from eventlog.fsio import OS_FS, MemoryFS
from eventlog.log import Log
from eventlog.timeutil import normalize_time
from eventlog.app.workspace import LOG_DIR, Workspace
from projections import default_projections
from projections.memory import project_file
from projections.projector import Projector


@dataclass
class Drift:
    """One file whose live bytes differ from a fresh replay's."""

    path: str
    problem: str  # "differs", "missing" (replay has it, live does not), "extra" (live only)


@dataclass
class ReplayResult:
    """What a rebuild did."""

    root: str
    seq: int
    files: int


def resolve_until(log: Log, until: str) -> int:
    """A seq from ``--until``: a number is a seq; anything else is a time (ISO 8601, UTC if naive)."""
    text = until.strip()
    if text.isdigit():
        return min(int(text), log.last_seq)
    t = normalize_time(text)
    if not t:
        raise ConfigError(f"--until {until!r} is neither a seq nor a time like 2026-11-24T18:00:00Z")
    seq = 0
    for ev in log.read():
        if ev.ts[:23] > t[:23]:
            break
        seq = ev.seq
    return seq


def rebuild(ws: Workspace) -> ReplayResult:
    """Rebuild the workspace's own projections from seq 1 (needs the writer)."""
    proj = ws.rebuild_projections()
    return ReplayResult(ws.home, proj.seq, _count_outputs(proj))


def rebuild_into(log: Log, out_dir: str, until_seq: int | None = None) -> ReplayResult:
    """Replay the log into ``out_dir`` (no side effects elsewhere), up to ``until_seq``."""
    if os.path.exists(os.path.join(out_dir, LOG_DIR)):
        raise ConfigError(f"{out_dir} holds a log: replay --to needs a directory that is not a workspace")
    proj = Projector(log, out_dir, default_projections(out_dir, OS_FS, live=False), OS_FS, checkpoint=True)
    proj.rebuild(until_seq)
    return ReplayResult(out_dir, proj.seq, _count_outputs(proj))


def _count_outputs(proj: Projector) -> int:
    return sum(len(p.outputs()) for p in proj.projections)


_MEMORY_ROOT = os.path.join(os.sep, "evlog-replay-check")  # a name only: nothing is written there


def check(ws: Workspace) -> list[Drift]:
    """Compare the live projections with a fresh replay of the same log, byte for byte.

    The fresh replay is rendered in memory (``MemoryFS``), so checking costs reading the
    log and the live files, not writing a second copy of every projection.
    """
    ws.flush()
    live = ws.projections
    mem = MemoryFS()
    fresh = Projector(ws.log, _MEMORY_ROOT, default_projections(_MEMORY_ROOT, mem, live=False), mem, checkpoint=False)
    fresh.rebuild(live.seq)
    rebuilt = {os.path.relpath(path, _MEMORY_ROOT): data for path, data in mem.files.items()}
    drifts = []
    for rel in sorted(_files(live) | set(rebuilt)):
        a, b = _read(os.path.join(ws.home, rel)), rebuilt.get(rel)
        if a == b:
            continue
        drifts.append(Drift(rel, "missing" if a is None else "extra" if b is None else "differs"))
    drifts.extend(_mirror_drift(ws, live))
    return drifts


def _files(proj: Projector) -> set[str]:
    """Every file the projections say they hold, plus whatever sits in their directories."""
    out: set[str] = set()
    for p in proj.projections:
        out.update(p.outputs())
        for rel in p.owned_dirs():
            top = os.path.join(proj.root, rel)
            for dirpath, _dirs, files in os.walk(top):
                out.update(os.path.relpath(os.path.join(dirpath, f), proj.root) for f in files)
    return out


def _mirror_drift(ws: Workspace, live: Projector) -> list[Drift]:
    """Project MEMORY.md mirrors that exist must equal the canonical copy."""
    out = []
    for project in live["memory"].files:  # type: ignore[attr-defined]
        if not project:
            continue
        mirror = os.path.join(project, "memory", "MEMORY.md")
        if os.path.exists(mirror) and _read(mirror) != _read(os.path.join(ws.home, project_file(project))):
            out.append(Drift(mirror, "differs"))
    return out


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
