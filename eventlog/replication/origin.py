"""Which events travel, the device that wrote them, and the fold that turns a local log into envelopes.

**What replicates** (``REPLICATED_TYPES``): what carries the user's meaning. Sessions and their
messages (created, updated, deleted, appended, message updates, consolidated), history entries
(notes from ``remember``, summaries), facts and every change to them (added, superseded,
forgotten, edited, pinned, archived, restored) and Dream runs (started with their exact inputs,
completed, failed). **What stays local**: the log's own records (recoveries, erased markers),
processor bookkeeping (offsets, diary, short-term memory, recalls, cursors, consolidation
failures) and sync positions (``sync.*``, ``replication.*``): each device recomputes them.
**Erasure travels** (``log.erasure``): a local erasure lists the origin keys of the replicated
events it erased (``ErasureRecorded.origins``) and the shared projects they belonged to
(``ErasureRecorded.projects``, names only): its envelope's ``project`` is the first of them, so the
teammates who share it receive it (an erasure across several projects is followed by one empty
erasure per other project, carrying that project's origin keys: ``eventlog.app.erase``); a device that receives it appends it as a
*pending* record (no seqs) in the pull's batch, then applies it to its own copies by origin key
(``sync.apply_erasures``) with a local erasure carrying the same ``replica`` and the origin
``rep:<device>:<seq>`` (applied; never pushed, since it has a replica). ``OriginFold.erased`` holds
every erased origin key: such an envelope is never appended again.

**The device id** lives in the log, as a ``replication.device`` event (a local one): it
survives ``replay`` (which only rebuilds projections) and is never pushed. The claim records
the identity of the log directory (``st_dev:st_ino``); a workspace copied (or restored)
elsewhere finds another identity and claims a new id for its events after the last seq a push
recorded (``replication.pushed``), so two copies never push two events under one origin key.
An existing log gets its first claim (``from_seq`` 1) on its first sync: every event it ever
wrote gets an origin then.

**Seq fields.** A fact's ``sources``/``source_seqs`` and a Dream run's ``input_cursors`` name
local seqs; an envelope carries their origin keys in ``Replica.refs`` and the receiver maps them
to its own seqs (``receive``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import msgspec

from eventlog.events import (
    DeviceClaimed,
    DreamStarted,
    ErasureRecorded,
    Event,
    HistoryAppended,
    MemoryAppended,
    MessageAppended,
    MessageUpdated,
    ReplicationPulled,
    ReplicationPushed,
    SessionConsolidated,
    SessionCreated,
    SessionDeleted,
    SessionUpdated,
)
from eventlog.log import Log
from eventlog.replication.clock import device_of, local_hlc
from eventlog.replication.envelope import Replicated

REPLICATED_TYPES = frozenset({
    "session.created", "session.updated", "session.deleted", "message.appended", "message.updated",
    "session.consolidated", "history.appended",
    "memory.appended", "memory.superseded", "memory.forgotten", "memory.edited", "memory.pinned",
    "memory.archived", "memory.restored",
    "dream.started", "dream.completed", "dream.failed",
    "log.erasure",
})

APPLIED_PREFIX = "rep:"  # ``ErasureRecorded.origin`` of the local erasure that applied a received one

#: Fields that hold seqs of other events in the writer's log, by event type.
SEQ_FIELDS: dict[str, tuple[str, ...]] = {
    "memory.appended": ("sources", "source_seqs"),
    "dream.started": ("input_cursors",),
}

_encoder = msgspec.json.Encoder()


def log_home(log_dir: str) -> str:
    """The identity of a log directory on this machine (``st_dev:st_ino``): a copy has another."""
    st = os.stat(log_dir)
    return f"{st.st_dev}:{st.st_ino}"


def new_device_id() -> str:
    """A fresh device id (random: two workspaces never share one)."""
    return "dev-" + uuid.uuid4().hex[:20]


class _Saved(msgspec.Struct):
    """``OriginFold`` as ``save`` keeps it, with the fingerprint of its last record."""

    seq: int
    fingerprint: str
    claims: list[tuple[int, str]]
    homes: list[str]
    floor: int
    pushed_upto: int
    cursors: list[tuple[str, str, int]]
    held: list[tuple[str, int, int]]
    local: list[tuple[int, int, str]]
    sessions: dict[str, str]
    facts: dict[str, str]
    runs: dict[str, str]
    erased: list[tuple[str, int]] = []
    pending: list[tuple[str, int, int]] = []  # (device, origin seq, local seq) of received erasures not yet applied


class OriginFold:
    """The replication view of one log, folded incrementally (``catch_up``): claims, positions,
    which origin keys it holds and the clock and project of every local event that travels."""

    def __init__(self) -> None:
        self.seq = 0
        self.saved_seq = 0  # the seq its kept copy was folded up to (``save``/``load``)
        self.claims: list[tuple[int, str]] = []
        self.homes: list[str] = []
        self.floor = 0
        self.pushed_upto = 0  # the highest local seq any push recorded
        self.cursors: dict[tuple[str, str], int] = {}  # (store, account) -> gateway position pulled up to
        self.held: dict[tuple[str, int], int] = {}  # origin key of a received event -> its local seq
        self.local: list[tuple[int, int, str]] = []  # (seq, hlc, project) of local events that travel
        self._session_project: dict[str, str] = {}
        self._fact_project: dict[str, str] = {}
        self._run_project: dict[str, str] = {}
        self.erased: set[tuple[str, int]] = set()  # origin keys of erased replicated events: never appended again
        self.pending: dict[tuple[str, int], int] = {}  # received erasures not applied yet -> their local seq

    @classmethod
    def of(cls, log: Log, checkpoint: str | None = None) -> OriginFold:
        """The fold of ``log``, starting from ``checkpoint`` (a file ``save`` wrote) when it still matches."""
        fold = cls.load(checkpoint, log) if checkpoint else cls()
        fold.catch_up(log)
        return fold

    def save(self, path: str, log: Log) -> None:
        """Keep the fold in ``path`` (disposable: a missing, stale or damaged file only costs a full fold)."""
        rec = log.find(self.seq) if self.seq and self.seq != self.saved_seq else None
        if rec is None:
            return  # nothing new since it was kept (or nothing to keep)
        saved = _Saved(seq=self.seq, fingerprint=rec.fingerprint, claims=self.claims, homes=self.homes,
                       floor=self.floor, pushed_upto=self.pushed_upto,
                       cursors=[(s, a, c) for (s, a), c in self.cursors.items()],
                       held=[(d, s, local) for (d, s), local in self.held.items()], local=self.local,
                       sessions=self._session_project, facts=self._fact_project, runs=self._run_project,
                       erased=sorted(self.erased), pending=[(d, s, v) for (d, s), v in self.pending.items()])
        tmp = f"{path}.tmp"
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(msgspec.msgpack.encode(saved))
        os.replace(tmp, path)
        self.saved_seq = self.seq

    @classmethod
    def load(cls, path: str, log: Log) -> OriginFold:
        """The fold ``save`` kept in ``path`` if the log still has that record unchanged, else an empty fold."""
        fold = cls()
        try:
            with open(path, "rb") as f:
                saved = msgspec.msgpack.decode(f.read(), type=_Saved)
        except (OSError, msgspec.MsgspecError):
            return fold
        rec = log.find(saved.seq) if saved.seq <= log.last_seq else None
        if rec is None or rec.fingerprint != saved.fingerprint:
            return fold
        fold.seq, fold.claims, fold.homes, fold.floor = saved.seq, saved.claims, saved.homes, saved.floor
        fold.saved_seq = saved.seq
        fold.pushed_upto, fold.local = saved.pushed_upto, saved.local
        fold.cursors = {(s, a): c for s, a, c in saved.cursors}
        fold.held = {(d, s): local for d, s, local in saved.held}
        fold._session_project, fold._fact_project, fold._run_project = saved.sessions, saved.facts, saved.runs
        fold.erased = {(d, s) for d, s in saved.erased}
        fold.pending = {(d, s): v for d, s, v in saved.pending}
        return fold

    def catch_up(self, log: Log) -> None:
        """Fold every event written since the last call."""
        if log.last_seq <= self.seq:
            return
        for ev in log.read(self.seq + 1):
            self.apply(ev)

    def apply(self, ev: Event) -> None:
        self.seq = ev.seq
        if isinstance(ev, DeviceClaimed):
            self.claims.append((ev.from_seq, ev.device))
            self.homes.append(ev.home)
        elif isinstance(ev, ReplicationPulled):
            self.floor = max(self.floor, ev.max_hlc)
            key = (ev.store, ev.account)
            self.cursors[key] = max(self.cursors.get(key, 0), ev.cursor)
        elif isinstance(ev, ReplicationPushed):
            self.pushed_upto = max(self.pushed_upto, ev.upto_seq)
        elif isinstance(ev, ErasureRecorded):
            self._erasure(ev)
        project = self._project(ev)
        if ev.replica is not None:
            self.held[(ev.replica.device, ev.replica.seq)] = ev.seq
        elif ev.type in REPLICATED_TYPES:
            self.local.append((ev.seq, local_hlc(ev.ts, self.floor), project))

    def _erasure(self, ev: ErasureRecorded) -> None:
        self.erased.update((d, s) for d, s in ev.origins)
        if ev.replica is None:
            return
        key = (ev.replica.device, ev.replica.seq)
        if ev.origin == f"{APPLIED_PREFIX}{key[0]}:{key[1]}":
            self.pending.pop(key, None)
        else:  # received in a pull's batch: applied after it (``sync.apply_erasures``)
            self.pending[key] = ev.seq

    def _project(self, ev: Event) -> str:
        """The project an event belongs to, as ``project_of``, learning the projects of new sessions, facts and runs."""
        match ev:
            case SessionCreated():
                self._session_project[ev.session_key] = ev.project
            case MemoryAppended():
                self._fact_project[ev.fact_id] = ev.project if ev.scope == "project" else ""
            case DreamStarted():
                self._run_project[ev.run_id] = ev.project
        return self.project_of(ev)

    def project_of(self, ev: Event) -> str:
        """The project an event belongs to (for team sharing): its session's, its fact's or its run's; an
        erasure's is the first project of what it erased (``ErasureRecorded.projects``)."""
        match ev:
            case SessionCreated() | HistoryAppended() | DreamStarted():
                return ev.project
            case MessageAppended() | MessageUpdated() | SessionUpdated() | SessionDeleted() | SessionConsolidated():
                return self._session_project.get(ev.session_key, "")
            case MemoryAppended():
                return ev.project if ev.scope == "project" else ""
            case ErasureRecorded():
                return ev.projects[0] if ev.projects else ""
        fact_id = getattr(ev, "fact_id", None)
        if isinstance(fact_id, str):
            return self._fact_project.get(fact_id, "")
        run_id = getattr(ev, "run_id", None)
        return self._run_project.get(run_id, "") if isinstance(run_id, str) else ""

    # -- reading ---------------------------------------------------------------------

    @property
    def device(self) -> str:
        """The device this workspace writes as now ("" before its first claim)."""
        return self.claims[-1][1] if self.claims else ""

    @property
    def devices(self) -> set[str]:
        """Every device id this log ever wrote as."""
        return {d for _s, d in self.claims}

    def local_seq(self, key: tuple[str, int]) -> int | None:
        """The local seq of the event with origin key ``key``, None if this log does not hold it."""
        if key in self.held:
            return self.held[key]
        if key[0] in self.devices and device_of(self.claims, key[1]) == key[0] and key[1] <= self.seq:
            return key[1]
        return None


def envelopes(log: Log, fold: OriginFold, device: str, after: int) -> Iterator[Replicated]:
    """Envelopes of this log's events written as ``device`` with an origin seq above ``after``, in seq order."""
    wanted = [(s, h, p) for s, h, p in fold.local if s > after and device_of(fold.claims, s) == device]
    if not wanted:
        return
    info = {s: (h, p) for s, h, p in wanted}
    held_by_seq = {v: k for k, v in fold.held.items()}
    for ev in log.read(wanted[0][0], until_seq=wanted[-1][0]):
        if ev.seq not in info or ev.type not in REPLICATED_TYPES:
            continue  # not one of them, or erased since (``log.erased``)
        hlc, project = info[ev.seq]
        refs = _refs(ev, fold, held_by_seq)
        data = _encoder.encode(ev)
        if refs:  # the origin keys of its seq fields, beside them (a decoder of the event skips the member)
            data = data[:-1] + b',"_refs":' + _encoder.encode(refs) + b"}"
        yield Replicated(origin=device, origin_seq=ev.seq, hlc=hlc, type=ev.type, body=msgspec.Raw(data),
                         project=project)


def _refs(ev: Event, fold: OriginFold, held_by_seq: dict[int, tuple[str, int]]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name in SEQ_FIELDS.get(ev.type, ()):
        keys = []
        for seq in getattr(ev, name):
            key = held_by_seq.get(seq)
            if key is None:
                device = device_of(fold.claims, seq)
                key = (device, seq) if device else None
            if key is not None:
                keys.append(list(key))
        if keys:
            out[name] = keys
    return out


def claim_event(log: Log, fold: OriginFold) -> DeviceClaimed | None:
    """The ``replication.device`` this log needs before it syncs (None: its claim holds).

    The first claim covers the whole log; a log whose directory is not the one it claimed in
    (a copy) claims a new device from the seq after its last recorded push."""
    home = log_home(log.dir)
    if not fold.claims:
        return DeviceClaimed(device=new_device_id(), from_seq=1, home=home)
    if fold.homes[-1] != home:
        return DeviceClaimed(device=new_device_id(), from_seq=max(fold.pushed_upto, fold.claims[-1][0] - 1) + 1,
                             home=home)
    return None
