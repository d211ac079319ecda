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

**Two ways to reach the gateway** (``Remote``): ``Gateway`` talks to the database directly
(``--dsn``: whoever holds the database credentials may act as any user, so this mode is for
one trusted user), ``eventlog.app.gateway.http_client.HttpRemote`` talks to the HTTP sync API
of ``evlog web --gateway`` with a per-user token (the server decides whose rows these are).
Both end in the same functions (``eventlog.app.gateway.ops``), and both record the same
positions: the target of an HTTP gateway is the database it serves, so a device moving from
``--dsn`` to ``--gateway`` carries on where it was.

**One account per workspace.** A push sends everything the log holds, pulled sessions
included, so a workspace that synced with a gateway as one user and then pushes (or pulls)
as another would mix both accounts. Both refuse unless ``allow_other_user`` is set.

**Refused rows.** Every path runs the same screen (``screen``): a row the gateway's tables
would refuse (too big, JSON nested deeper than the server takes, a column too long, ...),
a row the database refused anyway (``ops.write`` isolates it) or a gateway row the log
would refuse is recorded as an ``offset.reset`` event with policy ``rejected`` for the
processor ``sync.push:<user>@<target>`` / ``sync.pull:...`` (``processor_name``), in the
same atomic append as the batch's position; the rest goes through, and only an outage
fails a sync. ``status`` lists the push refusals since the last ``retry_rejected`` push,
which sends those rows again (its last ``sync.pushed`` says ``retried``).

Credentials stay in the DSN object; events, reports and errors name ``host:port/database``
and the user's e-mail only.
"""

from __future__ import annotations

import contextlib
import queue
import re
import sys
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import xxhash

from eventlog.app.gateway import erasure as gateway_erasure
from eventlog.app.gateway import ops
from eventlog.app.gateway import rows as R
from eventlog.app.gateway.changes import Page, changed_sessions, count_changed_messages, fetch_changes
from eventlog.app.gateway.connection import DSN, Connection, Timeouts
from eventlog.app.gateway.ops import Prepared, Rejected
from eventlog.app.gateway.schema import migrate
from eventlog.app.gateway.screen import drop_sessions, event_problem, screen_page
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
from eventlog.app.gateway.users import User, normalize_email, resolve_user
from eventlog.app.workspace import Workspace
from eventlog.errors import ConfigError, EvlogError, InvalidEventError
from eventlog.events import Event, MessageAppended, MessageUpdated, OffsetReset, SyncPulled, SyncPushed

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
    rejected: list[str] = field(default_factory=list)  # rows refused (recorded in the log), and why


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
    push_rejected: int = 0  # rows a push refused and no --retry-rejected has sent again since
    pull_rejected: int = 0  # gateway rows a pull refused so far
    rejected_rows: list[str] = field(default_factory=list)  # those push refusals: which row, and why
    notes: list[str] = field(default_factory=list)


class Remote(ABC):
    """A gateway as the sync sees it: whose rows, where, and the operations of ``ops`` for that user."""

    user: User
    target: str

    @property
    def reconnects(self) -> int:
        """How many times a dropped connection was replaced during this sync."""
        return 0

    @property
    def email(self) -> str:
        """The account's e-mail: known before anything is looked up or created on the gateway."""
        return self.user.email

    def report(self, direction: str) -> SyncReport:
        return SyncReport(direction, self.target, self.email)

    @abstractmethod
    def prepare(self, sessions: list[R.SessionRow], messages: list[ops.MessageFields]) -> Prepared:
        """Render a push batch (runs in the pushing thread, while the previous batch is being written)."""

    @abstractmethod
    def write(self, batch: Prepared) -> tuple[int, int, list[Rejected]]:
        """Write a prepared batch in one transaction: (change counter value, messages kept, rows refused)."""

    @abstractmethod
    def changes(self, after: int, skip: list[int], limit: int) -> Page:
        """One page of the user's rows changed after ``after`` (``ops.changes``)."""

    @abstractmethod
    def pending(self, after: int, skip: list[int]) -> tuple[list[R.SessionRow], int, int]:
        """(registers changed after ``after``, messages changed after it, the user's counter)."""

    def close(self) -> None:  # noqa: B027 - optional hook: a remote with nothing to release keeps it
        """Release the connection."""


class Gateway(Remote):
    """Direct sync: a migrated database connection and one user named by e-mail (trusted, not authenticated).

    Whoever holds the database credentials may name any user here: direct sync is for a
    single trusted user. Several users sync through the HTTP API (``http_client``) instead.
    """

    def __init__(self, dsn: str | DSN | None, user: str | int | None, *, timeouts: Timeouts | None = None) -> None:
        if user is None or user == "":
            raise ConfigError("sync needs the gateway user: pass --user EMAIL")
        self.dsn = dsn if isinstance(dsn, DSN) else DSN.parse(dsn)
        self._email = "" if isinstance(user, int) else normalize_email(user)
        self._user: User | None = None
        self.conn = Connection(self.dsn, timeouts=timeouts)
        try:
            migrate(self.conn)
            if isinstance(user, int):
                self._user = self.conn.transaction(lambda cur: resolve_user(cur, user), doing="finding the user")
        except BaseException:
            self.conn.close()
            raise

    @property
    def email(self) -> str:
        return self._user.email if self._user is not None else self._email

    @property
    def user(self) -> User:  # type: ignore[override]  # Remote.user is a plain attribute elsewhere; here, created lazily
        """The user row, created on first use: after the account check, so a refused sync creates nobody."""
        if self._user is None:
            self._user = self.conn.transaction(lambda cur: resolve_user(cur, self._email), doing="finding the user")
        return self._user

    @property
    def target(self) -> str:  # type: ignore[override]
        return self.dsn.target

    @property
    def reconnects(self) -> int:
        return self.conn.reconnects

    def prepare(self, sessions: list[R.SessionRow], messages: list[ops.MessageFields]) -> Prepared:
        user_id = self.user.id  # connected now: the server's limits and clock are known
        return ops.prepare(user_id, sessions, messages, max_packet=self.conn.max_packet, limits=self.conn.limits,
                           now=self.conn.now_ms())

    def write(self, batch: Prepared) -> tuple[int, int, list[Rejected]]:
        if not batch.stmts:
            return 0, 0, []
        return self.conn.transaction(lambda cur: ops.write(cur, self.user.id, batch), doing="pushing a batch")

    def changes(self, after: int, skip: list[int], limit: int) -> Page:
        return self.conn.transaction(lambda cur: fetch_changes(cur, self.user.id, after, skip=skip, limit=limit),
                                     doing="reading changes")

    def pending(self, after: int, skip: list[int]) -> tuple[list[R.SessionRow], int, int]:
        def count(cur: Any) -> tuple[list[R.SessionRow], int, int]:
            regs = changed_sessions(cur, self.user.id, after)
            n, top = count_changed_messages(cur, self.user.id, after, skip=skip)
            return regs, n, top

        return self.conn.transaction(count, doing="counting changes")

    def close(self) -> None:
        self.conn.close()


@contextlib.contextmanager
def _gateway(dsn: str | DSN | None, user: str | int | None, remote: Remote | None,
             timeouts: Timeouts | None = None) -> Iterator[Remote]:
    if remote is not None:
        if dsn is not None or user is not None:
            raise ConfigError("give either a remote gateway or a DSN and user, not both")
        yield remote  # the caller owns it
        return
    gw = Gateway(dsn, user, timeouts=timeouts)
    try:
        yield gw
    finally:
        gw.close()


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+/-]{0,127}")


def processor_name(direction: str, target: str, user: str) -> str:
    """The processor name refusals of a (gateway, user) are recorded under: ``sync.push:<user>@<target>``.

    A name the log would not take (unusual characters, too long) becomes
    ``sync.push:`` + a hash of both instead; the reason text still names them.
    """
    name = f"sync.{direction}:{user}@{target}"
    if _TOKEN.fullmatch(name):
        return name
    return f"sync.{direction}:" + xxhash.xxh3_64_hexdigest(f"{user}\n{target}".encode())


def _refusal(direction: str, target: str, user: str, r: Rejected) -> OffsetReset:
    """A refused row as the ``offset.reset`` event the sync records (one record skipped, with why)."""
    at = max(1, r.seq)
    return OffsetReset(processor=processor_name(direction, target, user), policy="rejected",
                       reason=f"gateway {target}, user {user}: {r.describe()}"[:2000],
                       from_seq=at - 1, to_seq=at + 1)


def _refusal_names(target: str, user: str) -> dict[str, str]:
    return {processor_name("push", target, user): "push", processor_name("pull", target, user): "pull"}


def _check_account(gw: Remote, accounts: set[tuple[str, str]], allow_other_user: bool) -> None:
    """Refuse to sync a workspace that synced with this gateway as another user (see the module docstring)."""
    others = sorted({u for t, u in accounts if t == gw.target and u != gw.email})
    if others and not allow_other_user:
        raise ConfigError(
            f"this workspace has synced with {gw.target} as {', '.join(others)}; syncing it as {gw.email} "
            "too would copy one account's sessions into the other (a push sends everything this log holds). "
            "Use a workspace per account (--home), or pass --as-another-user if that is what you want")


# --------------------------------------------------------------------------- push


def push(ws: Workspace, dsn: str | DSN | None = None, user: str | int | None = None, *,
         batch_rows: int = BATCH_ROWS, on_batch: Callable[[int], None] | None = None, remote: Remote | None = None,
         timeouts: Timeouts | None = None, everything: bool = False, allow_other_user: bool = False,
         retry_rejected: bool = False) -> SyncReport:
    """Send local changes since the last push to the gateway, in batches (see the module docstring).

    The gateway is ``dsn`` and ``user`` (direct), or ``remote`` (e.g. ``HttpRemote``).
    ``everything`` sends every session and message again, whatever the position says (rows
    the gateway refused before, once it takes them; the gateway keeps what is newer).
    ``retry_rejected`` also sends again, as they are now, the rows refused since the last
    retry (``status`` lists them); its last batch is marked ``retried``, and what is refused
    again is recorded again.
    ``on_batch(n)`` is called after the n-th batch committed and before its position is
    recorded (tests use it to cut the connection or crash there).
    """
    if batch_rows < 1:
        raise ConfigError("batch_rows must be at least 1")
    with _gateway(dsn, user, remote, timeouts) as gw, _short_gil_turns():
        return _Pusher(ws, gw, batch_rows, on_batch, everything=everything, allow_other_user=allow_other_user,
                       retry_rejected=retry_rejected).run()


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
    """One push transaction, prepared: the last log record it covers and what the remote will write."""

    upto: int
    prepared: Prepared
    retried: bool = False  # the last batch of a --retry-rejected push (its sync.pushed says so)


class _Sender:
    """Writes prepared batches through the remote in a thread, in order, one transaction each.

    The push prepares batch k+1 while the server works on batch k. Results come back in
    order; after a failure the remaining batches are skipped.
    """

    def __init__(self, gw: Remote) -> None:
        self.gw = gw
        self.jobs: queue.Queue[_Batch | None] = queue.Queue(maxsize=2)
        self.done: queue.Queue[tuple[_Batch, tuple[int, int, list[Rejected]] | None, BaseException | None]] = \
            queue.Queue()
        self.abort = False
        self.pending = 0
        self.thread = threading.Thread(target=self._run, name="evlog-sync-push", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        failed = False
        while (b := self.jobs.get()) is not None:
            if failed or self.abort:
                continue
            try:
                self.done.put((b, self.gw.write(b.prepared), None))
            except BaseException as e:  # noqa: BLE001 - handed to the pushing thread, which raises it
                failed = True
                self.done.put((b, None, e))

    def submit(self, b: _Batch) -> None:
        self.pending += 1
        self.jobs.put(b)

    def results(self, *, wait: bool) -> Iterator[tuple[_Batch, tuple[int, int, list[Rejected]]]]:
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
    def __init__(self, ws: Workspace, gw: Remote, batch_rows: int, on_batch: Callable[[int], None] | None, *,
                 everything: bool = False, allow_other_user: bool = False, retry_rejected: bool = False) -> None:
        self.ws, self.gw, self.batch_rows, self.on_batch = ws, gw, batch_rows, on_batch
        self.everything, self.allow_other_user, self.retry_rejected = everything, allow_other_user, retry_rejected
        self.report = gw.report("push")
        self.dirty: dict[tuple[str, str | None], None] = {}
        self.cache: OrderedDict[tuple[str, str], R.MessageRow | MessageAppended] = OrderedDict()
        self.bytes = 0
        self.submitted = 0
        self.limit = min(batch_rows, FIRST_BATCH_ROWS)  # small at first so the server starts early

    def run(self) -> SyncReport:
        ws, gw, report = self.ws, self.gw, self.report
        ws.catch_up()  # catch up before reading the log end
        stop = ws.log.last_seq
        pos = scan_positions(ws.log, gw.target, gw.email, stop, refusals=_refusal_names(gw.target, gw.email))
        _check_account(gw, pos.accounts, self.allow_other_user)
        if gateway_erasure.apply_pulled(ws, gw):  # never send back what another device erased
            stop = ws.log.last_seq
            pos = scan_positions(ws.log, gw.target, gw.email, stop, refusals=_refusal_names(gw.target, gw.email))
        start = 1
        if self.everything:
            report.resets.append("sending every session and message again (--all)")
        elif pos.push_seq:
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
            retried = self._retry_rows(pos.refused_push) if self.retry_rejected else False
            if self.dirty or retried:
                self._flush(stop, retried=retried)
            self._record(wait=True)
        except BaseException:
            self.sender.close(abort=True)
            raise
        self.sender.close()
        report.reconnects = gw.reconnects
        return report

    def _retry_rows(self, refused: list[tuple[int, str]]) -> bool:
        """Mark the rows of earlier refusals dirty again (those still in the log); True: this is a retry run."""
        for seq, _why in refused:
            rec = self.ws.log.find(seq)
            ev = rec.event if rec is not None else None
            key = getattr(ev, "session_key", None)
            if not isinstance(key, str) or key not in self.state.regs:
                continue
            reg = self.state.regs[key]
            mid = getattr(ev, "message_id", None)
            if isinstance(mid, str) and reg.visible and mid in reg.msgs:
                self.dirty[(key, mid)] = None
            elif mid is None:
                self.dirty[(key, None)] = None
        return True

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

    def _flush(self, upto: int, *, retried: bool = False) -> None:
        """Prepare the dirty rows as one batch and hand it to the sender (``retried``: the retry run's last)."""
        state = self.state
        index = self.ws.sessions.index
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
        messages: list[ops.MessageFields] = []
        for key, mid in self.dirty:
            if mid is None:
                continue
            reg = state.regs[key]
            m = reg.msgs.get(mid) if reg.visible else None
            if m is None:
                continue  # deleted since: the session's tombstone covers it
            got = self.cache.get((key, mid)) or self.contents.get(key, mid)
            if isinstance(got, MessageAppended):  # the common case: straight from its event
                fields = (got.role, got.content, got.timestamp or got.ts, got.tool_calls, line_extra(got))
            else:
                fields = (got.role, got.content, got.timestamp, got.tool_calls, got.extra)
            if m.rev is None:
                m.rev = R.message_rev(*fields)
            messages.append((key, mid, *fields, (m.ms, m.origin, m.rev)))
        self.sender.submit(_Batch(upto, self.gw.prepare(sessions, messages), retried))
        self.submitted += 1
        self.limit = min(self.batch_rows, FIRST_BATCH_ROWS << self.submitted)
        self.dirty.clear()
        self.bytes = 0
        self._record(wait=False)

    def _seq_of(self, r: Rejected, upto: int) -> int:
        """The log record a refused row came from (what ``--retry-rejected`` finds it by)."""
        reg = self.state.regs.get(r.key)
        if reg is not None and r.message_id is None and reg.seq:
            return reg.seq
        m = reg.msgs.get(r.message_id) if reg is not None and r.message_id is not None else None
        return m.seqs[-1] if m is not None and m.seqs else upto

    def _record(self, *, wait: bool) -> None:
        """Append ``sync.pushed`` for every batch committed so far, in order (after its COMMIT).

        Rows refused (by ``prepare`` here or by the server) are recorded in the same append.
        """
        gw = self.gw
        for b, (change_seq, sent, refused) in self.sender.results(wait=wait):
            self.report.batches += 1
            self.report.sessions += b.prepared.sessions
            self.report.messages += sent
            if self.on_batch is not None:
                self.on_batch(self.report.batches)
            rejected = [*b.prepared.rejected, *refused]
            resets = []
            for r in rejected:
                r.seq = self._seq_of(r, b.upto)
                resets.append(_refusal("push", gw.target, gw.user.email, r))
                self.report.rejected.append(r.describe())
            self.ws.append([SyncPushed(target=gw.target, user=gw.user.email, record_seq=b.upto,
                                       epoch=gw.user.epoch, change_seq=change_seq, sessions=b.prepared.sessions,
                                       messages=sent, retried=b.retried), *resets])
            self.report.position_after = b.upto


# --------------------------------------------------------------------------- pull


MAX_REFUSED_RETRIES = 20  # planned events the log refused despite the screening: sessions dropped, page re-planned


def pull(ws: Workspace, dsn: str | DSN | None = None, user: str | int | None = None, *,
         page_rows: int = PAGE_ROWS, remote: Remote | None = None, timeouts: Timeouts | None = None,
         allow_other_user: bool = False) -> SyncReport:
    """Apply the gateway's changes since the last pull as local events (see the module docstring).

    Rows the log would refuse are left out and recorded (``screen``); the rest is applied.
    """
    if page_rows < 1:
        raise ConfigError("page_rows must be at least 1")
    with _gateway(dsn, user, remote, timeouts) as gw:
        report = gw.report("pull")
        with ws.lock:
            state = fold(ws, gw.target, gw.email)
        _check_account(gw, state.pos.accounts, allow_other_user)
        if gateway_erasure.apply_pulled(ws, gw):  # erasures first: a deleted row is no change to pull
            with ws.lock:
                state = fold(ws, gw.target, gw.email)
        watermark, own = _pull_position(state, gw, report)
        report.position_before = report.position_after = watermark
        while True:
            page = gw.changes(watermark, own, page_rows)
            if not page.rows:
                break
            rejected = screen_page(page)
            with ws.lock, ws.log.turn():  # the write turn from planning to appending: the page lands where planned
                state.catch_up(ws.log)
                gateway_erasure.drop_erased(page, state.erased)  # after the catch-up: an erase that just ran counts
                applied = _apply_page(ws, gw, state, page, rejected)
            if applied is None:  # only our own pushes came back: nothing to record
                watermark = page.watermark
                if not page.more:
                    break
                continue
            plan, written = applied
            report.batches += 1
            report.events_written += written
            report.sessions += plan.applied_sessions
            report.messages += plan.applied_messages
            report.ignored += plan.ignored
            report.rebuilt += plan.rebuilt
            report.rejected += [r.describe() for r in rejected]
            watermark = report.position_after = page.watermark
            own = [s for s in own if s > watermark]
            if not page.more:
                break
        report.reconnects = gw.reconnects
        return report


def _apply_page(ws: Workspace, gw: Remote, state: SyncState, page: Page, rejected: list[Rejected]) -> Any:
    """Plan ``page`` and append it with its ``sync.pulled`` (and refusals) atomically; (plan, events written).

    None when there was nothing to record. If the log still refuses a planned event (a rule
    the screening does not know), the sessions of the refused events are taken out of the
    page as refused rows and the page is planned again, so a pull always moves on.
    """
    for _attempt in range(MAX_REFUSED_RETRIES + 1):
        first = ws.log.last_seq + 1
        try:
            plan = plan_page(ws, state, page, first + 1)
        except (TypeError, ValueError, AttributeError, KeyError):  # a row of a shape the plan cannot read
            bad = _bad_sessions(ws, state, page, first + 1)
            if not bad:
                raise
            for key, why in bad.items():
                rejected.extend(drop_sessions(page, {key}, why))
            continue
        if not plan.changed and not page.messages and not rejected:
            return None
        events = [_without_known_dedup(ws, ev) for ev in plan.events]
        marker = SyncPulled(target=gw.target, user=gw.user.email, change_seq=page.watermark,
                            count=len(events), epoch=gw.user.epoch, sessions=plan.sessions,
                            messages=plan.messages)
        resets = [_refusal("pull", gw.target, gw.user.email, r) for r in rejected]
        try:
            seqs = ws.append([marker, *events, *resets])
        except InvalidEventError as e:
            bad_keys = {getattr(ev, "session_key", "") for ev in events if event_problem(ev) is not None}
            if not bad_keys:
                raise
            rejected.extend(drop_sessions(page, bad_keys, f"the log refused an event made from it: {e}"))
            state.catch_up(ws.log)
            continue
        if seqs[:len(events) + 1] != list(range(first, first + len(events) + 1)):  # pragma: no cover - guarded above
            raise EvlogError(f"pull batch was not written densely at seq {first}; run 'evlog verify'")
        state.catch_up(ws.log)
        return plan, len(seqs)
    raise EvlogError("a pulled page kept producing events the log refuses; see 'evlog sync status'")  # pragma: no cover


def _bad_sessions(ws: Workspace, state: SyncState, page: Page, first: int) -> dict[str, str]:
    """Session key -> why, for the sessions of ``page`` that cannot be planned, or plan events the log refuses."""
    bad: dict[str, str] = {}
    for key in page.keys():  # noqa: SIM118 - Page.keys() is a method (keys in change order), not a dict's
        sub = Page(watermark=page.watermark, more=page.more,
                   sessions={k: r for k, r in page.sessions.items() if k == key},
                   context={k: r for k, r in page.context.items() if k == key},
                   messages=[m for m in page.messages if m.key == key])
        try:
            plan = plan_page(ws, state, sub, first)
        except (TypeError, ValueError, AttributeError, KeyError) as e:
            bad[key] = f"could not be turned into events: {e.__class__.__name__}: {e}"
            continue
        problems = [p for p in map(event_problem, plan.events) if p is not None]
        if problems:
            bad[key] = f"the log refused an event made from it: {problems[0]}"
    return bad


def _pull_position(state: SyncState, gw: Remote, report: SyncReport) -> tuple[int, list[int]]:
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


def status(ws: Workspace, dsn: str | DSN | None = None, user: str | int | None = None, *,
           remote: Remote | None = None, timeouts: Timeouts | None = None) -> StatusReport:
    """Pending changes each way, both positions, and how many rows each direction refused."""
    with _gateway(dsn, user, remote, timeouts) as gw:
        with ws.lock:
            ws.catch_up()
            stop = ws.log.last_seq
            state = SyncState(device_origin(ws.log), gw.target, gw.user.email)
            pos = scan_positions(ws.log, gw.target, gw.user.email, stop,
                                 refusals=_refusal_names(gw.target, gw.user.email))
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
        regs, messages, top = gw.pending(watermark, own)
        sessions = sum(1 for r in regs if register_differs(state, r))
        notes = list(scratch.resets)
        others = sorted({u for t, u in pos.accounts if t == gw.target and u != gw.user.email})
        if others:
            notes.append(f"this workspace also synced with {gw.target} as {', '.join(others)}")
        refused = [why for _, why in pos.refused_push]
        if refused:
            notes.append(f"push: {len(refused)} row(s) refused; newest: {refused[-1]}; once the cause is fixed, "
                         "'evlog sync push --retry-rejected' sends them again")
        pulled = pos.rejected.get("pull", [])
        if pulled:
            notes.append(f"pull: {len(pulled)} row(s) refused; newest: {pulled[-1]} (fetched again when the row "
                         "changes on the gateway)")
        return StatusReport(
            target=gw.target, user=gw.user.email, log_end=stop, push_position=start - 1,
            push_pending_events=events, push_pending_sessions=len({k for k, _ in rows}),
            push_pending_messages=sum(1 for _, m in rows if m is not None), gateway_change_seq=top,
            pull_position=watermark, pull_pending_sessions=sessions, pull_pending_messages=messages,
            push_rejected=len(refused), pull_rejected=len(pulled), rejected_rows=refused, notes=notes)
