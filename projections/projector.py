"""The projector: keeps a set of projections caught up with the log, and checkpoints them.

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
projector rebuilds all projections from the log. ``rebuild()`` is that same operation
on purpose: remove every output, start from an empty state, replay.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import msgspec

from eventlog.events import Event
from eventlog.fsio import FileSystem, remove_stray_temp_files
from eventlog.log import Log
from projections.base import Projection, ProjectionDrift

CHECKPOINT = os.path.join("state", "projections.ckpt")
_VERSION = 1


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
        self.fingerprint = ""
        self._route: dict[str, list[Callable]] = {}
        for p in projections:
            for tag in p.consumes:
                self._route.setdefault(tag, []).append(p.apply)
        if checkpoint:
            self._load_checkpoint()

    def __getitem__(self, name: str) -> Projection:
        return self.by_name[name]

    # -- checkpoint ------------------------------------------------------------------

    def _ckpt_path(self) -> str:
        return os.path.join(self.root, CHECKPOINT)

    def _load_checkpoint(self) -> None:
        try:
            with open(self._ckpt_path(), "rb") as f:
                ck = msgspec.json.decode(f.read(), type=_Checkpoint)
            if ck.version != _VERSION or set(ck.states) != set(self.by_name):
                return
            if ck.seq:
                rec = self.log.find(ck.seq)
                if rec is None or rec.fingerprint != ck.fingerprint:
                    return  # the log changed under the checkpoint (recovery cut it): rebuild
            for name, raw in ck.states.items():
                self.by_name[name].load(msgspec.json.decode(raw))
        except (OSError, ValueError, TypeError, KeyError, msgspec.MsgspecError):
            self._reset_states()
            return
        self.seq, self.fingerprint = ck.seq, ck.fingerprint

    def _save_checkpoint(self) -> None:
        states = {p.name: msgspec.Raw(msgspec.json.encode(p.state())) for p in self.projections}
        ck = _Checkpoint(_VERSION, self.seq, self.fingerprint, states)
        path = self._ckpt_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.fs.atomic_write(path, msgspec.json.encode(ck))

    # -- running ---------------------------------------------------------------------

    def catch_up(self, until_seq: int | None = None) -> int:
        """Apply every event after the last applied one (up to ``until_seq``); returns how many."""
        n = 0
        route = self._route
        last = None
        for ev in self.log.read(self.seq + 1, until_seq=until_seq):
            for apply in route.get(ev.type, ()):
                apply(ev)
            n += 1
            last = ev
        if last is not None:
            rec = self.log.find(last.seq)
            self.seq, self.fingerprint = last.seq, rec.fingerprint if rec else ""
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

    def rebuild(self, until_seq: int | None = None) -> None:
        """Remove every output, reset all states and replay the log (up to ``until_seq``)."""
        for p in self.projections:
            for rel in p.owned_dirs():
                self.fs.remove_tree(os.path.join(self.root, rel))
            for rel in p.outputs():
                p.remove_file(rel)
        self._reset_states()
        self.catch_up(until_seq)
        for p in self.projections:
            p.flush()
        if self.use_checkpoint:
            self._save_checkpoint()

    def outputs_missing(self) -> bool:
        """True if a file some projection holds (as of its checkpoint) is not on disk."""
        return any(not os.path.exists(p.path(rel)) for p in self.projections for rel in p.outputs())

    def _reset_states(self) -> None:
        self.seq, self.fingerprint = 0, ""
        for p in self.projections:
            p.load(None)

    def clean_temp_files(self) -> None:
        """Remove ``*.tmp`` left by a crash in any directory a projection owns."""
        for p in self.projections:
            for rel in p.owned_dirs():
                for dirpath, _dirs, _files in os.walk(os.path.join(self.root, rel)):
                    remove_stray_temp_files(dirpath)
        remove_stray_temp_files(os.path.join(self.root, "state"))
