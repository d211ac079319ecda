"""What the local log says about every session's sync versions: the fold ``push`` and ``pull`` share.

The gateway decides by version (``eventlog.app.gateway.rows``), so the device must know the
version of each of its own rows too. ``SyncState`` folds the whole log, mirroring the
sessions projection (which session is visible, its fields, its live messages in order)
and adding, per session register and per message, its version: for a local event
``(max(ts, seen + 1 ms), device origin, content hash)`` with the hash computed lazily
(``rev`` None until needed), and for events a pull wrote, the gateway's exact version.

A pull writes one atomic batch: ``sync.pulled`` first (``count`` = how many events follow,
plus the final versions of every row it touched), then those events. The fold applies the
events like any others, then the versions; the events are not changes to push back to
that gateway (they came from it), but they are changes for any other gateway. Positions
come from the same log: the newest ``sync.pushed`` / ``sync.pulled`` of a (target, user).

The device origin is ``evlog:`` + the fingerprint of the log's first record: stable for
the life of the log, different between workspaces (and never a secret).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventlog.app.gateway.rows import TOMBSTONE_REV, ZERO, MessageRow, SessionRow, Version, message_rev, ms_of_iso
from eventlog.app.gateway.screen import ceiling_ms
from eventlog.app.workspace import Workspace
from eventlog.events import (
    ErasureRecorded,
    Event,
    MessageAppended,
    MessageUpdated,
    OffsetReset,
    RecordErased,
    SessionConsolidated,
    SessionCreated,
    SessionDeleted,
    SessionUpdated,
    SyncPulled,
    SyncPushed,
)
from eventlog.log import Log
from eventlog.timeutil import normalize_time

Row = tuple[str, str | None]  # (session key, message id or None for the session register)


class LocalMsg:
    """A live local message: its version and the seqs of the events that built it."""

    __slots__ = ("ms", "origin", "rev", "seqs")

    def __init__(self, ms: int, origin: str, rev: str | None, seqs: list[int]) -> None:
        self.ms, self.origin, self.rev, self.seqs = ms, origin, rev, seqs


class LocalReg:
    """A session as the local projection shows it, with its register's version and ``cleared``."""

    __slots__ = ("key", "visible", "deleted", "title", "preview", "metadata", "project", "created_ms", "ms", "origin",
                 "rev", "cleared", "gen", "consolidated", "msgs", "seq")

    def __init__(self, key: str) -> None:
        self.key = key
        self.visible = False
        self.deleted = True  # the register is dead (deleted or never written); visible anyway while messages live
        self.title = ""
        self.preview: str | None = None  # set explicitly, else None (derived previews are display only)
        self.metadata: dict[str, Any] = {}
        self.project = ""
        self.created_ms = 0
        self.ms, self.origin = 0, ""
        self.rev: str | None = ""
        self.cleared: Version = ZERO
        self.gen = 0  # seq of the event that created the visible session (its dedup generation)
        self.consolidated = 0
        self.msgs: dict[str, LocalMsg] = {}
        self.seq = 0  # the last local event that changed the register

    def row(self) -> SessionRow:
        """The register as a gateway row (display fields left empty)."""
        if self.deleted:
            r = SessionRow(key=self.key, deleted=True, cleared=self.cleared)
        else:
            r = SessionRow(key=self.key, title=self.title, preview=self.preview or "",
                           preview_set=self.preview is not None, metadata=self.metadata, project=self.project,
                           created_ms=self.created_ms, deleted=False, cleared=self.cleared)
        r.version = self.version()
        return r

    def version(self) -> Version:
        """The register's version (its content hash computed now if needed)."""
        if self.rev is None:
            self.rev = TOMBSTONE_REV if self.deleted else SessionRow(
                key=self.key, title=self.title, preview=self.preview or "", preview_set=self.preview is not None,
                metadata=self.metadata, project=self.project, created_ms=self.created_ms, deleted=False).rev()
        return (self.ms, self.origin, self.rev)


@dataclass
class Positions:
    """Where a (gateway, user) pair stands in this log."""

    push_seq: int = 0
    push_epoch: str = ""
    pull_seq: int = 0  # the gateway change counter value pulled up to
    pull_epoch: str = ""
    own_change_seqs: list[tuple[str, int]] = field(default_factory=list)  # (epoch, change_seq) of our pushes
    accounts: set[tuple[str, str]] = field(default_factory=set)  # every (target, user) this log synced with
    rejected: dict[str, list[str]] = field(default_factory=dict)  # "push"/"pull" -> reasons of refused rows
    refused_push: list[tuple[int, str]] = field(default_factory=list)  # (log seq of the row, why) not retried since


def device_origin(log: Log) -> str:
    """This log's writer id for versions: ``evlog:`` + the first record's fingerprint."""
    rec = log.find(log.log_start)
    if rec is not None and isinstance(rec.event, RecordErased) and rec.event.origin:
        return rec.event.origin  # the first line was erased: its marker keeps the name (eventlog.erasure)
    return "evlog:" + (rec.fingerprint.split(":")[-1] if rec is not None else "empty")


class SyncState:
    """The fold (see the module docstring); ``apply`` one record at a time, in log order."""

    def __init__(self, origin: str, target: str, user: str) -> None:
        self.origin = origin
        self.target, self.user = target, user
        self.regs: dict[str, LocalReg] = {}
        self.pos = Positions()
        self.seq = 0  # last record folded
        self._pulled_left = 0
        self._pulled_ours = False
        self._pulled: SyncPulled | None = None
        self.ceiling = ceiling_ms()  # the latest version time taken from a peer (``screen.clamp_ms``)
        self.erased: set[str] = set()  # ``ref_hash`` names this log erased (a pull never brings them back)

    @property
    def in_pulled_batch(self) -> bool:
        """True between a ``sync.pulled`` and the last event it announced (versions not final yet)."""
        return self._pulled is not None

    def catch_up(self, log: Log, until: int | None = None) -> None:
        """Fold every event after the last one folded (up to ``until``)."""
        for ev in log.read(self.seq + 1, until_seq=until):
            self.apply(ev)

    def reg(self, key: str) -> LocalReg:
        r = self.regs.get(key)
        if r is None:
            r = self.regs[key] = LocalReg(key)
        return r

    def apply(self, ev: Event) -> Row | None:
        """Fold one event (in log order); returns the row it changed if that is a change to push to our target."""
        self.seq = seq = ev.seq
        pulled = self._pulled is not None
        row: Row | None = None
        match ev:
            case MessageAppended():
                row = self._appended(ev, seq)
            case MessageUpdated():
                row = self._msg_updated(ev, seq)
            case SessionCreated():
                row = self._created(ev, seq)
            case SessionUpdated():
                row = self._updated(ev)
            case SessionDeleted():
                row = self._deleted(ev)
            case SessionConsolidated():
                self._consolidated(ev)
            case SyncPulled():
                self.pos.accounts.add((ev.target, ev.user))
                self._start_pulled(ev)
                return None
            case ErasureRecorded():
                self.erased.update(ev.refs)
                return None
            case SyncPushed():
                self._pushed(ev)
                return None
            case _:
                return None
        if pulled and self._count_pulled():
            return None
        return row

    def _count_pulled(self) -> bool:
        """Count one event of the open ``sync.pulled`` batch (finishing it at its last); True when the
        batch is our own changes coming back (nothing to push)."""
        ours = self._pulled_ours
        self._pulled_left -= 1
        if self._pulled_left <= 0:
            self._finish_pulled()
        return ours

    def _pushed(self, ev: SyncPushed) -> None:
        """A push to some account; to ours, it moves our push position."""
        self.pos.accounts.add((ev.target, ev.user))
        if ev.target == self.target and ev.user == self.user:
            self.pos.push_seq, self.pos.push_epoch = ev.record_seq, ev.epoch
            if ev.change_seq:
                self.pos.own_change_seqs.append((ev.epoch, ev.change_seq))

    def _consolidated(self, ev: SessionConsolidated) -> None:
        r = self.regs.get(ev.session_key)
        if r is not None and r.visible and ev.up_to_count > r.consolidated:
            r.consolidated = ev.up_to_count

    # -- sessions -------------------------------------------------------------------

    def _bump(self, r: LocalReg, ts: str, *floors: int) -> None:
        r.ms = max(ms_of_iso(ts), r.ms + 1, *floors)
        r.origin, r.rev, r.seq = self.origin, None, self.seq

    def _created(self, ev: SessionCreated, seq: int) -> Row | None:
        r = self.reg(ev.session_key)
        if r.visible:
            return None
        r.visible, r.deleted = True, False
        r.title, r.preview, r.metadata, r.project = ev.title, None, dict(ev.metadata), ev.project
        r.created_ms = ms_of_iso(normalize_time(ev.created_at) or ev.ts)
        r.gen, r.consolidated, r.msgs = seq, 0, {}
        self._bump(r, ev.ts)
        return (r.key, None)

    def _updated(self, ev: SessionUpdated) -> Row | None:
        r = self.regs.get(ev.session_key)
        if r is None or not r.visible:
            return None
        if ev.title is not None:
            r.title = ev.title
        if ev.preview is not None:
            r.preview = ev.preview
        if ev.metadata is not None:
            r.metadata = {**r.metadata, **ev.metadata}
        r.deleted = False
        self._bump(r, ev.ts)
        return (r.key, None)

    def _deleted(self, ev: SessionDeleted) -> Row | None:
        r = self.regs.get(ev.session_key)
        if r is None or not r.visible:
            return None
        newest = max((m.ms for m in r.msgs.values()), default=0)
        self._bump(r, ev.ts, newest + 1)
        r.visible, r.deleted, r.rev = False, True, TOMBSTONE_REV
        r.title, r.preview, r.metadata, r.project, r.created_ms = "", None, {}, "", 0
        r.cleared = max(r.cleared, (r.ms, r.origin, r.rev))
        r.msgs, r.consolidated = {}, 0
        return (r.key, None)

    # -- messages -------------------------------------------------------------------

    def _appended(self, ev: MessageAppended, seq: int) -> Row:
        r = self.reg(ev.session_key)
        if not r.visible:  # created by its first message: fields empty, register unchanged (dead)
            r.visible = True
            r.title, r.preview, r.metadata, r.project = "", None, {}, ""
            r.created_ms = ms_of_iso(normalize_time(ev.timestamp) or ev.ts)
            r.gen, r.consolidated, r.msgs = seq, 0, {}
        old = r.msgs.get(ev.message_id)
        ms = max(ms_of_iso(ev.ts), r.cleared[0] + 1, old.ms + 1 if old is not None else 0)
        r.msgs[ev.message_id] = LocalMsg(ms, self.origin, None, [seq])
        return (r.key, ev.message_id)

    def _msg_updated(self, ev: MessageUpdated, seq: int) -> Row | None:
        r = self.regs.get(ev.session_key)
        m = r.msgs.get(ev.message_id) if r is not None and r.visible else None
        if m is None:
            return None
        m.ms = max(ms_of_iso(ev.ts), m.ms + 1)
        m.origin, m.rev = self.origin, None
        m.seqs.append(seq)
        return (ev.session_key, ev.message_id)

    # -- pulled batches -------------------------------------------------------------

    def _start_pulled(self, ev: SyncPulled) -> None:
        ours = ev.target == self.target and ev.user == self.user
        if ours:
            self.pos.pull_seq, self.pos.pull_epoch = ev.change_seq, ev.epoch
        self._pulled, self._pulled_left, self._pulled_ours = ev, ev.count, ours
        if ev.count <= 0:
            self._finish_pulled()

    def _finish_pulled(self) -> None:
        ev, self._pulled = self._pulled, None
        assert ev is not None
        top = self.ceiling  # a pull before the clamp may have recorded 9999-12-31 (``screen.clamp_page``)
        for key, ms, origin, rev, deleted, cms, corigin, crev in ev.sessions:
            r = self.reg(key)
            r.ms, r.origin, r.rev, r.deleted = min(ms, top), origin, rev, bool(deleted)
            r.cleared = (min(cms, top), corigin, crev)
        for key, mid, ms, origin, rev in ev.messages:
            reg = self.regs.get(key)
            m = reg.msgs.get(mid) if reg is not None else None
            if m is not None:
                m.ms, m.origin, m.rev = min(ms, top), origin, rev


def fold(ws: Workspace, target: str, user: str, until: int | None = None) -> SyncState:
    """The sync state of the whole log (up to ``until``) for one gateway and user."""
    state = SyncState(device_origin(ws.log), target, user)
    state.catch_up(ws.log, until)
    return state


def scan_positions(log: Log, target: str, user: str, until: int, *, refusals: dict[str, str] | None = None) -> Positions:
    """Just the positions, the accounts synced with, and refused rows (a cheaper pass than the full fold).

    ``refusals`` maps a processor name (``sync.processor_name``) to "push" or "pull": the
    ``offset.reset`` events with policy ``rejected`` under those names are collected.
    """
    pos = Positions()
    refusals = refusals or {}
    for ev in log.read(1, until_seq=until):
        if isinstance(ev, SyncPushed):
            pos.accounts.add((ev.target, ev.user))
            if ev.target == target and ev.user == user:
                pos.push_seq, pos.push_epoch = ev.record_seq, ev.epoch
                if ev.change_seq:
                    pos.own_change_seqs.append((ev.epoch, ev.change_seq))
                if ev.retried:  # every row refused before was sent again; what it refused again follows it
                    pos.refused_push.clear()
        elif isinstance(ev, SyncPulled):
            pos.accounts.add((ev.target, ev.user))
            if ev.target == target and ev.user == user:
                pos.pull_seq, pos.pull_epoch = ev.change_seq, ev.epoch
        elif isinstance(ev, OffsetReset) and ev.policy == "rejected" and ev.processor in refusals:
            direction = refusals[ev.processor]
            pos.rejected.setdefault(direction, []).append(ev.reason)
            if direction == "push":
                pos.refused_push.append((ev.to_seq - 1, ev.reason))
    return pos


# --------------------------------------------------------------------------- message content


class Contents:
    """Full content of local messages, read back from the log (or the session file) when needed."""

    def __init__(self, ws: Workspace, state: SyncState) -> None:
        self.ws, self.state = ws, state
        self._lines: dict[str, dict[str, MessageRow]] = {}

    def get(self, key: str, mid: str) -> MessageRow:
        """The message as it is now, with its version (content hash computed if missing)."""
        m = self.state.regs[key].msgs[mid]
        row = self._from_lines(key).get(mid) or self._from_log(key, mid, m.seqs)
        if m.rev is None:
            m.rev = row.rev()
        row.version = (m.ms, m.origin, m.rev)
        return row

    def version(self, key: str, mid: str) -> Version:
        m = self.state.regs[key].msgs[mid]
        if m.rev is None:
            self.get(key, mid)  # sets it
        assert m.rev is not None
        return (m.ms, m.origin, m.rev)

    def _from_lines(self, key: str) -> dict[str, MessageRow]:
        got = self._lines.get(key)
        if got is None:
            from eventlog.app.session_store import parse_message_line

            sessions = self.ws.sessions
            lines = self.ws.read_projection(lambda: sessions.lines(key)) if key in sessions.index else []
            got = {}
            for ln in lines:
                msg = parse_message_line(ln)
                got[msg.id] = MessageRow(key=key, message_id=msg.id, role=msg.role, content=msg.content,
                                         timestamp=msg.timestamp, tool_calls=msg.tool_calls, extra=msg.extra)
            self._lines[key] = got
        return got

    def _from_log(self, key: str, mid: str, seqs: list[int]) -> MessageRow:
        row: MessageRow | None = None
        for seq in seqs:
            rec = self.ws.log.find(seq)
            ev = rec.event if rec is not None else None
            if isinstance(ev, MessageAppended):
                row = message_row(ev)
            elif isinstance(ev, MessageUpdated) and row is not None:
                apply_update(row, ev.content, ev.tool_calls, ev.extra)
        if row is None:
            raise LookupError(f"message {mid!r} of session {key!r} is not in the log")
        return row


RESERVED_LINE_KEYS = ("id", "sessionKey", "role", "content", "timestamp", "tool_calls")


def apply_update(row: MessageRow, content: str, tool_calls: list[Any] | None, extra: dict[str, Any]) -> None:
    """What ``message.updated`` does to a message (as the sessions projection applies it)."""
    row.content = content
    if tool_calls is not None:
        row.tool_calls = tool_calls
    if extra:
        row.extra = {**row.extra, **{k: v for k, v in extra.items() if k not in RESERVED_LINE_KEYS}}


def line_extra(ev: MessageAppended) -> dict[str, Any]:
    """The message's extra fields as its session-file line keeps them (reserved names dropped)."""
    extra = ev.extra
    if extra and any(k in extra for k in RESERVED_LINE_KEYS):
        extra = {k: v for k, v in extra.items() if k not in RESERVED_LINE_KEYS}
    return extra


def message_row(ev: MessageAppended) -> MessageRow:
    """A new message as a gateway row, as its session-file line shows it (version set by the caller)."""
    return MessageRow(key=ev.session_key, message_id=ev.message_id, role=ev.role, content=ev.content,
                      timestamp=ev.timestamp or ev.ts, tool_calls=ev.tool_calls, extra=dict(line_extra(ev)))


__all__ = ["Contents", "LocalMsg", "LocalReg", "Positions", "SyncState", "apply_update", "device_origin", "fold",
           "line_extra", "message_rev", "message_row", "scan_positions"]
