"""Sync with a MySQL gateway: ``push`` local changes, ``pull`` the gateway's, ``status`` of both.

Both directions are processors with positions kept in the log. **Push** reads the log
after its position (the newest ``sync.pushed`` for this gateway and user), collects the
session registers and messages that local events changed (``session.created/updated/
deleted``, ``message.appended/updated``; events a pull from this gateway wrote are not
changes for it), and sends them in batches: each batch is one transaction of guarded
``INSERT ... ON DUPLICATE KEY UPDATE`` (last write wins, ``eventlog.app.gateway.rows``), and
only after its COMMIT is ``sync.pushed`` (the last record the batch covers) appended to
the log. A crash or a dropped connection between the two sends that batch again on the
next run, which changes nothing: rows are keyed and an equal version is no change. Deletes
travel as tombstones. A sender thread runs batch k on the connection while batch k+1 is
read from the log and rendered, so the server and the reader work at the same time.

**Pull** asks for rows whose ``change_seq`` is above its position (the newest
``sync.pulled``), skipping the counter values of this device's own pushes, page by page in
one consistent snapshot each (``eventlog.app.gateway.changes``). ``sync_plan`` turns a page
into events, keeping whatever is newer locally; the page's ``sync.pulled`` (new position,
how many events follow, final versions) and those events are ONE atomic append, so a pull
is never half applied and never applied twice. The position belongs to one gateway user
row (its ``epoch``): against a recreated database both positions start over, which is safe
because every write is idempotent.

Credentials stay in the DSN object; events, reports and errors name ``host:port/database``
and the user's e-mail only.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import msgspec

from eventlog.errors import ConfigError, EvlogError
from eventlog.events import Event, MessageAppended, MessageUpdated, SyncPulled, SyncPushed
from eventlog.app.workspace import Workspace
from eventlog.app.gateway.sync_plan import plan_page, register_differs
from eventlog.app.gateway.sync_state import (
    Contents,
    SyncState,
    apply_update,
    device_origin,
    fold,
    line_extra,
    message_row,
    scan_positions,
)
from eventlog.app.gateway import rows as R
from eventlog.app.gateway.changes import changed_sessions, count_changed_messages, fetch_changes
from eventlog.app.gateway.connection import DSN, Connection
from eventlog.app.gateway.schema import migrate
from eventlog.app.gateway.users import User, resolve_user

BATCH_ROWS = 5000  # rows (sessions + messages) per push transaction (the first ones smaller, see _Pusher)
FIRST_BATCH_ROWS = 500
BATCH_BYTES = 4_000_000  # ... or fewer, to keep a transaction's statements small
PAGE_ROWS = 1000  # rows per pull page (a page keeps whole transactions, so it may hold more)
CONTENT_CACHE = 50_000  # messages whose content a push keeps at hand for later updates


@dataclass
class SyncReport:
    """What one push or pull did (``evlog sync push|pull --json`` prints it)."""

    direction: str
    target: str
    user: str
    sessions: int = 0  # registers sent (push) or applied locally (pull)
    messages: int = 0
    batches: int = 0  # transactions committed (push) or pages applied (pull)
    events_written: int = 0  # local events the pull wrote (incl. sync.pulled)
    ignored: int = 0  # incoming rows older than the local copy (pull)
    rebuilt: int = 0  # sessions a pull had to rebuild (see eventlog.app.gateway.sync_plan)
    position_before: int = 0  # push: log seq; pull: gateway change counter
    position_after: int = 0
    reconnects: int = 0
    resets: list[str] = field(default_factory=list)


@dataclass
class StatusReport:
    """What is pending each way (``evlog sync status``)."""

    target: str
    user: str
    log_end: int
    push_position: int
    push_pending_events: int
    push_pending_sessions: int
    push_pending_messages: int
    gateway_change_seq: int
    pull_position: int
    pull_pending_sessions: int
    pull_pending_messages: int
    notes: list[str] = field(default_factory=list)


class Gateway:
    """The gateway as the sync sees it: a migrated connection and one user."""

    def __init__(self, dsn: str | DSN | None, user: str | int | None) -> None:
        if user is None or user == "":
            raise ConfigError("sync needs the gateway user: pass --user EMAIL")
        self.dsn = dsn if isinstance(dsn, DSN) else DSN.parse(dsn)
        self.conn = Connection(self.dsn)
        try:
            migrate(self.conn)
            self.user: User = self.conn.transaction(lambda cur: resolve_user(cur, user), doing="finding the user")
        except BaseException:
            self.conn.close()
            raise

    @property
    def target(self) -> str:
        return self.dsn.target

    def report(self, direction: str) -> SyncReport:
        return SyncReport(direction, self.target, self.user.email)

    def close(self) -> None:
        self.conn.close()


@contextlib.contextmanager
def _gateway(dsn: str | DSN | None, user: str | int | None) -> Iterator[Gateway]:
    gw = Gateway(dsn, user)
    try:
        yield gw
    finally:
        gw.close()


# --------------------------------------------------------------------------- push


def push(ws: Workspace, dsn: str | DSN | None = None, user: str | int | None = None, *,
         batch_rows: int = BATCH_ROWS, on_batch: Callable[[int], None] | None = None) -> SyncReport:
    """Send local changes since the last push to the gateway, in batches (see the module docstring).

    ``on_batch(n)`` is called after the n-th batch committed and before its position is
    recorded (tests use it to cut the connection or crash there).
    """
    if batch_rows < 1:
        raise ConfigError("batch_rows must be at least 1")
    with _gateway(dsn, user) as gw, _short_gil_turns():
        return _Pusher(ws, gw, batch_rows, on_batch).run()


@contextlib.contextmanager
def _short_gil_turns(seconds: float = 0.0005) -> Iterator[None]:
    """Hand the GIL over more often while a push runs.

    The sender thread makes a few round trips per batch; after each it waits for the GIL,
    which the busy reading-and-rendering thread otherwise keeps for up to 5 ms (Python's
    default switch interval), long enough to leave the server idle a quarter of the time.
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, seconds))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@dataclass
class _Batch:
    """One push transaction, rendered: what it covers and its statements."""

    upto: int  # the last log record it covers
    sessions: int
    messages: list[tuple[str, str, R.Version]]  # (key, id, version): for dropping rows a newer delete beats
    stmts: list[bytes]


class _Sender:
    """Runs rendered batches on the gateway connection in a thread, in order, one transaction each.

    The push renders batch k+1 while the server works on batch k. Results come back in
    order; after a failure the remaining batches are skipped.
    """

    def __init__(self, gw: Gateway) -> None:
        self.gw = gw
        self.jobs: queue.Queue[_Batch | None] = queue.Queue(maxsize=2)
        self.done: queue.Queue[tuple[_Batch, tuple[int, int] | None, BaseException | None]] = queue.Queue()
        self.abort = False
        self.pending = 0
        self.thread = threading.Thread(target=self._run, name="evlog-sync-push", daemon=True)
        self.thread.start()

    def _write(self, cur, b: _Batch) -> tuple[int, int]:  # noqa: ANN001
        seq = R.next_change_seq(cur, self.gw.user.id)
        R.execute(cur, b.stmts)
        rows = [R.MessageRow(key=k, message_id=mid, role="", content="", version=v) for k, mid, v in b.messages]
        return seq, len(rows) - R.drop_cleared(cur, self.gw.user.id, rows)

    def _run(self) -> None:
        failed = False
        while (b := self.jobs.get()) is not None:
            if failed or self.abort:
                continue
            try:
                result = self.gw.conn.transaction(lambda cur, b=b: self._write(cur, b), doing="pushing a batch")
                self.done.put((b, result, None))
            except BaseException as e:  # noqa: BLE001 - handed to the pushing thread, which raises it
                failed = True
                self.done.put((b, None, e))

    def submit(self, b: _Batch) -> None:
        self.pending += 1
        self.jobs.put(b)

    def results(self, *, wait: bool) -> Iterator[tuple[_Batch, tuple[int, int]]]:
        """Committed batches in order (all that are pending if ``wait``); raises a batch's error."""
        while self.pending:
            try:
                b, result, err = self.done.get(block=wait)
            except queue.Empty:
                return
            self.pending -= 1
            if err is not None:
                raise err
            assert result is not None
            yield b, result

    def close(self, *, abort: bool = False) -> None:
        self.abort = self.abort or abort
        if self.thread.is_alive():
            self.jobs.put(None)
            self.thread.join()


class _Pusher:
    def __init__(self, ws: Workspace, gw: Gateway, batch_rows: int, on_batch: Callable[[int], None] | None) -> None:
        self.ws, self.gw, self.batch_rows, self.on_batch = ws, gw, batch_rows, on_batch
        self.report = gw.report("push")
        self.dirty: dict[tuple[str, str | None], None] = {}
        self.cache: OrderedDict[tuple[str, str], R.MessageRow | MessageAppended] = OrderedDict()
        self.bytes = 0
        self.submitted = 0
        self.limit = min(batch_rows, FIRST_BATCH_ROWS)  # small at first so the server starts early

    def run(self) -> SyncReport:
        ws, gw, report = self.ws, self.gw, self.report
        ws.projections  # noqa: B018 - catch up before reading the log end
        stop = ws.log.last_seq
        pos = scan_positions(ws.log, gw.target, gw.user.email, stop)
        start = 1
        if pos.push_seq:
            if pos.push_epoch != gw.user.epoch:
                report.resets.append(f"the gateway user is not the one last pushed to ({pos.push_epoch} -> "
                                     f"{gw.user.epoch}): pushing everything again")
            elif pos.push_seq > stop:
                report.resets.append(f"push position {pos.push_seq} is past the log end {stop}: pushing everything again")
            else:
                start = pos.push_seq + 1
        report.position_before = report.position_after = start - 1
        self.state = state = SyncState(device_origin(ws.log), gw.target, gw.user.email)
        self.contents = Contents(ws, state)
        self.sender = _Sender(gw)
        try:
            for ev in ws.log.read(1, until_seq=stop):
                row = state.apply(ev)
                if ev.seq < start:
                    continue
                self._track(ev)
                if row is not None:
                    self.dirty[row] = None
                if (len(self.dirty) >= self.limit or self.bytes >= BATCH_BYTES) and not state.in_pulled_batch:
                    self._flush(ev.seq)
            if self.dirty:
                self._flush(stop)
            self._record(wait=True)
        except BaseException:
            self.sender.close(abort=True)
            raise
        self.sender.close()
        report.reconnects = gw.conn.reconnects
        return report

    def _track(self, ev: Event) -> None:
        """Keep the current content of messages the window touches (a push sends whole rows).

        A message appended in the window is kept as its (immutable) event until an update
        needs a row to change.
        """
        if isinstance(ev, MessageAppended):
            k = (ev.session_key, ev.message_id)
            self.cache[k] = ev
            self.cache.move_to_end(k)
            self.bytes += len(ev.content)
            if len(self.cache) > CONTENT_CACHE:
                self.cache.popitem(last=False)
        elif isinstance(ev, MessageUpdated):
            k = (ev.session_key, ev.message_id)
            r = self.state.regs.get(ev.session_key)
            m = r.msgs.get(ev.message_id) if r is not None and r.visible else None
            if m is None:
                return
            row = self.cache.get(k)
            if row is None:
                row = self.cache[k] = self.contents._from_log(ev.session_key, ev.message_id, m.seqs)  # noqa: SLF001
            else:
                if isinstance(row, MessageAppended):
                    row = self.cache[k] = message_row(row)
                apply_update(row, ev.content, ev.tool_calls, ev.extra)
            self.bytes += len(ev.content)

    def _flush(self, upto: int) -> None:
        """Render the dirty rows as one batch and hand it to the sender."""
        state, uid = self.state, self.gw.user.id
        index = self.ws.sessions.index  # type: ignore[attr-defined]
        sessions = []
        for key in dict.fromkeys(key for key, _ in self.dirty):
            reg = state.regs[key]
            row = reg.row()
            shown = index.get(key) if reg.visible else None
            if shown is not None:
                if not row.preview_set:
                    row.preview = shown.preview
                row.active_ms = R.ms_of_iso(shown.updated_at)
            sessions.append(row)
        values, sent = [], []
        for key, mid in self.dirty:
            if mid is None:
                continue
            reg = state.regs[key]
            m = reg.msgs.get(mid) if reg.visible else None
            if m is None:
                continue  # deleted since: the session's tombstone covers it
            got = self.cache.get((key, mid)) or self.contents.get(key, mid)
            if isinstance(got, MessageAppended):  # the common case: rendered straight from its event
                fields = (got.role, got.content, got.timestamp or got.ts, got.tool_calls, line_extra(got))
            else:
                fields = (got.role, got.content, got.timestamp, got.tool_calls, got.extra)
            if m.rev is None:
                m.rev = R.message_rev(*fields)
            version = (m.ms, m.origin, m.rev)
            values.append(R.message_values(uid, key, mid, *fields, version))
            sent.append((key, mid, version))
        stmts = R.session_statements(uid, sessions) + R.pack_messages(values)
        self.sender.submit(_Batch(upto, len(sessions), sent, stmts))
        self.submitted += 1
        self.limit = min(self.batch_rows, FIRST_BATCH_ROWS << self.submitted)
        self.dirty.clear()
        self.bytes = 0
        self._record(wait=False)

    def _record(self, *, wait: bool) -> None:
        """Append ``sync.pushed`` for every batch committed so far, in order (after its COMMIT)."""
        for b, (change_seq, sent) in self.sender.results(wait=wait):
            self.report.batches += 1
            self.report.sessions += b.sessions
            self.report.messages += sent
            if self.on_batch is not None:
                self.on_batch(self.report.batches)
            self.ws.append([SyncPushed(target=self.gw.target, user=self.gw.user.email, record_seq=b.upto,
                                       epoch=self.gw.user.epoch, change_seq=change_seq, sessions=b.sessions,
                                       messages=sent)])
            self.report.position_after = b.upto


# --------------------------------------------------------------------------- pull


def pull(ws: Workspace, dsn: str | DSN | None = None, user: str | int | None = None, *,
         page_rows: int = PAGE_ROWS) -> SyncReport:
    """Apply the gateway's changes since the last pull as local events (see the module docstring)."""
    if page_rows < 1:
        raise ConfigError("page_rows must be at least 1")
    with _gateway(dsn, user) as gw:
        report = gw.report("pull")
        with ws.lock:
            state = fold(ws, gw.target, gw.user.email)
        watermark, own = _pull_position(state, gw, report)
        report.position_before = report.position_after = watermark
        while True:
            page = gw.conn.transaction(lambda cur: fetch_changes(cur, gw.user.id, watermark, skip=own, limit=page_rows),
                                       doing="reading changes")
            if not page.rows:
                break
            with ws.lock:
                state.catch_up(ws.log)
                first = ws.log.last_seq + 1
                plan = plan_page(ws, state, page, first + 1)
                if not plan.changed and not page.messages:  # only our own pushes came back: nothing to record
                    watermark = page.watermark
                    if not page.more:
                        break
                    continue
                events = [_without_known_dedup(ws, ev) for ev in plan.events]
                marker = SyncPulled(target=gw.target, user=gw.user.email, change_seq=page.watermark,
                                    count=len(events), epoch=gw.user.epoch, sessions=plan.sessions,
                                    messages=plan.messages)
                seqs = ws.append([marker, *events])
                if seqs != list(range(first, first + len(events) + 1)):  # pragma: no cover - guarded above
                    raise EvlogError(f"pull batch was not written densely at seq {first}; run 'evlog verify'")
                state.catch_up(ws.log)
            report.batches += 1
            report.events_written += len(events) + 1
            report.sessions += plan.applied_sessions
            report.messages += plan.applied_messages
            report.ignored += plan.ignored
            report.rebuilt += plan.rebuilt
            watermark = report.position_after = page.watermark
            own = [s for s in own if s > watermark]
            if not page.more:
                break
        report.reconnects = gw.conn.reconnects
        return report


def _pull_position(state: SyncState, gw: Gateway, report: SyncReport) -> tuple[int, list[int]]:
    pos = state.pos
    if pos.pull_seq and pos.pull_epoch != gw.user.epoch:
        report.resets.append(f"the gateway user is not the one last pulled from ({pos.pull_epoch} -> "
                             f"{gw.user.epoch}): pulling everything again")
        watermark = 0
    else:
        watermark = pos.pull_seq
    own = sorted({s for epoch, s in pos.own_change_seqs if epoch == gw.user.epoch and s > watermark})
    return watermark, own


def _without_known_dedup(ws: Workspace, ev: Event) -> Event:
    """The event without its dedup key if the log already holds that key (the batch must be written whole)."""
    if ev.dedup and ws.log.lookup_dedup(ev.dedup) is not None:
        return msgspec.structs.replace(ev, dedup="")
    return ev


# --------------------------------------------------------------------------- status


def status(ws: Workspace, dsn: str | DSN | None = None, user: str | int | None = None) -> StatusReport:
    """Pending changes each way, and both positions."""
    with _gateway(dsn, user) as gw:
        with ws.lock:
            ws.projections  # noqa: B018
            stop = ws.log.last_seq
            state = SyncState(device_origin(ws.log), gw.target, gw.user.email)
            pos = scan_positions(ws.log, gw.target, gw.user.email, stop)
            start = pos.push_seq + 1 if pos.push_seq and pos.push_epoch == gw.user.epoch else 1
            rows: set[tuple[str, str | None]] = set()
            events = 0
            for ev in ws.log.read(1, until_seq=stop):
                row = state.apply(ev)
                if row is not None and ev.seq >= start:
                    rows.add(row)
                    events += 1
        scratch = gw.report("status")
        watermark, own = _pull_position(state, gw, scratch)

        def count(cur) -> tuple[int, int, int]:  # noqa: ANN001
            regs = changed_sessions(cur, gw.user.id, watermark)
            n, top = count_changed_messages(cur, gw.user.id, watermark, skip=own)
            return sum(1 for r in regs if register_differs(state, r)), n, top

        sessions, messages, top = gw.conn.transaction(count, doing="counting changes")
        return StatusReport(
            target=gw.target, user=gw.user.email, log_end=stop, push_position=start - 1,
            push_pending_events=events, push_pending_sessions=len({k for k, _ in rows}),
            push_pending_messages=sum(1 for _, m in rows if m is not None), gateway_change_seq=top,
            pull_position=watermark, pull_pending_sessions=sessions, pull_pending_messages=messages,
            notes=scratch.resets)
