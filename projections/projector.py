"""The projector: keeps a set of projections caught up with the log, checkpoints them, rebuilds them.

``catch_up()`` reads the log from the seq after the last one applied and feeds every
event to every projection that consumes its type; ``flush()`` has each projection write
its changed files and then saves one checkpoint (``state/projections.ckpt``) holding
the covered seq, the fingerprint of the record at that seq, and every projection's
state. On open, a checkpoint that does not match the log (the seq is gone, or the record
there is a different one, as after a recovery that cut the tail) or that cannot be
decoded is ignored and everything is rebuilt from seq 1: checkpoints are disposable,
losing one costs replay time only (INVARIANTS I17).

If a projection finds that its files disagree with its saved state (a crash between
writing files and the checkpoint, or a hand edit), it raises ``ProjectionDrift`` and the
projector rebuilds all projections from the log.

**Rebuilds are crash-safe (INVARIANTS I23).** ``rebuild()`` never deletes first: it
replays the log into a staging directory (``state/rebuild/``) with its own checkpoint,
writes a journal naming it (``state/rebuild.journal``), then moves every staged file
over its live counterpart (each ``rename`` replaces one file atomically), removes live
files the new state no longer has, and moves the checkpoint last. A crash at any moment
leaves each projection file in its old or its new state, never missing; the next open
(``finish_pending_rebuild``) completes the moves the journal names. Only files the
projections own are ever removed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import msgspec

from eventlog.events import Event
from eventlog.fsio import OS_FS, FileSystem, remove_stray_temp_files
from eventlog.log import Log
from projections.base import Projection, ProjectionDrift

CHECKPOINT = os.path.join("state", "projections.ckpt")
STAGING = os.path.join("state", "rebuild")
JOURNAL = os.path.join("state", "rebuild.journal")
_VERSION = 6  # 2: diary legacy dedup horizon; 3: sessions record their preview's message; 4: their title's parts; 5: the order of their events (issue 22); 6: memory entries keep their text in the log (issue 25)
#: A rebuild writes files every this many events, so its memory stays bounded on any log.
REBUILD_FLUSH_EVENTS = 200_000


class _Checkpoint(msgspec.Struct):
    version: int
    seq: int
    fingerprint: str
    states: dict[str, msgspec.Raw]


class Projector:
    """Feeds log events to projections rooted at ``root``; see the module docstring."""

    def __init__(self, log: Log, root: str, projections: list[Projection], fs: FileSystem, *, checkpoint: bool = True) -> None:
        self.log = log
        self.root = root
        self.fs = fs
        self.projections = projections
        self.by_name = {p.name: p for p in projections}
        self.use_checkpoint = checkpoint
        self.seq = 0  # last seq applied
        #: The seq the checkpoint on disk was saved at (0: none), also when its version is not this code's
        #: (the states are then rebuilt from the log): what ``replay --check`` compares the files against.
        self.written_seq = 0
        self.fingerprint = ""
        self._route: dict[str, list[Callable[[Event], None]]] = {}
        for p in projections:
            for tag in p.consumes:
                self._route.setdefault(tag, []).append(p.apply)
        if checkpoint:
            self._load_checkpoint()

    def get(self, name: str) -> Projection:
        """The projection called ``name`` (the workspace's typed accessors use this)."""
        return self.by_name[name]

    # -- checkpoint ------------------------------------------------------------------

    def _ckpt_path(self) -> str:
        return os.path.join(self.root, CHECKPOINT)

    def checkpoint_identity(self) -> tuple[int, int, int] | None:
        """(inode, size, mtime) of the checkpoint file: tells whether another process saved one since."""
        try:
            st = os.stat(self._ckpt_path())
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def _load_checkpoint(self) -> None:
        try:
            with open(self._ckpt_path(), "rb") as f:
                ck = msgspec.json.decode(f.read(), type=_Checkpoint)
            self.written_seq = ck.seq  # what the files were written for, even by an older version
            if ck.version != _VERSION or set(ck.states) != set(self.by_name):
                return
            if ck.seq:
                rec = self.log.find(ck.seq)
                if rec is None or rec.fingerprint != ck.fingerprint:
                    return  # the log changed under the checkpoint (recovery cut it): rebuild
            for name, raw in ck.states.items():
                p = self.by_name[name]
                typed = p.checkpoint_type
                p.load(msgspec.json.decode(raw) if typed is None else msgspec.json.decode(raw, type=typed))
        except (OSError, ValueError, TypeError, KeyError, msgspec.MsgspecError):
            self._reset_states()
            return
        self.seq, self.fingerprint = ck.seq, ck.fingerprint

    def reload(self) -> None:
        """Forget the in-memory state and start again from the checkpoint on disk."""
        self._reset_states()
        if self.use_checkpoint:
            self._load_checkpoint()

    def _save_checkpoint(self) -> None:
        states = {p.name: msgspec.Raw(msgspec.json.encode(p.state())) for p in self.projections}
        ck = _Checkpoint(_VERSION, self.seq, self.fingerprint, states)
        path = self._ckpt_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.fs.atomic_write(path, msgspec.json.encode(ck))

    # -- running ---------------------------------------------------------------------

    def catch_up(self, until_seq: int | None = None, *, flush_every: int = 0,
                 observe: Callable[[Event], None] | None = None) -> int:
        """Apply every event after the last applied one (up to ``until_seq``); returns how many.

        ``flush_every`` > 0 writes files every that many events (rebuilds: bounded memory).
        ``observe`` is given each event too (``replay --check`` proves the recall index from the same read).
        """
        n = 0
        route = self._route
        last = None
        for rec in self.log.records(self.seq + 1, until_seq=until_seq):
            ev = rec.event
            for apply in route.get(ev.type, ()):
                apply(ev)
            if observe is not None:
                observe(ev)
            n += 1
            last = rec
            if flush_every and n % flush_every == 0:
                self.seq, self.fingerprint = rec.seq, rec.fingerprint
                for p in self.projections:
                    p.flush()
        if last is not None:
            self.seq, self.fingerprint = last.seq, last.fingerprint
        return n

    def apply_appended(self, events: list[Event], fingerprint: str) -> None:
        """Apply events this process just appended (already stamped), the last one's checksum given.

        The caller guarantees they directly follow ``self.seq``; it saves reading back
        what was just written.
        """
        route = self._route
        for ev in events:
            for apply in route.get(ev.type, ()):
                apply(ev)
        self.seq, self.fingerprint = events[-1].seq, fingerprint

    def flush(self) -> None:
        """Write changed files of every projection, then the checkpoint."""
        try:
            for p in self.projections:
                p.flush()
        except ProjectionDrift:
            self.rebuild(until_seq=self.seq)
            return
        if self.use_checkpoint:
            self._save_checkpoint()

    # -- rebuilding ------------------------------------------------------------------

    def rebuild(self, until_seq: int | None = None) -> None:
        """Replay the log into fresh files and swap them in (crash-safe; see the module docstring)."""
        staging = os.path.join(self.root, STAGING)
        shutil.rmtree(staging, ignore_errors=True)
        fresh = Projector(self.log, staging, [type(p).fresh_like(p, staging) for p in self.projections], self.fs,
                          checkpoint=False)
        fresh.catch_up(until_seq, flush_every=REBUILD_FLUSH_EVENTS)
        for p in fresh.projections:
            p.flush()
        fresh._save_checkpoint()  # noqa: SLF001 - the staged tree's own checkpoint, moved last
        staged = sorted(_walk_files(staging))
        owned = self._owned_files()
        journal = os.path.join(self.root, JOURNAL)
        self.fs.atomic_write(journal, msgspec.json.encode({"staging": STAGING, "files": staged,
                                                           "remove": sorted(set(owned) - set(staged))}))
        self.finish_pending_rebuild()
        self.reload()
        for p in self.projections:
            p.after_rebuild()

    def finish_pending_rebuild(self) -> bool:
        """Complete the moves of an interrupted rebuild (its journal names them); True if there was one."""
        journal = os.path.join(self.root, JOURNAL)
        try:
            with open(journal, "rb") as f:
                plan = msgspec.json.decode(f.read())
            staging = os.path.join(self.root, plan["staging"])
            files, remove = list(plan["files"]), list(plan["remove"])
        except FileNotFoundError:
            shutil.rmtree(os.path.join(self.root, STAGING), ignore_errors=True)  # a rebuild that died before its plan
            return False
        except (OSError, ValueError, KeyError, TypeError, msgspec.MsgspecError):
            os.unlink(journal)  # a torn journal: the staged tree never became the plan; live files are untouched
            shutil.rmtree(os.path.join(self.root, STAGING), ignore_errors=True)
            return False
        ckpt = CHECKPOINT
        for rel in [r for r in files if r != ckpt] + ([ckpt] if ckpt in files else []):
            src, dst = os.path.join(staging, rel), os.path.join(self.root, rel)
            if os.path.exists(src):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                self.fs.rename(src, dst)
        for rel in remove:
            if rel in files or not _inside(self.root, rel):
                continue
            try:
                self.fs.unlink(os.path.join(self.root, rel))
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                pass
        for d in {os.path.dirname(os.path.join(self.root, r)) for r in files} | {self.root}:
            if os.path.isdir(d):
                self.fs.fsync_dir(d)
        self.fs.unlink(journal)
        shutil.rmtree(staging, ignore_errors=True)
        return True

    def _owned_files(self) -> list[str]:
        """Relative paths of every file the projections own now: their outputs and what lies in their directories."""
        out = {rel for p in self.projections for rel in p.outputs()}
        for p in self.projections:
            for rel in p.owned_dirs():
                out.update(_walk_files(os.path.join(self.root, rel), prefix=rel))
        if os.path.exists(self._ckpt_path()):
            out.add(CHECKPOINT)
        return sorted(out)

    def outputs_missing(self) -> bool:
        """True if a file some projection holds (as of its checkpoint) is not on disk.

        One directory listing per directory instead of a ``stat`` per file (a workspace of 10M
        events holds ~20,000 session files); a name the listing lacks is asked of the file system.
        """
        listed: dict[str, set[str]] = {}
        for p in self.projections:
            for rel in p.outputs():
                d, name = os.path.split(p.path(rel))
                names = listed.get(d)
                if names is None:
                    names = listed[d] = _present_names(d)
                if name not in names and not os.path.exists(os.path.join(d, name)):
                    return True
        return False

    def _reset_states(self) -> None:
        self.seq, self.fingerprint = 0, ""
        for p in self.projections:
            p.load(None)

    def clean_temp_files(self) -> None:
        """Remove ``*.tmp`` left by a crash in any directory a projection owns; finish an interrupted rebuild."""
        for p in self.projections:
            for rel in p.owned_dirs():
                for dirpath, _dirs, _files in os.walk(os.path.join(self.root, rel)):
                    remove_stray_temp_files(dirpath)
        remove_stray_temp_files(os.path.join(self.root, "state"))
        remove_stray_temp_files(os.path.join(self.root, "memory"))
        if self.finish_pending_rebuild():
            self.reload()


def _present_names(directory: str) -> set[str]:
    """Names in ``directory`` that ``os.path.exists`` holds true for (files and directories, links followed)."""
    try:
        with os.scandir(directory) as it:
            return {e.name for e in it if e.is_file() or e.is_dir()}
    except OSError:
        return set()


def _walk_files(top: str, prefix: str = "") -> list[str]:
    """Relative paths (under ``prefix``) of every regular file below ``top``."""
    out = []
    for dirpath, _dirs, files in os.walk(top):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), top)
            out.append(os.path.normpath(os.path.join(prefix, rel)) if prefix else rel)
    return out


def _inside(root: str, rel: str) -> bool:
    """True when ``rel`` names a path under ``root`` (never ``..`` or absolute)."""
    full = os.path.realpath(os.path.join(root, rel))
    return full.startswith(os.path.realpath(root) + os.sep)


__all__ = ["CHECKPOINT", "JOURNAL", "OS_FS", "STAGING", "Projector"]
