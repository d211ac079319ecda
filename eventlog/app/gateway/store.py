"""``MySQLSessionStore``: the session store over the gateway tables, for one user.

It keeps the ``SessionStore`` contract (``eventlog.app.session_store``) so an agent loop or
a web app can use the gateway exactly as it uses a local workspace. Every method is one
transaction on one connection (``eventlog.app.gateway.connection``: BEGIN/COMMIT/ROLLBACK,
reconnect and retry once on a dropped connection); every query is parameterised and names
this store's user id, so another user's rows are never read or written.

Writes follow the gateway's last-write-wins rules (``eventlog.app.gateway.rows``): each one
is versioned ``(max(now, seen + 1 ms), origin, content hash)`` with ``origin`` naming this
writer (default ``gateway``) and ``clock`` injectable, takes a change counter value so the
devices' ``evlog sync pull`` sees it, and a delete leaves a tombstone that devices pull.
``update_message`` (not in the interface) edits a stored message, as a web client may.

Text written here never passes the log writer's redaction door (``eventlog.redact``): the
web view in gateway mode and agents using this store write straight to the tables. So every
write method passes its text through ``redacted`` first (the store's one door for text:
message content, tool calls and ``extra``, titles, previews, metadata), before it is
versioned, stored or returned: no secret the detector knows (``eventlog.secrets``) reaches
the gateway's tables this way either (INVARIANTS I24). Keys, ids and project paths name
things and are left alone, as the log's door leaves them.

The versions and the registers a write makes are computed by the pure functions below the
class (``new_register``, ``updated_register``, ``message_version``, ``tombstone``,
``edited_message``, ``shown_register``): the in-memory gateway (``memory_store``) writes
with the same ones.
"""

from __future__ import annotations

import builtins
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import msgspec

from eventlog.app.gateway import rows as R
from eventlog.app.gateway.connection import DSN, Connection
from eventlog.app.gateway.schema import migrate
from eventlog.app.gateway.users import User, check_password, resolve_user, set_password
from eventlog.app.session_store import Message, SessionInfo, SessionStore, _check_role
from eventlog.errors import ConfigError, NotFound
from eventlog.secrets import redact_values
from eventlog.timeutil import normalize_time, now_iso
from projections.sessions import PREVIEW_CHARS

ORIGIN_RE = re.compile(r"[A-Za-z0-9:._@-]{1,64}")


def check_origin(origin: str) -> str:
    """``origin`` if it is a usable writer id (ASCII letters, digits, ``:._@-``; at most 64)."""
    if not ORIGIN_RE.fullmatch(origin):
        raise ConfigError(f"origin must be 1-64 characters of [A-Za-z0-9:._@-], got {origin!r}")
    return origin


def redacted(*values: Any) -> tuple[Any, ...]:
    """The store's door for text (I24): each value (a string, or decoded JSON such as tool calls, ``extra`` or
    metadata; None passes) with every secret the detector knows replaced by ``[REDACTED:<kind>]``."""
    return tuple(v for v, _kinds in redact_values(list(values)))


def derived_preview(role: str, content: str) -> str | None:
    """The preview a message gives its session (as the sessions projection derives it), or None."""
    if role in ("user", "assistant") and content.strip():
        return " ".join(content.split())[:PREVIEW_CHARS]
    return None


class MySQLSessionStore(SessionStore):
    """The sessions of one gateway user (see the module docstring).

    Signatures after ``list`` say ``builtins.list``: in the class body ``list`` names that method.
    """

    def __init__(self, dsn: str | DSN | None, user: str | int, *, password: str | None = None,
                 origin: str = "gateway", clock: Callable[[], float] = time.time) -> None:
        self.dsn = dsn if isinstance(dsn, DSN) else DSN.parse(dsn)
        self.origin = check_origin(origin)
        self.clock = clock
        self.conn = Connection(self.dsn)
        self._owns_conn = True
        try:
            migrate(self.conn)
            self.user: User = self.conn.transaction(lambda cur: resolve_user(cur, user, password=password),
                                                    doing="finding the user")
        except BaseException:
            self.conn.close()
            raise

    @classmethod
    def bound(cls, conn: Connection, user: User, *, origin: str = "web",
              clock: Callable[[], float] = time.time) -> MySQLSessionStore:
        """A store of ``user`` on a borrowed connection (a server's pool): no migration, no user lookup.

        ``close`` leaves the connection open (it belongs to the pool). The caller vouches for
        ``user`` (a server takes it from a checked login or token).
        """
        self = cls.__new__(cls)
        self.dsn, self.origin, self.clock, self.conn, self.user = conn.dsn, check_origin(origin), clock, conn, user
        self._owns_conn = False
        return self

    @property
    def user_id(self) -> int:
        return self.user.id

    def _now(self) -> int:
        return int(self.clock() * 1000)

    def _tx(self, fn: Callable[[Any], Any], doing: str) -> Any:
        return self.conn.transaction(fn, doing=doing)

    # -- reading helpers (inside a transaction) ---------------------------------------

    def _register(self, cur: Any, key: str, *, lock: bool = False) -> R.SessionRow | None:
        return R.read_sessions(cur, self.user_id, [key], for_update=lock).get(key)

    def _count(self, cur: Any, key: str) -> int:
        cur.execute("SELECT COUNT(*) FROM gateway_session_messages WHERE user_id = %s AND key_hash = %s",
                    (self.user_id, R.key_hash(key)))
        return int(cur.fetchone()[0])

    def _first_message_ms(self, cur: Any, key: str) -> int:
        cur.execute("SELECT timestamp, updated_at FROM gateway_session_messages WHERE user_id = %s AND key_hash = %s "
                    "ORDER BY pos LIMIT 1", (self.user_id, R.key_hash(key)))
        row = cur.fetchone()
        if row is None:
            return 0
        return first_message_ms(row[0], R.ms_of_dt(row[1]))

    def _shown(self, cur: Any, reg: R.SessionRow | None, count: int | None = None) -> tuple[R.SessionRow, int] | None:
        """The register as listings show it, with its message count; None if the session is not visible.

        A dead register (deleted, or never written) with messages shows empty fields and the
        time of its first message as ``created_at``, as a session created by a message does.
        """
        if reg is None:
            return None
        if count is None:
            count = self._count(cur, reg.key)
        key = reg.key
        return shown_register(reg, count, lambda: self._first_message_ms(cur, key))

    @staticmethod
    def _info(shown: tuple[R.SessionRow, int]) -> SessionInfo:
        return session_info(shown)

    def _write_register(self, cur: Any, reg: R.SessionRow) -> None:
        reg.version = (reg.version[0], self.origin, reg.rev())
        R.upsert_sessions(cur, self.user_id, [reg])

    def _new_register(self, key: str, old: R.SessionRow | None, now: int, *, active_ms: int,
                      **fields: Any) -> R.SessionRow:
        return new_register(key, old, now, self.origin, active_ms=active_ms, **fields)

    # -- the interface ------------------------------------------------------------------

    def get_or_create(self, key: str, *, title: str = "", metadata: dict[str, Any] | None = None,
                      project: str = "") -> SessionInfo:
        title, metadata = redacted(title, dict(metadata or {}))

        def run(cur: Any) -> SessionInfo:
            shown = self._shown(cur, self._register(cur, key))
            if shown is None:
                R.next_change_seq(cur, self.user_id)
                old = self._register(cur, key, lock=True)
                shown = self._shown(cur, old)
                if shown is None:
                    now = self._now()
                    reg = self._new_register(key, old, now, title=title, metadata=metadata,
                                             project=project, created_ms=now, active_ms=now)
                    self._write_register(cur, reg)
                    shown = self._shown(cur, self._register(cur, key))
            assert shown is not None  # just written, in this transaction
            return self._info(shown)

        return self._tx(run, "get_or_create")

    def add_message(self, key: str, role: str, content: str, *, message_id: str | None = None,
                    timestamp: str | None = None, tool_calls: list[Any] | None = None,
                    extra: dict[str, Any] | None = None) -> Message:
        _check_role(role)
        mid = message_id or uuid.uuid4().hex
        stamp = timestamp or now_iso()
        content, tool_calls, extra = redacted(content, tool_calls, dict(extra or {}))

        def run(cur: Any) -> Message:
            R.next_change_seq(cur, self.user_id)
            old = self._register(cur, key, lock=True)
            existing = self._message(cur, key, mid)
            if existing is not None:
                return existing
            now = self._now()
            if self._shown(cur, old) is None:  # like the local store: a new session first
                created = source_ms(stamp, now)
                reg = self._new_register(key, old, now, created_ms=created, active_ms=created)
                self._write_register(cur, reg)
                old = reg
            assert old is not None
            row = R.MessageRow(key=key, message_id=mid, role=role, content=content, timestamp=stamp,
                               tool_calls=tool_calls, extra=dict(extra or {}))
            row.version = message_version(row, old.cleared, now, self.origin)
            R.upsert_messages(cur, self.user_id, [row])
            self._touch(cur, key, source_ms(stamp, row.version[0]), derived_preview(role, content))
            return Message(id=mid, session_key=key, role=role, content=content, timestamp=stamp,
                           tool_calls=tool_calls, extra=dict(extra or {}))

        return self._tx(run, "add_message")

    def _touch(self, cur: Any, key: str, ms: int, preview: str | None) -> None:
        """Newest activity (and the derived preview) of a session after a message write."""
        cur.execute("UPDATE gateway_sessions SET preview = IF(preview_set OR %s IS NULL, preview, %s), "
                    "active_at = GREATEST(active_at, %s) WHERE user_id = %s AND key_hash = %s",
                    (preview, preview, R.sql_of_ms(ms), self.user_id, R.key_hash(key)))

    def _message(self, cur: Any, key: str, mid: str, *, lock: bool = False) -> Message | None:
        cur.execute(f"{R.MESSAGE_SELECT} WHERE user_id = %s AND key_hash = %s AND id_hash = %s"
                    + (" FOR UPDATE" if lock else ""), (self.user_id, R.key_hash(key), R.key_hash(mid)))
        row = cur.fetchone()
        return None if row is None else _message_of(R.message_of(row))

    def history(self, key: str, limit: int | None = None) -> list[Message]:
        def run(cur: Any) -> list[Message]:
            if self._shown(cur, self._register(cur, key)) is None:
                raise NotFound(f"no session {key!r}")
            if limit is not None and limit <= 0:
                return []
            sql = f"{R.MESSAGE_SELECT} WHERE user_id = %s AND key_hash = %s ORDER BY pos"
            params: tuple[Any, ...] = (self.user_id, R.key_hash(key))
            if limit is not None:
                sql += " DESC LIMIT %s"
                params += (limit,)
            cur.execute(sql, params)
            got = [_message_of(R.message_of(r)) for r in cur.fetchall()]
            return got[::-1] if limit is not None else got

        return self._tx(run, "reading history")

    def get(self, key: str) -> SessionInfo | None:
        def run(cur: Any) -> SessionInfo | None:
            shown = self._shown(cur, self._register(cur, key))
            return None if shown is None else self._info(shown)

        return self._tx(run, "reading a session")

    def list(self) -> list[SessionInfo]:
        def run(cur: Any) -> list[SessionInfo]:
            cur.execute(f"{LIST_SQL}", (self.user_id,))
            found = [(R.session_of(r[:-1]), int(r[-1])) for r in cur.fetchall()]
            shown = [self._shown(cur, reg, n) for reg, n in found]
            return [self._info(s) for s in shown if s is not None]

        infos = self._tx(run, "listing sessions")
        infos.sort(key=lambda s: s.key)
        infos.sort(key=lambda s: s.updated_at, reverse=True)
        return infos

    def update(self, key: str, *, title: str | None = None, preview: str | None = None,
               metadata: dict[str, Any] | None = None) -> SessionInfo:
        title, preview, metadata = redacted(title, preview, metadata)

        def run(cur: Any) -> SessionInfo:
            R.next_change_seq(cur, self.user_id)
            old = self._register(cur, key, lock=True)
            shown = self._shown(cur, old)
            if shown is None:
                raise NotFound(f"no session {key!r}")
            cur_reg = shown[0]
            reg = updated_register(key, old, cur_reg, self._now(), self.origin, title=title, preview=preview,
                                   metadata=metadata, active_ms=max(self._now(), cur_reg.active_ms))
            self._write_register(cur, reg)
            shown_now = self._shown(cur, self._register(cur, key))
            assert shown_now is not None  # just written, in this transaction
            return self._info(shown_now)

        return self._tx(run, "updating a session")

    def delete(self, key: str) -> bool:
        def run(cur: Any) -> bool:
            R.next_change_seq(cur, self.user_id)
            old = self._register(cur, key, lock=True)
            if self._shown(cur, old) is None:
                return False
            assert old is not None
            cur.execute("SELECT MAX(updated_at) FROM gateway_session_messages WHERE user_id = %s AND key_hash = %s",
                        (self.user_id, R.key_hash(key)))
            newest = cur.fetchone()[0]
            tomb = tombstone(key, old, self._now(), R.ms_of_dt(newest) if newest else None, self.origin)
            R.upsert_sessions(cur, self.user_id, [tomb])  # a trigger deletes the older messages
            return True

        return self._tx(run, "deleting a session")

    # -- beyond the interface -------------------------------------------------------------

    def update_message(self, key: str, message_id: str, content: str, *, tool_calls: builtins.list[Any] | None = None,
                       extra: dict[str, Any] | None = None) -> Message:
        """Replace a stored message's content (tool calls if given; ``extra`` merged), as ``message.updated`` does."""
        content, tool_calls, extra = redacted(content, tool_calls, extra)

        def run(cur: Any) -> Message:
            R.next_change_seq(cur, self.user_id)
            cur.execute(f"{R.MESSAGE_SELECT} WHERE user_id = %s AND key_hash = %s AND id_hash = %s FOR UPDATE",
                        (self.user_id, R.key_hash(key), R.key_hash(message_id)))
            row = cur.fetchone()
            if row is None:
                raise NotFound(f"no message {message_id!r} in session {key!r}")
            m = edited_message(R.message_of(row), content, tool_calls, extra, self._now(), self.origin)
            R.upsert_messages(cur, self.user_id, [m])
            self._touch(cur, key, m.version[0], None)
            return _message_of(m)

        return self._tx(run, "updating a message")

    def set_password(self, password: str) -> None:
        """Store a new (scrypt) password hash for this user."""
        self._tx(lambda cur: set_password(cur, self.user_id, password), "setting the password")

    def check_password(self, password: str) -> bool:
        """True if ``password`` is this user's password."""
        return bool(self._tx(lambda cur: check_password(cur, self.user_id, password), "checking the password"))

    # -- reads for the web pages (beyond the interface) -----------------------------------

    def page(self, *, offset: int = 0, limit: int = 50, project: str | None = None,
             query: str | None = None) -> tuple[builtins.list[SessionInfo], int]:
        """Visible sessions, newest activity first, one page at a time: (the page, how many match in all).

        ``project`` keeps one project's sessions; ``query`` keeps those whose title, preview
        or key contains it (case-insensitive).
        """
        infos, total, _ = self.listing(offset=offset, limit=limit, project=project, query=query, projects=False)
        return infos, total

    def listing(self, *, offset: int = 0, limit: int = 50, project: str | None = None, query: str | None = None,
                projects: bool = True) -> tuple[builtins.list[SessionInfo], int, builtins.list[str]]:
        """``page`` and (if ``projects``) the user's projects, in one transaction: what the sessions page shows."""
        where = ["s.user_id = %s", _VISIBLE]
        params: list[Any] = [self.user_id]
        if project is not None:
            where.append("s.project = %s")
            params.append(project)
        if query:
            like = "%" + like_escape(query) + "%"
            where.append("(s.title LIKE %s COLLATE utf8mb4_unicode_ci OR s.preview LIKE %s COLLATE utf8mb4_unicode_ci "
                         "OR s.session_key LIKE %s COLLATE utf8mb4_unicode_ci)")
            params += [like, like, like]
        cond = " AND ".join(where)

        def run(cur: Any) -> tuple[list[SessionInfo], int, list[str]]:
            cur.execute(f"SELECT COUNT(*) FROM gateway_sessions s WHERE {cond}", tuple(params))
            total = int(cur.fetchone()[0])
            cur.execute(f"{PAGE_SQL} WHERE {cond} ORDER BY s.active_at DESC, s.key_hash LIMIT %s OFFSET %s",
                        (*params, max(0, limit), max(0, offset)))
            infos = []
            for key, title, preview, project, metadata, created, active, deleted, count in cur.fetchall():
                if deleted:  # a dead register that lives on through its messages: shown as _shown says
                    shown = self._shown(cur, self._register(cur, key), int(count))
                    if shown is not None:
                        infos.append(self._info(shown))
                    continue
                infos.append(SessionInfo(key=key, title=title, preview=preview, project=project,
                                         metadata=msgspec.json.decode(metadata) if metadata else {},
                                         created_at=R.iso_of_ms(int(created)) if created else "",
                                         updated_at=R.iso_of_ms(int(active)), message_count=int(count)))
            names: list[str] = []
            if projects:
                cur.execute("SELECT DISTINCT project FROM gateway_sessions WHERE user_id = %s AND deleted_at IS NULL "
                            "AND project <> ''", (self.user_id,))
                names = sorted(r[0] for r in cur.fetchall())
            return infos, total, names

        return self._tx(run, "listing sessions")

    def projects(self) -> builtins.list[str]:
        """The projects the user's visible sessions belong to."""
        return self.listing(limit=0)[2]

    def history_page(self, key: str, *, offset: int | None = 0, limit: int = 100
                     ) -> tuple[SessionInfo, builtins.list[Message], int, int]:
        """A page of a session's messages, oldest first, in one transaction; ``NotFound`` for no such session.

        Returns (the session, messages ``offset`` .. ``offset + limit``, how many it has, the
        offset used); ``offset`` None means the last page (offset a multiple of ``limit``).
        """
        def run(cur: Any) -> tuple[SessionInfo, list[Message], int, int]:
            count = self._count(cur, key)
            shown = self._shown(cur, self._register(cur, key), count)
            if shown is None:
                raise NotFound(f"no session {key!r}")
            start = offset if offset is not None else (max(count - 1, 0) // limit) * limit if limit > 0 else 0
            cur.execute(f"{R.MESSAGE_SELECT} WHERE user_id = %s AND key_hash = %s ORDER BY pos LIMIT %s OFFSET %s",
                        (self.user_id, R.key_hash(key), max(0, limit), max(0, start)))
            return self._info(shown), [_message_of(R.message_of(r)) for r in cur.fetchall()], count, start

        return self._tx(run, "reading history")

    def message_index(self, key: str, message_id: str) -> int:
        """How many messages of the session come before this one (its place in ``history``); ``NotFound``."""
        def run(cur: Any) -> int:
            cur.execute("SELECT pos FROM gateway_session_messages WHERE user_id = %s AND key_hash = %s AND id_hash = %s",
                        (self.user_id, R.key_hash(key), R.key_hash(message_id)))
            row = cur.fetchone()
            if row is None or self._shown(cur, self._register(cur, key)) is None:
                raise NotFound(f"no message {message_id!r} in session {key!r}")
            cur.execute("SELECT COUNT(*) FROM gateway_session_messages WHERE user_id = %s AND key_hash = %s "
                        "AND pos < %s", (self.user_id, R.key_hash(key), row[0]))
            return int(cur.fetchone()[0])

        return self._tx(run, "finding a message")

    def search_messages(self, query: str, *, limit: int = 50) -> builtins.list[Message]:
        """The newest messages whose content contains ``query`` (case-insensitive), newest first."""
        like = "%" + like_escape(query) + "%"

        def run(cur: Any) -> list[Message]:
            cur.execute(f"{R.MESSAGE_SELECT} WHERE user_id = %s AND content LIKE %s COLLATE utf8mb4_unicode_ci "
                        "ORDER BY pos DESC LIMIT %s", (self.user_id, like, max(0, limit)))
            return [_message_of(R.message_of(r)) for r in cur.fetchall()]

        return self._tx(run, "searching messages")

    def messages_per_day(self) -> builtins.list[tuple[str, str, int]]:
        """(day, project, messages) for every day the user's messages were written (their own timestamps)."""
        def run(cur: Any) -> list[tuple[str, str, int]]:
            cur.execute("SELECT IF(m.timestamp REGEXP '^[0-9]{4}-[0-9]{2}-[0-9]{2}', LEFT(m.timestamp, 10), "
                        "DATE_FORMAT(m.updated_at, '%%Y-%%m-%%d')) AS d, s.project, COUNT(*) "
                        "FROM gateway_session_messages m JOIN gateway_sessions s "
                        "ON s.user_id = m.user_id AND s.key_hash = m.key_hash "
                        "WHERE m.user_id = %s GROUP BY d, s.project", (self.user_id,))
            return [(d, p, int(n)) for d, p, n in cur.fetchall()]

        return self._tx(run, "counting messages per day")

    def close(self) -> None:
        if self._owns_conn:
            self.conn.close()


# --------------------------------------------------------------------------- versions (pure)


def source_ms(timestamp: str, default: int) -> int:
    """Milliseconds of a message's own ``timestamp`` (its source time), or ``default`` if it has none."""
    return R.ms_of_iso(normalize_time(timestamp)) or default


def first_message_ms(timestamp: str, updated_ms: int) -> int:
    """``created_at`` of a session shown through its first message: the message's time, else when it was written."""
    t = normalize_time(timestamp)
    return R.ms_of_iso(t) if t else updated_ms


def new_register(key: str, old: R.SessionRow | None, now: int, origin: str, *, active_ms: int,
                 **fields: Any) -> R.SessionRow:
    """A live register written at ``now`` by ``origin``: later than any version of it seen, keeping its ``cleared``.

    ``active_ms`` follows source times as the sessions projection's ``updated_at`` does
    (a session created by a message of 2026-01-01 is that old), not the write time.
    """
    ms = max(now, old.version[0] + 1 if old is not None else 0)
    reg = R.SessionRow(key=key, deleted=False, version=(ms, origin, ""),
                       cleared=old.cleared if old is not None else R.ZERO, active_ms=active_ms, **fields)
    reg.version = (ms, origin, reg.rev())
    return reg


def updated_register(key: str, old: R.SessionRow | None, shown: R.SessionRow, now: int, origin: str, *,
                     title: str | None, preview: str | None, metadata: dict[str, Any] | None,
                     active_ms: int) -> R.SessionRow:
    """``update``'s new register: ``shown`` (the register as listed) with the given fields changed, metadata merged."""
    return new_register(key, old, now, origin, title=shown.title if title is None else title,
                        preview=shown.preview if preview is None else preview,
                        preview_set=(not shown.deleted and shown.preview_set) or preview is not None,
                        metadata={**shown.metadata, **(metadata or {})}, project=shown.project,
                        created_ms=shown.created_ms, active_ms=active_ms)


def message_version(row: R.MessageRow, cleared: R.Version, now: int, origin: str) -> R.Version:
    """A new message's version: written at ``now``, but after its session's last delete (``cleared``)."""
    return (max(now, cleared[0] + 1), origin, row.rev())


def tombstone(key: str, old: R.SessionRow, now: int, newest_message_ms: int | None, origin: str) -> R.SessionRow:
    """The register deleting a session: later than its register and every message seen; ``cleared`` rises to it."""
    ms = max(now, old.version[0] + 1, newest_message_ms + 1 if newest_message_ms is not None else 0)
    tomb = R.SessionRow(key=key, deleted=True, version=(ms, origin, R.TOMBSTONE_REV), active_ms=ms)
    tomb.cleared = max(old.cleared, tomb.version)
    return tomb


def edited_message(m: R.MessageRow, content: str, tool_calls: list[Any] | None, extra: dict[str, Any] | None,
                   now: int, origin: str) -> R.MessageRow:
    """``m`` edited (in place) as ``update_message`` says, and versioned later than it was."""
    m.content = content
    if tool_calls is not None:
        m.tool_calls = tool_calls
    m.extra = {**m.extra, **{k: v for k, v in (extra or {}).items() if k not in _RESERVED}}
    m.version = (max(now, m.version[0] + 1), origin, m.rev())
    return m


def shown_register(reg: R.SessionRow, count: int,
                   first_ms: Callable[[], int]) -> tuple[R.SessionRow, int] | None:
    """The register as listings show it, with its message count; None if the session is not visible.

    A dead register (deleted, or never written) with messages shows empty fields and the
    time of its first message (``first_ms``, asked only then) as ``created_at``, as a session
    created by a message does.
    """
    if reg.deleted:
        if not count:
            return None
        reg = R.SessionRow(key=reg.key, preview=reg.preview, created_ms=first_ms(), deleted=True,
                           version=reg.version, cleared=reg.cleared, active_ms=reg.active_ms)
    return reg, count


def session_info(shown: tuple[R.SessionRow, int]) -> SessionInfo:
    """The ``SessionInfo`` of a shown register (``shown_register``)."""
    reg, count = shown
    return SessionInfo(key=reg.key, title=reg.title, preview=reg.preview,
                       created_at=R.iso_of_ms(reg.created_ms) if reg.created_ms else "",
                       updated_at=R.iso_of_ms(reg.active_ms),
                       metadata=dict(reg.metadata), message_count=count, project=reg.project)


def like_escape(text: str) -> str:
    """``text`` with LIKE's wildcards (and its escape character) escaped."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_VISIBLE = ("(s.deleted_at IS NULL OR EXISTS (SELECT 1 FROM gateway_session_messages m "
            "WHERE m.user_id = s.user_id AND m.key_hash = s.key_hash))")
#: What a listing shows of each session: times as integer ms (cheaper to read than DATETIMEs), and its count.
PAGE_SQL = ("SELECT s.session_key, s.title, s.preview, s.project, s.metadata, "
            "IFNULL(CAST(UNIX_TIMESTAMP(s.created_at) * 1000 AS SIGNED), 0), "
            "CAST(UNIX_TIMESTAMP(s.active_at) * 1000 AS SIGNED), s.deleted_at IS NOT NULL, "
            "(SELECT COUNT(*) FROM gateway_session_messages m WHERE m.user_id = s.user_id AND m.key_hash = s.key_hash) "
            "FROM gateway_sessions s")

_RESERVED = ("id", "sessionKey", "role", "content", "timestamp", "tool_calls")

LIST_SQL = (R.SESSION_SELECT.replace("FROM gateway_sessions", ", (SELECT COUNT(*) FROM gateway_session_messages m "
                                     "WHERE m.user_id = s.user_id AND m.key_hash = s.key_hash) "
                                     "FROM gateway_sessions s")
            + " WHERE s.user_id = %s ORDER BY s.active_at DESC")


def _message_of(m: R.MessageRow) -> Message:
    return Message(id=m.message_id, session_key=m.key, role=m.role, content=m.content, timestamp=m.timestamp,
                   tool_calls=m.tool_calls, extra=dict(m.extra))
