"""Gateway rows and the last-write-wins rule: versions, content hashes, guarded upserts.

Each session row is a *register* (title, explicit preview, metadata, project, created_at,
deleted or not) and each message row another (role, content, timestamp, tool_calls,
extra). A register's version is ``(updated_at in ms, origin, rev)``, compared as a tuple:

* ``updated_at``: when the write happened (UTC, milliseconds). A writer always stamps a
  row later than the version it last saw of that row (``max(now, seen + 1 ms)``), and a
  delete later than every message it saw, so its own later writes and writes made after
  seeing a newer remote state win however the clocks are skewed;
* ``origin``: the writer's id (a device's ``evlog:<hex>``, a web store's name, ``sql``
  for hand-written SQL), breaking ties between writers at the same millisecond;
* ``rev``: ``xxh3_128`` of the row's canonical content, so two writers with the same time
  and origin still agree on one winner. Never arrival order: whichever order rows reach
  the gateway or a device, the greatest version wins.

A write replaces the whole register if its version is greater, and is ignored otherwise
(the seed's ``incomingAt <= localUpdated`` rule, with the tie-break). Deleting a session
writes a tombstone (``deleted_at``) and raises the session's ``cleared`` version (a
maximum that only grows): messages older than ``cleared`` are gone and a message that old
arriving later is dropped; newer ones (written after the delete) survive. A session is
visible while its register lives or while it has messages; one with a dead register shows
empty fields (as a session created by its first message does locally).

The upserts are ``INSERT ... ON DUPLICATE KEY UPDATE`` whose every assignment is guarded
by the version comparison. MySQL evaluates the assignments left to right and later ones
see the new values, so ``change_seq`` and the content columns come first and the version
columns last, in the order rev, origin, updated_at: each guard then still decides as the
first one did (a test checks both orders of arrival).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import xxhash

Version = tuple[int, str, str]  # (updated_at in ms since the epoch, origin, rev)
ZERO: Version = (0, "", "")
HASH_PREFIX = "xxh3_128:"  # changing the canonical form below changes every rev

_EPOCH = datetime(1970, 1, 1)
EPOCH_SQL = "1970-01-01 00:00:00.000"
_MS = timedelta(milliseconds=1)
_canonical = msgspec.json.Encoder(order="sorted")
_json = msgspec.json.Encoder()


# --------------------------------------------------------------------------- times


def ms_of_dt(dt: datetime) -> int:
    """Milliseconds since the epoch of a naive UTC datetime (as the driver returns them)."""
    return (dt.replace(tzinfo=None) - _EPOCH) // _MS


def sql_of_ms(ms: int) -> str:
    """A DATETIME(3) literal for ``ms``."""
    dt = _EPOCH + timedelta(milliseconds=ms)
    return dt.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}"


def iso_of_ms(ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.fffZ`` (the log's and the sessions projection's time format)."""
    dt = _EPOCH + timedelta(milliseconds=ms)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


_iso_cache: dict[str, int] = {}


def ms_of_iso(value: str) -> int:
    """Milliseconds of an ISO 8601 time (naive = UTC); 0 if empty or unparseable."""
    got = _iso_cache.get(value)
    if got is not None:
        return got
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return 0
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC).replace(tzinfo=None)
    ms = ms_of_dt(dt)
    if len(_iso_cache) > 4096:
        _iso_cache.clear()
    _iso_cache[value] = ms
    return ms


def key_hash(key: str) -> bytes:
    """SHA-256 of a session key's (or message id's) UTF-8 bytes: its identity in the tables."""
    return hashlib.sha256(key.encode("utf-8")).digest()


# --------------------------------------------------------------------------- rows


def content_hash(content: Any) -> str:
    """``xxh3_128:`` + hex of the canonical JSON (sorted keys, compact, UTF-8) of ``content``."""
    return HASH_PREFIX + xxhash.xxh3_128_hexdigest(_canonical.encode(content))


TOMBSTONE_REV = content_hash({"deleted": True})


@dataclass(slots=True)
class SessionRow:
    """A session register as the gateway holds it (or as a writer sends it)."""

    key: str
    title: str = ""
    preview: str = ""
    preview_set: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    project: str = ""
    created_ms: int = 0
    deleted: bool = True  # a dead register: deleted, or never written (version ZERO)
    version: Version = ZERO
    cleared: Version = ZERO
    active_ms: int = 0
    change_seq: int = 0

    def content(self) -> dict[str, Any]:
        """What ``rev`` hashes: the register's fields (a tombstone's are none)."""
        if self.deleted:
            return {"deleted": True}
        return {"title": self.title, "preview": self.preview if self.preview_set else None,
                "metadata": self.metadata, "project": self.project, "created_at": self.created_ms}

    def rev(self) -> str:
        """The content hash of this register."""
        return TOMBSTONE_REV if self.deleted else content_hash(self.content())


@dataclass(slots=True)
class MessageRow:
    """A message as the gateway holds it (or as a writer sends it)."""

    key: str
    message_id: str
    role: str
    content: str
    timestamp: str = ""
    tool_calls: list[Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    version: Version = ZERO
    pos: int = 0
    change_seq: int = 0

    def rev(self) -> str:
        """The content hash of this message."""
        return message_rev(self.role, self.content, self.timestamp, self.tool_calls, self.extra)


def message_rev(role: str, content: str, timestamp: str, tool_calls: list[Any] | None, extra: dict[str, Any]) -> str:
    """The content hash of a message's fields."""
    return content_hash([role, content, timestamp, tool_calls, extra])


# --------------------------------------------------------------------------- writing
#
# Statements are rendered here (the driver's escaping rules, see ``literal``) rather than by
# ``cursor.executemany`` so a push can build batch k+1 while batch k runs, and so a batch
# can be built before its transaction has taken its change counter value: rows carry
# ``CHANGE_SEQ``, rendered as the session variable ``next_change_seq`` sets. The key
# hashes are not sent at all: the tables' triggers compute them from the keys.

CHANGE_SEQ = object()  # stands for this transaction's change counter value (@evlog_change_seq)
MAX_STATEMENT_BYTES = 4_000_000  # well under the server's max_allowed_packet (16 MiB by default)

_SESSION_COLS = ("user_id, session_key, title, preview, preview_set, metadata, project, created_at, "
                 "deleted_at, updated_at, origin, rev, cleared_at, cleared_origin, cleared_rev, active_at, change_seq")
# A stored version past the writer's ceiling (``@evlog_ceiling``, set by ``next_change_seq``: the gateway's clock
# plus the allowed skew, ``screen.ceiling_ms``) loses to any write: a peer's broken clock or a hand-written
# 9999-12-31 cannot make a row unchangeable. Writers clamp what they send to that ceiling, so only rows stored by
# something else (or before the clamp) are ever past it. A NULL ceiling (not set) leaves the plain comparison.
_G = "((VALUES(updated_at), VALUES(origin), VALUES(rev)) > (updated_at, origin, rev) OR updated_at > @evlog_ceiling)"
_C = ("((VALUES(cleared_at), VALUES(cleared_origin), VALUES(cleared_rev)) > "
      "(cleared_at, cleared_origin, cleared_rev) OR cleared_at > @evlog_ceiling)")

SESSIONS_HEAD = f"INSERT INTO gateway_sessions ({_SESSION_COLS}) VALUES "
SESSIONS_TAIL = f"""
ON DUPLICATE KEY UPDATE
  change_seq = IF({_G} OR {_C}, VALUES(change_seq), change_seq),
  preview = IF({_G}, VALUES(preview), IF(preview_set OR VALUES(active_at) < active_at, preview, VALUES(preview))),
  title = IF({_G}, VALUES(title), title),
  preview_set = IF({_G}, VALUES(preview_set), preview_set),
  metadata = IF({_G}, VALUES(metadata), metadata),
  project = IF({_G}, VALUES(project), project),
  created_at = IF({_G}, VALUES(created_at), created_at),
  deleted_at = IF({_G}, VALUES(deleted_at), deleted_at),
  active_at = GREATEST(active_at, VALUES(active_at)),
  cleared_rev = IF({_C}, VALUES(cleared_rev), cleared_rev),
  cleared_origin = IF({_C}, VALUES(cleared_origin), cleared_origin),
  cleared_at = IF({_C}, VALUES(cleared_at), cleared_at),
  rev = IF({_G}, VALUES(rev), rev),
  origin = IF({_G}, VALUES(origin), origin),
  updated_at = IF({_G}, VALUES(updated_at), updated_at)"""

_MESSAGE_COLS = "user_id, session_key, message_id, role, content, timestamp, tool_calls, extra, updated_at, origin, rev, change_seq"
MESSAGES_HEAD = f"INSERT INTO gateway_session_messages ({_MESSAGE_COLS}) VALUES "
MESSAGES_TAIL = f"""
ON DUPLICATE KEY UPDATE
  change_seq = IF({_G}, VALUES(change_seq), change_seq),
  role = IF({_G}, VALUES(role), role),
  content = IF({_G}, VALUES(content), content),
  timestamp = IF({_G}, VALUES(timestamp), timestamp),
  tool_calls = IF({_G}, VALUES(tool_calls), tool_calls),
  extra = IF({_G}, VALUES(extra), extra),
  rev = IF({_G}, VALUES(rev), rev),
  origin = IF({_G}, VALUES(origin), origin),
  updated_at = IF({_G}, VALUES(updated_at), updated_at)"""
#: One message upsert with placeholders (what a naive writer sends once per message).
UPSERT_MESSAGE = MESSAGES_HEAD + "(" + ", ".join(["%s"] * 12) + ")" + MESSAGES_TAIL


# The same two upserts said in Python, for the in-memory gateway (``memory_store``); a test
# (tests/app/gateway/test_memory_store.py) checks against a server that both leave the same rows.


def _past(v: Version, ceiling: int | None) -> bool:
    """True if a stored version is past the writer's ceiling (it then loses to any write; see ``_G``)."""
    return ceiling is not None and v[0] > ceiling


def merge_session(old: SessionRow | None, new: SessionRow, change_seq: int,
                  ceiling: int | None = None) -> SessionRow:
    """The register the guarded upsert of ``new`` (``SESSIONS_TAIL``) leaves where ``old`` was (None: no row).

    ``new`` replaces the fields if its version is greater; ``cleared`` takes the greater of
    both, ``active_ms`` the later; a derived preview (none set) follows the newer activity;
    ``change_seq`` moves only if the version or ``cleared`` did. ``new`` may be reused.
    """
    if old is None:
        new.change_seq = change_seq
        return new
    newer = new.version > old.version or _past(old.version, ceiling)
    cleared = new.cleared > old.cleared or _past(old.cleared, ceiling)
    out = replace(new) if newer else replace(old)
    if not newer and not (old.preview_set or new.active_ms < old.active_ms):
        out.preview = new.preview
    out.active_ms = max(old.active_ms, new.active_ms)
    out.cleared = new.cleared if cleared else old.cleared
    out.change_seq = change_seq if newer or cleared else old.change_seq
    return out


def merge_message(old: MessageRow | None, new: MessageRow, change_seq: int, pos: int,
                  ceiling: int | None = None) -> MessageRow:
    """The message the guarded upsert of ``new`` (``MESSAGES_TAIL``) leaves where ``old`` was.

    ``new`` replaces it whole (keeping its arrival position) if its version is greater; a
    new row takes ``pos``. ``new`` may be reused.
    """
    if old is not None and not (new.version > old.version or _past(old.version, ceiling)):
        return old
    new.change_seq, new.pos = change_seq, old.pos if old is not None else pos
    return new


_SPECIAL = re.compile("[\\\\\x00\n\r\x1a'\"]")


def escape_string(value: str) -> str:
    """PyMySQL's ``escape_string`` (same output, a property test checks it), several times faster.

    Backslash first, then NUL, LF, CR, Ctrl-Z and both quotes, as the driver does for a
    connection without NO_BACKSLASH_ESCAPES (``connection._SESSION_SETUP`` fixes sql_mode).
    """
    if _SPECIAL.search(value) is None:
        return value
    return (value.replace("\\", "\\\\").replace("\0", "\\0").replace("\n", "\\n").replace("\r", "\\r")
            .replace("\x1a", "\\Z").replace("'", "\\'").replace('"', '\\"'))


def literal(value: Any) -> str:
    """One SQL literal: a quoted escaped string, an integer, NULL, or this transaction's change counter."""
    if type(value) is str:
        return "'" + escape_string(value) + "'"
    if value is None:
        return "NULL"
    if type(value) is int:
        return str(value)
    if value is CHANGE_SEQ:
        return "@evlog_change_seq"
    raise TypeError(f"no SQL literal for {type(value).__name__}")


def _pack(head: str, tail: str, values: Iterable[str]) -> list[bytes]:
    """Rendered ``(...)`` rows joined into statements of at most MAX_STATEMENT_BYTES each."""
    return pack_encoded(head, tail, (text.encode("utf-8") for text in values))


def pack_encoded(head: str, tail: str, values: Iterable[bytes], limit: int = MAX_STATEMENT_BYTES) -> list[bytes]:
    """Rendered, encoded ``(...)`` rows joined into statements of at most ``limit`` bytes each.

    A single row bigger than that still makes a statement of its own (callers that must
    respect the server's ``max_allowed_packet`` refuse such rows first: ``ops.prepare``).
    """
    out: list[bytes] = []
    head_b, tail_b = head.encode(), tail.encode()
    room = limit - len(head_b) - len(tail_b)
    parts: list[bytes] = []
    size = 0
    for v in values:
        if parts and size + len(v) > room:
            out.append(head_b + b",".join(parts) + tail_b)
            parts, size = [], 0
        parts.append(v)
        size += len(v) + 1
    if parts:
        out.append(head_b + b",".join(parts) + tail_b)
    return out


def statements(head: str, tail: str, params: list[tuple[Any, ...]]) -> list[bytes]:
    """Multi-row ``head (..),(..) tail`` statements from parameter tuples."""
    return _pack(head, tail, ("(" + ",".join([literal(x) for x in row]) + ")" for row in params))


class _Cached(dict[Any, str]):
    """Literals of values that repeat from row to row (times, origins, hashes, '{}')."""

    def __init__(self, fn: Any) -> None:
        super().__init__()
        self.fn = fn

    def __missing__(self, key: Any) -> str:
        if len(self) > 10_000:
            self.clear()
        v = self[key] = self.fn(key)
        return v


_time_literal = _Cached(lambda ms: "'" + sql_of_ms(ms) + "'")
_str_literal = _Cached(literal)


def _q(value: str) -> str:
    return "'" + escape_string(value) + "'"


def session_params(user_id: int, r: SessionRow, change_seq: Any = CHANGE_SEQ) -> tuple[Any, ...]:
    """The VALUES of one session row."""
    ms, origin, rev = r.version
    cms, corigin, crev = r.cleared
    updated = sql_of_ms(ms)
    return (user_id, r.key, r.title, r.preview, 1 if r.preview_set else 0, _json.encode(r.metadata).decode(),
            r.project, sql_of_ms(r.created_ms) if r.created_ms else None, updated if r.deleted else None, updated,
            origin, rev, sql_of_ms(cms), corigin, crev, sql_of_ms(r.active_ms), change_seq)


def message_params(user_id: int, m: MessageRow, change_seq: Any = CHANGE_SEQ) -> tuple[Any, ...]:
    """The VALUES of one message row (for a plain ``cursor.execute`` of ``UPSERT_MESSAGE``)."""
    ms, origin, rev = m.version
    return (user_id, m.key, m.message_id, m.role, m.content, m.timestamp,
            None if m.tool_calls is None else _json.encode(m.tool_calls).decode(), _json.encode(m.extra).decode(),
            sql_of_ms(ms), origin, rev, change_seq)


def message_values(user_id: int, key: str, mid: str, role: str, content: str, timestamp: str,
                   tool_calls: list[Any] | None, extra: dict[str, Any], version: Version) -> str:
    """One message's ``message_params`` rendered, the repeating literals cached (a push's hot path)."""
    ms, origin, rev = version
    tools = "NULL" if tool_calls is None else _q(_json.encode(tool_calls).decode())
    extra_sql = "'{}'" if not extra else _q(_json.encode(extra).decode())
    return (f"({user_id},{_str_literal[key]},{_q(mid)},{_str_literal[role]},{_q(content)},{_str_literal[timestamp]},"
            f"{tools},{extra_sql},{_time_literal[ms]},{_str_literal[origin]},{_q(rev)},@evlog_change_seq)")


def pack_messages(values: Iterable[str]) -> list[bytes]:
    """Statements upserting rendered message rows (``message_values``)."""
    return _pack(MESSAGES_HEAD, MESSAGES_TAIL, values)


def session_statements(user_id: int, rows: list[SessionRow]) -> list[bytes]:
    """Guarded upserts of session registers (each applied only if newer; ``cleared`` max-merged)."""
    return statements(SESSIONS_HEAD, SESSIONS_TAIL, [session_params(user_id, r) for r in rows])


def message_statements(user_id: int, rows: list[MessageRow]) -> list[bytes]:
    """Guarded upserts of messages (each applied only if newer than the gateway's copy)."""
    return pack_messages(message_values(user_id, m.key, m.message_id, m.role, m.content, m.timestamp, m.tool_calls,
                                        m.extra, m.version) for m in rows)


def next_change_seq(cur: Any, user_id: int, *, ceiling: int | None = None) -> int:
    """Take the user's next change counter value for this transaction (also as ``@evlog_change_seq``).

    It takes the user row's lock, held until the transaction ends: that is what keeps
    counter values committing in order (see ``eventlog.app.gateway.changes``). It also sets
    ``@evlog_ceiling`` for this transaction's upserts (``ceiling`` ms, or NULL: see ``_G``).
    """
    cur.execute("UPDATE gateway_users SET change_seq = (@evlog_change_seq := LAST_INSERT_ID(change_seq + 1 "
                "+ 0 * IFNULL(LENGTH(@evlog_ceiling := %s), 0))) WHERE id = %s",
                (None if ceiling is None else sql_of_ms(ceiling), user_id))  # one round trip: the value comes back
    # as the OK packet's insert id
    return int(cur.lastrowid)


def execute(cur: Any, stmts: list[bytes]) -> None:
    """Run rendered statements."""
    for stmt in stmts:
        cur.execute(stmt)


def drop_cleared(cur: Any, user_id: int, rows: list[MessageRow]) -> int:
    """Delete just-written messages older than their session's ``cleared`` version (a newer delete).

    A message written before a delete its writer had not seen loses to that delete. Rows
    already stored are never that old (a trigger deletes them when ``cleared`` rises), so
    this only catches late arrivals; the usual case costs one indexed query.
    """
    if not rows:
        return 0
    cleared = cleared_versions(cur, user_id, sorted({m.key for m in rows}))
    dropped = 0
    for key, bound in cleared.items():
        ids = [key_hash(m.message_id) for m in rows if m.key == key and m.version < bound]
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            cur.execute("DELETE FROM gateway_session_messages WHERE user_id = %s AND key_hash = %s "
                        f"AND id_hash IN ({', '.join(['%s'] * len(part))}) "
                        "AND (updated_at, origin, rev) < (%s, %s, %s)",
                        (user_id, key_hash(key), *part, sql_of_ms(bound[0]), bound[1], bound[2]))
            dropped += int(cur.rowcount)
    return dropped


def drop_past_ceiling(cur: Any, user_id: int, keys: list[str], ceiling: int) -> int:
    """Delete the messages of these (deleted-at-some-time) sessions stamped past ``ceiling``.

    A stored version past the ceiling loses to any write (``_G``), so to every delete too;
    the trigger that applies a delete compares versions plainly and would keep them.
    """
    dropped = 0
    for i in range(0, len(keys), 500):
        part = keys[i:i + 500]
        cur.execute(f"DELETE FROM gateway_session_messages WHERE user_id = %s AND key_hash IN "
                    f"({', '.join(['%s'] * len(part))}) AND updated_at > %s",
                    (user_id, *[key_hash(k) for k in part], sql_of_ms(ceiling)))
        dropped += int(cur.rowcount)
    return dropped


def upsert_sessions(cur: Any, user_id: int, rows: list[SessionRow]) -> None:
    """Send session registers (call ``next_change_seq`` first in the same transaction)."""
    execute(cur, session_statements(user_id, rows))


def upsert_messages(cur: Any, user_id: int, rows: list[MessageRow]) -> None:
    """Send messages (after ``next_change_seq``); those older than a newer delete are dropped."""
    execute(cur, message_statements(user_id, rows))
    drop_cleared(cur, user_id, rows)


def cleared_versions(cur: Any, user_id: int, keys: list[str]) -> dict[str, Version]:
    """The ``cleared`` version of those sessions that were ever deleted."""
    found: dict[str, Version] = {}
    for i in range(0, len(keys), 500):
        part = keys[i:i + 500]
        cur.execute("SELECT session_key, cleared_at, cleared_origin, cleared_rev FROM gateway_sessions "
                    f"WHERE user_id = %s AND key_hash IN ({', '.join(['%s'] * len(part))}) "
                    f"AND cleared_at > '{EPOCH_SQL}'", (user_id, *[key_hash(k) for k in part]))
        for key, at, origin, rev in cur.fetchall():
            found[key] = (ms_of_dt(at), origin, rev)
    return found


# --------------------------------------------------------------------------- reading

SESSION_SELECT = ("SELECT session_key, title, preview, preview_set, metadata, project, created_at, deleted_at, "
                  "updated_at, origin, rev, cleared_at, cleared_origin, cleared_rev, active_at, change_seq "
                  "FROM gateway_sessions")
MESSAGE_SELECT = ("SELECT session_key, message_id, role, content, timestamp, tool_calls, extra, updated_at, origin, "
                  "rev, pos, change_seq FROM gateway_session_messages")


def session_of(row: tuple[Any, ...]) -> SessionRow:
    """A ``SESSION_SELECT`` row as a SessionRow."""
    (key, title, preview, preview_set, metadata, project, created, deleted, updated, origin, rev,
     cleared, corigin, crev, active, change_seq) = row
    return SessionRow(key=key, title=title, preview=preview, preview_set=bool(preview_set),
                      metadata=msgspec.json.decode(metadata) if metadata else {}, project=project,
                      created_ms=ms_of_dt(created) if created else 0, deleted=deleted is not None,
                      version=(ms_of_dt(updated), origin, rev), cleared=(ms_of_dt(cleared), corigin, crev),
                      active_ms=ms_of_dt(active), change_seq=int(change_seq))


def message_of(row: tuple[Any, ...]) -> MessageRow:
    """A ``MESSAGE_SELECT`` row as a MessageRow."""
    key, mid, role, content, timestamp, tool_calls, extra, updated, origin, rev, pos, change_seq = row
    return MessageRow(key=key, message_id=mid, role=role, content=content, timestamp=timestamp,
                      tool_calls=None if tool_calls is None else msgspec.json.decode(tool_calls),
                      extra=msgspec.json.decode(extra) if extra else {}, version=(ms_of_dt(updated), origin, rev),
                      pos=int(pos), change_seq=int(change_seq))


def read_sessions(cur: Any, user_id: int, keys: list[str], *, for_update: bool = False) -> dict[str, SessionRow]:
    """The gateway's registers of these session keys (those that have a row)."""
    if not keys:
        return {}
    cur.execute(f"{SESSION_SELECT} WHERE user_id = %s AND key_hash IN ({', '.join(['%s'] * len(keys))})"
                + (" FOR UPDATE" if for_update else ""), (user_id, *[key_hash(k) for k in keys]))
    return {r.key: r for r in map(session_of, cur.fetchall())}
