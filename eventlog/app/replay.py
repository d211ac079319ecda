"""Replay: rebuild projections from the log, prove they match, look back in time.

* ``rebuild(ws)`` replays the whole log into fresh projection files and swaps them in
  (``Projector.rebuild``: crash-safe, a killed replay leaves old or new files, never
  none; what ``evlog replay`` does, with ``recall_index="refresh"``: the recall index is
  kept when it looks sound and rebuilt otherwise).
* ``rebuild_into(log, out_dir, until_seq)`` replays into another directory, optionally
  stopping at a seq: the state "as of" that point (``--to`` and ``--until``). It refuses
  a directory that holds anything but an earlier rebuild, so it never removes a user's
  files.
* ``check(ws)`` only reads: it replays the log up to the seq the live files were
  written for (their checkpoint) into a temporary directory and compares every
  projection file byte for byte (``--check``). It works on a read-only workspace and
  while writers run (it holds the projection-files lock in shared mode, so no flush
  changes the files while it compares). The replay's last flush compares each file with
  the live one as it is rendered and drops it (``_ComparingFS``): only the files an
  earlier flush of a long replay wrote are put in the temporary directory.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass

from eventlog.app.workspace import LOG_DIR, PROJECTIONS_LOCK, Workspace
from eventlog.errors import ConfigError, LockedError
from eventlog.fsio import OS_FS, ScratchFS
from eventlog.lock import FileLock
from eventlog.log import Log
from eventlog.timeutil import normalize_time
from projections import default_projections
from projections.memory import MemoryProjection, project_file
from projections.projector import CHECKPOINT, REBUILD_FLUSH_EVENTS, Projector


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
    recall_index: str = ""  # what happened to the recall index: "rebuilt", "kept", "rebuilt (<why>)"; "" for --to


@dataclass
class CheckResult:
    """What ``check`` compared: the files' seq, the log's end, every drift, and the recall index's problems."""

    seq: int
    log_end: int
    files: int
    drifts: list[Drift]
    index_problems: list[str]

    @property
    def clean(self) -> bool:
        """True when nothing drifted."""
        return not self.drifts and not self.index_problems


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


def rebuild(ws: Workspace, *, recall_index: str = "rebuild") -> ReplayResult:
    """Rebuild the workspace's own projections from seq 1 (needs a writable workspace), and the recall index.

    ``recall_index``: "rebuild" (from seq 1, always: what an erase needs), or "refresh" (what
    ``evlog replay`` does: keep an index that looks sound without reading its texts, caught up
    with the log, and rebuild any other; ``projections.recall.workspace.refresh``). Rebuilding
    the index is most of a replay's time; ``check`` proves a kept one.
    """
    from eventlog.app import recall

    if recall_index not in ("rebuild", "refresh"):
        raise ConfigError(f"recall_index must be 'rebuild' or 'refresh', not {recall_index!r}")
    if not ws.writable:
        raise ConfigError("replay rebuilds the workspace's files: open it writable")
    proj = ws.rebuild_projections()
    if recall_index == "rebuild":
        recall.rebuild(ws)
        done = "rebuilt"
    else:
        done = recall.refresh(ws)
    return ReplayResult(ws.home, proj.seq, _count_outputs(proj) + 1, done)


def rebuild_into(log: Log, out_dir: str, until_seq: int | None = None) -> ReplayResult:
    """Replay the log into ``out_dir`` (no side effects elsewhere), up to ``until_seq``."""
    if os.path.exists(os.path.join(out_dir, LOG_DIR)):
        raise ConfigError(f"{out_dir} holds a log: replay --to needs a directory that is not a workspace")
    if os.path.isdir(out_dir) and os.listdir(out_dir) and not os.path.exists(os.path.join(out_dir, CHECKPOINT)):
        raise ConfigError(f"{out_dir} is not empty and holds no earlier replay: replay --to writes only into an empty "
                          "directory or one it wrote before (nothing was changed)")
    os.makedirs(out_dir, exist_ok=True)
    proj = Projector(log, out_dir, default_projections(out_dir, OS_FS, live=False), OS_FS, checkpoint=True)
    proj.rebuild(until_seq)
    return ReplayResult(out_dir, proj.seq, _count_outputs(proj))


def _count_outputs(proj: Projector) -> int:
    return sum(len(p.outputs()) for p in proj.projections)


def check(ws: Workspace, *, full_index: bool = False) -> CheckResult:
    """Compare the live projection files with a fresh replay of the log up to the seq they were written for.

    Only reads the workspace (see the module docstring); a writable workspace's own
    pending changes are flushed first, so a library caller checks what it appended. Memory
    stays bounded: the fresh replay is written to a temporary directory in steps and
    compared file by file. The recall index is proved from the same read of the log
    (``recall.proof``: a digest of its rows against a digest fold of the log; ``full_index``:
    against a whole rebuild).
    """
    if ws.writable:
        ws.flush()
    lock: FileLock | None
    lock = FileLock(ws.path(PROJECTIONS_LOCK), what=f"the projection files of {ws.home}")
    try:
        lock.acquire(30.0, shared=True)
    except (LockedError, OSError):
        lock = None  # a read-only workspace without a lock file: nobody can be writing it either
    from eventlog.app import recall

    try:
        live = Projector(ws.log, ws.home, default_projections(ws.home, OS_FS, live=False), OS_FS, checkpoint=True)
        with tempfile.TemporaryDirectory(prefix="evlog-check-") as tmp, recall.proof(ws, full=full_index) as index:
            scratch = _ComparingFS(tmp, ws.home)  # a throwaway tree: nothing to make durable
            fresh = Projector(ws.log, tmp, default_projections(tmp, scratch, live=False), scratch, checkpoint=False)
            written = live.seq or live.written_seq  # an older version's checkpoint: the seq its files are for
            if written:  # the recall index's proof folds the same read of the log
                fresh.catch_up(written, flush_every=REBUILD_FLUSH_EVENTS, observe=index.feed)
            scratch.comparing = True
            for p in fresh.projections:
                p.flush()
            files, rebuilt = _files(live), _files(fresh) | set(scratch.same)
            drifts = _drifts(ws.home, tmp, files, rebuilt, scratch.same)
            compared = len(files | rebuilt)
            drifts.extend(_mirror_drift(ws, live))
            index_problems = index.finish()
        return CheckResult(written, ws.log.last_seq, compared, drifts, index_problems)
    finally:
        if lock is not None:
            lock.close()


class _ComparingFS(ScratchFS):
    """The fresh replay's file system: files go to the scratch tree (a flush of a long replay reads its
    own files back) until ``comparing`` is set; from then on (the last flush) each file under the
    scratch tree is compared with the live file at the same place as it is written, and dropped:
    ``same`` maps its path (relative) to whether the bytes are equal."""

    def __init__(self, scratch: str, live: str) -> None:
        self.scratch, self.live = scratch, live
        self.comparing = False
        self.same: dict[str, bool] = {}

    def _rel(self, path: str) -> str | None:
        rel = os.path.relpath(path, self.scratch)
        return None if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel

    def write_file(self, path: str, data: bytes) -> None:
        rel = self._rel(path) if self.comparing else None
        if rel is None:
            super().write_file(path, data)
            return
        self.same[rel] = _same_as(os.path.join(self.live, rel), data)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # what an earlier flush wrote there

    def unlink(self, path: str) -> None:
        rel = self._rel(path) if self.comparing else None
        if rel is not None and self.same.pop(rel, None) is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return
        super().unlink(path)


def _drifts(home: str, tmp: str, live: set[str], rebuilt: set[str], same: dict[str, bool]) -> list[Drift]:
    """Every file of either side that is missing, extra or different (``same``: those compared as written)."""
    drifts = []
    for rel in sorted(live | rebuilt):
        a = os.path.join(home, rel)
        if not os.path.exists(a):
            drifts.append(Drift(rel, "missing"))
        elif rel not in rebuilt:
            drifts.append(Drift(rel, "extra"))
        elif not (same[rel] if rel in same else _same_bytes(a, os.path.join(tmp, rel))):
            drifts.append(Drift(rel, "differs"))
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
    """Mirrors of project MEMORY.md files in registered projects must equal the canonical copy."""
    mem = live.get("memory")
    assert isinstance(mem, MemoryProjection)
    out = []
    for project in mem.files:
        if project not in ws.config.projects:
            continue
        mirror = os.path.join(project, "memory", "MEMORY.md")
        if os.path.exists(mirror) and not _same_bytes(mirror, os.path.join(ws.home, project_file(project))):
            out.append(Drift(mirror, "differs"))
    return out


def _same_as(path: str, data: bytes) -> bool:
    """Whether the file at ``path`` holds exactly ``data`` (read in steps: one more copy of a step, not the file)."""
    try:
        if os.path.getsize(path) != len(data):
            return False
        view = memoryview(data)
        with open(path, "rb") as f:
            at = 0
            while True:
                x = f.read(1 << 20)
                if not x:
                    return at == len(data)
                if view[at : at + len(x)] != x:
                    return False
                at += len(x)
    except OSError:
        return False


def _same_bytes(a: str, b: str) -> bool:
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(1 << 20), fb.read(1 << 20)
                if x != y:
                    return False
                if not x:
                    return True
    except FileNotFoundError:
        return False
