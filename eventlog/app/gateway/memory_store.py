"""An in-memory gateway: ``MemorySessionStore`` and ``MemoryRemote`` over ``MemoryGateway``, no server needed.

``MemoryGateway`` holds what the MySQL gateway holds (``schema``): users with their change
counters, session registers and messages, per user, and applies every write by the same
last-write-wins rules. It exists so the session store contract (``tests/contracts/``), the
last-write-wins rules and sync's push and pull planning can be exercised without MySQL, in
tests and in examples; it keeps nothing on disk.

* ``MemorySessionStore`` is the ``SessionStore`` of one user (what ``MySQLSessionStore`` is
  over the tables), with ``update_message`` as a web client uses it. Its versions come from
  the same functions as the MySQL store's (``store.new_register``, ``message_version``,
  ``tombstone``, ``edited_message``, ...); only reading and writing rows differ.
* ``MemoryRemote`` is the ``sync.Remote`` of one user (what ``sync.Gateway`` is for direct
  ``--dsn`` sync): ``evlog``'s own ``sync.push``/``pull``/``status`` run against it with
  ``remote=gateway.remote(email)``.
* Writes go through ``rows.merge_session`` / ``rows.merge_message``: the guarded upserts of
  ``rows`` (``SESSIONS_TAIL``, ``MESSAGES_TAIL``) and the schema's triggers said in Python.
  A delete raising ``cleared`` removes older messages (the after-update trigger); a message
  older than its session's ``cleared`` is dropped after it is written (``rows.drop_cleared``);
  a message needs its session's row (the foreign key). Change counter values, the
  arrival order ``pos``, paging by whole counter values and the ``skip`` list of a pull
  follow ``rows.next_change_seq`` and ``changes.fetch_changes``.

One lock makes every operation one transaction (serialisable, as the MySQL store's row
locks make them for one user). Rows are copied in and out, as a database would.
``set_password`` and ``login`` check passwords under the same rate limits as ``auth.login``
(``login_limit``, with ``MemoryAttempts`` for the table). Not here: tokens (``auth``), the
web pages' listing queries, hand-written SQL (the ``sql`` origin the triggers give it), the
server's ``max_allowed_packet`` (rows are screened by ``screen`` with the strictest limits,
as every path is, but none is refused for size), and the HTTP sync API.
"""

from __future__ import annotations

import builtins
import copy
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from eventlog.app.gateway import ops
from eventlog.app.gateway import rows as R
from eventlog.app.gateway import screen as S
from eventlog.app.gateway.changes import Page
from eventlog.app.gateway.login_limit import DEFAULT_POLICY, LoginPolicy, MemoryAttempts, give_back, take_slots
from eventlog.app.gateway.ops import Prepared, Rejected
from eventlog.app.gateway.store import (
    check_origin,
    derived_preview,
    edited_message,
    first_message_ms,
    message_version,
    new_register,
    redacted,
    session_info,
    shown_register,
    source_ms,
    tombstone,
    updated_register,
)
from eventlog.app.gateway.sync import Remote
from eventlog.app.gateway.users import User, hash_password, normalize_email
from eventlog.app.session_store import Message, SessionInfo, SessionStore, _check_role
from eventlog.errors import BackendError, ConfigError, NotFound
from eventlog.timeutil import now_iso


@dataclass
class _Tables:
    """One user's rows: registers by key, messages by key then id (in arrival order)."""

    change_seq: int = 0
    sessions: dict[str, R.SessionRow] = field(default_factory=dict)
    messages: dict[str, dict[str, R.MessageRow]] = field(default_factory=dict)


class MemoryGateway:
    """The gateway's tables in memory (see the module docstring). ``name`` makes its sync target ``memory:<name>``."""

    def __init__(self, name: str = "gateway", *, clock: Callable[[], float] = time.time) -> None:
        self.target = f"memory:{name}"
        self.clock = clock
        self.lock = threading.RLock()
        self._users: dict[str, User] = {}
        self._passwords: dict[str, str] = {}  # e-mail -> scrypt hash (``users.hash_password``)
        self.attempts = MemoryAttempts()
        self._tables: dict[int, _Tables] = {}
        self._pos = 0  # the arrival counter of every message row (AUTO_INCREMENT pos)
        self.erasures: list[tuple[int, Any]] = []  # (user id, gateway erasure): ``gateway_erasures`` (gateway.erasure)

    # -- users ------------------------------------------------------------------------------

    def user(self, user: str | int, *, create: bool = True) -> User:
        """The user with this e-mail (created on first use, as ``users.resolve_user`` does) or this id."""
        with self.lock:
            if isinstance(user, int):
                for u in self._users.values():
                    if u.id == user:
                        return u
                raise NotFound(f"no gateway user with id {user}")
            email = normalize_email(user)
            found = self._users.get(email)
            if found is None:
                if not create:
                    raise NotFound(f"no gateway user {email}")
                found = self._users[email] = User(len(self._users) + 1, email, int(self.clock() * 1000))
                self._tables[found.id] = _Tables()
            return found

    def set_password(self, email: str, password: str) -> User:
        """Give the user (created if needed) this password (``auth.check_password_strength`` applies)."""
        from eventlog.app.gateway.auth import check_password_strength

        check_password_strength(password)
        user = self.user(email)
        hashed = hash_password(password)
        with self.lock:
            self._passwords[user.email] = hashed
        return user

    def login(self, email: str, password: str, *, client: str = "", policy: LoginPolicy = DEFAULT_POLICY) -> User:
        """The user if ``password`` is theirs; ``auth.TooManyAttempts`` past the limits, else ``auth.LoginFailed``.

        The same rules as ``auth.login`` (which also hands out a token; this does not).
        """
        from eventlog.app.gateway.auth import LoginFailed, TooManyAttempts, email_key_of, verify_or_dummy

        try:
            email = normalize_email(email)
        except ConfigError:
            email = ""
        key, client = email_key_of(email), client[:64]
        wait = take_slots(self.attempts, policy, key, client, int(self.clock() * 1000))
        if wait:
            raise TooManyAttempts(wait)
        with self.lock:
            user, stored = self._users.get(email), self._passwords.get(email, "")
        if not (verify_or_dummy(password, stored) and user is not None):
            raise LoginFailed()
        give_back(self.attempts, key, client)
        return user

    def store(self, user: str | int, *, origin: str = "gateway",
              clock: Callable[[], float] = time.time) -> MemorySessionStore:
        """A ``SessionStore`` of ``user`` (created on first use)."""
        return MemorySessionStore(self, user, origin=origin, clock=clock)

    def remote(self, user: str | int) -> MemoryRemote:
        """A ``sync.Remote`` of ``user`` for ``sync.push/pull/status(ws, remote=...)``."""
        return MemoryRemote(self, user)

    # -- the tables (call with ``lock`` held: one transaction) --------------------------------

    def tables(self, user_id: int) -> _Tables:
        return self._tables[user_id]

    def next_change_seq(self, user_id: int) -> int:
        """Take the user's next change counter value (``rows.next_change_seq``)."""
        t = self._tables[user_id]
        t.change_seq += 1
        return t.change_seq

    def upsert_sessions(self, user_id: int, rows: list[R.SessionRow], change_seq: int,
                        ceiling: int | None = None) -> None:
        """Guarded upserts of registers (``rows.upsert_sessions``); a risen ``cleared`` deletes older messages.

        With ``ceiling`` (a sync push's), stored versions past it lose (``rows._G``), and so do
        the messages of a session with a delete that are stamped past it (``rows.drop_past_ceiling``).
        """
        t = self._tables[user_id]
        for r in rows:
            old = t.sessions.get(r.key)
            new = R.merge_session(old, copy.deepcopy(r), change_seq, ceiling)
            if ceiling is not None and r.cleared != R.ZERO:
                msgs = t.messages.get(r.key, {})
                for mid in [mid for mid, m in msgs.items() if m.version[0] > ceiling]:
                    del msgs[mid]
            t.sessions[r.key] = new
            if old is not None and new.cleared > old.cleared:  # gateway_sessions_after_update
                msgs = t.messages.get(r.key, {})
                for mid in [mid for mid, m in msgs.items() if m.version < new.cleared]:
                    del msgs[mid]

    def upsert_messages(self, user_id: int, rows: list[R.MessageRow], change_seq: int,
                        ceiling: int | None = None) -> int:
        """Guarded upserts of messages, then ``drop_cleared``; how many were dropped. Needs their registers."""
        self.check_sessions(user_id, rows)
        t = self._tables[user_id]
        for m in rows:
            msgs = t.messages.setdefault(m.key, {})
            old = msgs.get(m.message_id)
            if old is None:
                self._pos += 1
            new = R.merge_message(old, copy.deepcopy(m), change_seq, self._pos if old is None else old.pos, ceiling)
            msgs[m.message_id] = new
        return self._drop_cleared(t, rows)

    def check_sessions(self, user_id: int, rows: list[R.MessageRow], coming: Sequence[R.SessionRow] = ()) -> None:
        """``BackendError`` if a message has no session row (stored or ``coming`` with it): the foreign key."""
        known = set(self._tables[user_id].sessions) | {r.key for r in coming}
        missing = sorted({m.key for m in rows} - known)
        if missing:
            raise BackendError(f"gateway {self.target}: a message has no session row ({missing[0]!r})")

    @staticmethod
    def _drop_cleared(t: _Tables, rows: list[R.MessageRow]) -> int:
        dropped = 0
        for key in sorted({m.key for m in rows}):
            bound = t.sessions[key].cleared
            if bound <= R.ZERO:
                continue
            msgs = t.messages.get(key, {})
            for mid in dict.fromkeys(m.message_id for m in rows if m.key == key and m.version < bound):
                stored = msgs.get(mid)
                if stored is not None and stored.version < bound:
                    del msgs[mid]
                    dropped += 1
        return dropped

    def changes(self, user_id: int, after: int, *, skip: list[int] | None = None, limit: int = 1000) -> Page:
        """The user's rows changed after ``after``, whole counter values at a time (``changes.fetch_changes``)."""
        skipped = set(skip or [])
        with self.lock:
            t = self._tables[user_id]
            cut = top = t.change_seq
            regs = sorted(r.change_seq for r in t.sessions.values() if r.change_seq > after)
            msgs = sorted(m.change_seq for m in self._all_messages(t)
                          if m.change_seq > after and m.change_seq not in skipped)
            for seqs in (regs, msgs):
                if len(seqs) >= max(1, limit):
                    cut = min(cut, seqs[max(0, limit - 1)])
            page = Page(watermark=cut, more=cut < top)
            page.sessions = {r.key: copy.deepcopy(r) for r in t.sessions.values() if after < r.change_seq <= cut}
            page.messages = sorted((copy.deepcopy(m) for m in self._all_messages(t)
                                    if after < m.change_seq <= cut and m.change_seq not in skipped),
                                   key=lambda m: m.pos)
            for key in sorted({m.key for m in page.messages} - set(page.sessions)):
                reg = t.sessions.get(key)
                if reg is not None:
                    page.context[key] = copy.deepcopy(reg)
            return page

    def pending(self, user_id: int, after: int, *, skip: list[int] | None = None) -> tuple[list[R.SessionRow], int, int]:
        """(registers changed after ``after``, messages changed after it not in ``skip``, the user's counter)."""
        skipped = set(skip or [])
        with self.lock:
            t = self._tables[user_id]
            regs = [copy.deepcopy(r) for r in t.sessions.values() if r.change_seq > after]
            n = sum(1 for m in self._all_messages(t) if m.change_seq > after and m.change_seq not in skipped)
            return regs, n, t.change_seq

    @staticmethod
    def _all_messages(t: _Tables) -> list[R.MessageRow]:
        return [m for msgs in t.messages.values() for m in msgs.values()]


class MemorySessionStore(SessionStore):
    """The sessions of one user of a ``MemoryGateway``: ``MySQLSessionStore``'s behaviour without a server."""

    def __init__(self, gateway: MemoryGateway, user: str | int, *, origin: str = "gateway",
                 clock: Callable[[], float] = time.time) -> None:
        self.gateway = gateway
        self.origin = check_origin(origin)
        self.clock = clock
        self.user = gateway.user(user)

    @property
    def user_id(self) -> int:
        return self.user.id

    def _now(self) -> int:
        return int(self.clock() * 1000)

    def _t(self) -> _Tables:
        return self.gateway.tables(self.user_id)

    def _shown(self, reg: R.SessionRow | None) -> tuple[R.SessionRow, int] | None:
        if reg is None:
            return None
        msgs = self._t().messages.get(reg.key, {})
        return shown_register(reg, len(msgs), lambda: self._first_message_ms(msgs))

    @staticmethod
    def _first_message_ms(msgs: dict[str, R.MessageRow]) -> int:
        first = next(iter(msgs.values()), None)
        return 0 if first is None else first_message_ms(first.timestamp, first.version[0])

    def _write_register(self, reg: R.SessionRow, change_seq: int) -> None:
        self.gateway.upsert_sessions(self.user_id, [reg], change_seq)

    def get_or_create(self, key: str, *, title: str = "", metadata: dict[str, Any] | None = None,
                      project: str = "") -> SessionInfo:
        title, metadata = redacted(title, metadata)  # the store's door for text, as MySQLSessionStore's
        with self.gateway.lock:
            shown = self._shown(self._t().sessions.get(key))
            if shown is None:
                seq = self.gateway.next_change_seq(self.user_id)
                old = self._t().sessions.get(key)
                now = self._now()
                self._write_register(new_register(key, old, now, self.origin, title=title,
                                                  metadata=dict(metadata or {}), project=project, created_ms=now,
                                                  active_ms=now), seq)
                shown = self._shown(self._t().sessions.get(key))
                assert shown is not None
            return _info(shown)

    def add_message(self, key: str, role: str, content: str, *, message_id: str | None = None,
                    timestamp: str | None = None, tool_calls: list[Any] | None = None,
                    extra: dict[str, Any] | None = None) -> Message:
        _check_role(role)
        mid = message_id or uuid.uuid4().hex
        stamp = timestamp or now_iso()
        content, tool_calls, extra = redacted(content, tool_calls, extra)
        with self.gateway.lock:
            seq = self.gateway.next_change_seq(self.user_id)
            t = self._t()
            old = t.sessions.get(key)
            existing = t.messages.get(key, {}).get(mid)
            if existing is not None:
                return _message_of(copy.deepcopy(existing))
            now = self._now()
            if self._shown(old) is None:  # like the local store: a new session first
                created = source_ms(stamp, now)
                reg = new_register(key, old, now, self.origin, created_ms=created, active_ms=created)
                self._write_register(reg, seq)
                old = reg
            assert old is not None
            row = R.MessageRow(key=key, message_id=mid, role=role, content=content, timestamp=stamp,
                               tool_calls=tool_calls, extra=dict(extra or {}))
            row.version = message_version(row, old.cleared, now, self.origin)
            self.gateway.upsert_messages(self.user_id, [row], seq)
            self._touch(key, source_ms(stamp, row.version[0]), derived_preview(role, content))
            return Message(id=mid, session_key=key, role=role, content=content, timestamp=stamp,
                           tool_calls=tool_calls, extra=dict(extra or {}))

    def _touch(self, key: str, ms: int, preview: str | None) -> None:
        """``MySQLSessionStore._touch``: the derived preview (unless one was set) and the newest activity."""
        reg = self._t().sessions[key]
        if not reg.preview_set and preview is not None:
            reg.preview = preview
        reg.active_ms = max(reg.active_ms, ms)

    def history(self, key: str, limit: int | None = None) -> list[Message]:
        with self.gateway.lock:
            if self._shown(self._t().sessions.get(key)) is None:
                raise NotFound(f"no session {key!r}")
            if limit is not None and limit <= 0:
                return []
            msgs = list(self._t().messages.get(key, {}).values())
            if limit is not None:
                msgs = msgs[-limit:]
            return [_message_of(copy.deepcopy(m)) for m in msgs]

    def get(self, key: str) -> SessionInfo | None:
        with self.gateway.lock:
            shown = self._shown(self._t().sessions.get(key))
            return None if shown is None else _info(shown)

    def list(self) -> list[SessionInfo]:
        with self.gateway.lock:
            shown = [self._shown(r) for r in self._t().sessions.values()]
            infos = [_info(s) for s in shown if s is not None]
        infos.sort(key=lambda s: s.key)
        infos.sort(key=lambda s: s.updated_at, reverse=True)
        return infos

    def update(self, key: str, *, title: str | None = None, preview: str | None = None,
               metadata: dict[str, Any] | None = None) -> SessionInfo:
        title, preview, metadata = redacted(title, preview, metadata)
        with self.gateway.lock:
            old = self._t().sessions.get(key)
            shown = self._shown(old)
            if shown is None:
                raise NotFound(f"no session {key!r}")  # (MySQL rolls the counter value back)
            seq = self.gateway.next_change_seq(self.user_id)
            reg = updated_register(key, old, shown[0], self._now(), self.origin, title=title, preview=preview,
                                   metadata=metadata, active_ms=max(self._now(), shown[0].active_ms))
            self._write_register(reg, seq)
            shown = self._shown(self._t().sessions.get(key))
            assert shown is not None
            return _info(shown)

    def delete(self, key: str) -> bool:
        with self.gateway.lock:
            seq = self.gateway.next_change_seq(self.user_id)
            old = self._t().sessions.get(key)
            if self._shown(old) is None:
                return False
            assert old is not None
            msgs = self._t().messages.get(key, {})
            newest = max((m.version[0] for m in msgs.values()), default=None)
            self._write_register(tombstone(key, old, self._now(), newest, self.origin), seq)
            return True

    def update_message(self, key: str, message_id: str, content: str, *,
                       tool_calls: builtins.list[Any] | None = None, extra: dict[str, Any] | None = None) -> Message:
        """``MySQLSessionStore.update_message``: replace a stored message's content (``extra`` merged)."""
        content, tool_calls, extra = redacted(content, tool_calls, extra)
        with self.gateway.lock:
            stored = self._t().messages.get(key, {}).get(message_id)
            if stored is None:
                raise NotFound(f"no message {message_id!r} in session {key!r}")  # (the counter value rolls back)
            seq = self.gateway.next_change_seq(self.user_id)
            m = edited_message(copy.deepcopy(stored), content, tool_calls, extra, self._now(), self.origin)
            self.gateway.upsert_messages(self.user_id, [m], seq)
            self._touch(key, m.version[0], None)
            return _message_of(m)


@dataclass
class _MemoryBatch(Prepared):
    """A push batch for a ``MemoryGateway``: the rows themselves instead of SQL statements."""

    session_rows: list[R.SessionRow] = field(default_factory=list)
    message_rows: list[R.MessageRow] = field(default_factory=list)


class MemoryRemote(Remote):
    """Sync with a ``MemoryGateway`` as one user: ``sync.Gateway``'s operations without a server."""

    def __init__(self, gateway: MemoryGateway, user: str | int) -> None:
        self.gateway = gateway
        self.user = gateway.user(user)
        self.target = gateway.target

    def prepare(self, sessions: list[R.SessionRow], messages: list[ops.MessageFields]) -> Prepared:
        """The batch's rows, through the screen every path runs (``screen.screen_push``, versions clamped)."""
        ceiling = S.ceiling_ms()
        sessions, messages, rejected = S.screen_push(sessions, messages, ceiling=ceiling)
        rows = [R.MessageRow(key=key, message_id=mid, role=role, content=content, timestamp=timestamp,
                             tool_calls=tool_calls, extra=extra, version=version)
                for key, mid, role, content, timestamp, tool_calls, extra, version in messages]
        return _MemoryBatch(stmts=[], sessions=len(sessions), messages=[(m.key, m.message_id, m.version) for m in rows],
                            rejected=rejected, ceiling=ceiling, session_rows=copy.deepcopy(sessions),
                            message_rows=copy.deepcopy(rows))

    def write(self, batch: Prepared) -> tuple[int, int, list[Rejected]]:
        assert isinstance(batch, _MemoryBatch), "a batch from MemoryRemote.prepare"
        if not batch.session_rows and not batch.message_rows:
            return 0, 0, []
        with self.gateway.lock:
            self.gateway.check_sessions(self.user.id, batch.message_rows, batch.session_rows)  # before any write
            seq = self.gateway.next_change_seq(self.user.id)
            self.gateway.upsert_sessions(self.user.id, batch.session_rows, seq, batch.ceiling)
            dropped = self.gateway.upsert_messages(self.user.id, batch.message_rows, seq, batch.ceiling)
        return seq, len(batch.message_rows) - dropped, []

    def changes(self, after: int, skip: list[int], limit: int) -> Page:
        return self.gateway.changes(self.user.id, after, skip=skip, limit=limit)

    def pending(self, after: int, skip: list[int]) -> tuple[list[R.SessionRow], int, int]:
        return self.gateway.pending(self.user.id, after, skip=skip)


def _info(shown: tuple[R.SessionRow, int]) -> SessionInfo:
    """``store.session_info`` of a copy: nothing returned shares a dict with the tables."""
    return session_info(copy.deepcopy(shown))


def _message_of(m: R.MessageRow) -> Message:
    return Message(id=m.message_id, session_key=m.key, role=m.role, content=m.content, timestamp=m.timestamp,
                   tool_calls=m.tool_calls, extra=dict(m.extra))
