"""``evlog gateway migrate``: a gateway of the row-sync version turned into events, and the refusal without it.

The previous version kept sessions and messages as rows (``gateway_sessions``,
``gateway_session_messages``, last writer wins); the web view now reads the read models folded
from the events table (``read_model``). ``migrate`` turns every live session row into a
``session.created`` and every message row into a ``message.appended`` of its account, with
origins of the account's own:

* **Stable origin keys**, so a run is idempotent and resumable: a message is origin
  ``rows-<user id>-m`` at seq = its row's ``pos`` (unique, never reused); a session is origin
  ``rows-<user id>-s`` at the seq ``gateway_row_migration`` (m012) gave it the first time it was
  migrated. A second run stores nothing again (``push_events`` skips held keys), and rows
  pushed by an old device since (``--rows``) are picked up by the next run.
* **One transaction per session page** (its ``session.created`` with up to ``PAGE`` messages)
  through ``event_store.push_events``, recording how far the session got (``max_pos``) in the
  same transaction: a run killed at any point leaves whole pages, and the next one resumes.
* **Clocks** keep each session's row order: a message's clock is its row's ``updated_at``
  (ms << 16), raised above the previous message's of the session (pos order), and the
  session's creation comes first.
* **Not carried**: deleted sessions (tombstones show nothing), an explicitly set preview, and a
  row changed after it was migrated (a message whose content a row push rewrote keeps the
  text it had then).

``pending_rows`` says whether an account still holds rows not migrated; the web view refuses
such an account with ``NotMigrated``, naming the command, instead of showing it empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from eventlog.app.gateway.rows import iso_of_ms, ms_of_dt
from eventlog.app.gateway.users import User, normalize_email
from eventlog.errors import ConfigError
from eventlog.events import Event, MessageAppended, SessionCreated
from eventlog.replication.envelope import HLC_COUNTER_BITS, Replicated

PAGE = 2000  # messages per transaction
_encoder = msgspec.json.Encoder()


class NotMigrated(ConfigError):
    """The account's sessions are still in the row tables of the previous version."""


class MigrationReport(msgspec.Struct, kw_only=True):
    users: int = 0
    sessions: int = 0
    messages: int = 0
    stored: int = 0  # envelopes stored now
    duplicates: int = 0  # envelopes an earlier run stored already


_PENDING = ("SELECT 1 FROM gateway_sessions s LEFT JOIN gateway_row_migration m "
            "ON m.user_id = s.user_id AND m.key_hash = s.key_hash WHERE s.user_id = %s AND s.deleted_at IS NULL "
            "AND (m.seq IS NULL OR EXISTS (SELECT 1 FROM gateway_session_messages g WHERE g.user_id = s.user_id "
            "AND g.key_hash = s.key_hash AND g.pos > m.max_pos)) LIMIT 1")


def pending_rows(cur: Any, user_id: int) -> bool:
    """True if the account holds a live session row, or a message row, that ``migrate`` has not turned into events."""
    cur.execute(_PENDING, (user_id,))
    return cur.fetchone() is not None


def refuse_unmigrated(cur: Any, user_id: int) -> None:
    """``NotMigrated`` naming the command if the account has rows not migrated yet."""
    if pending_rows(cur, user_id):
        raise NotMigrated("this account's sessions are still in the previous version's row tables: the gateway's "
                          "operator runs 'evlog gateway migrate --dsn URL' (idempotent, resumable) to turn them "
                          "into events")


def _session_seq(cur: Any, user_id: int, key_hash: bytes) -> tuple[int, int]:
    """(the session's origin seq, the highest message pos already migrated), assigning a seq on first use."""
    cur.execute("SELECT seq, max_pos FROM gateway_row_migration WHERE user_id = %s AND key_hash = %s FOR UPDATE",
                (user_id, key_hash))
    row = cur.fetchone()
    if row is not None:
        return int(row[0]), int(row[1])
    cur.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM gateway_row_migration WHERE user_id = %s FOR UPDATE",
                (user_id,))
    seq = int(cur.fetchone()[0])
    cur.execute("INSERT INTO gateway_row_migration (user_id, key_hash, seq, max_pos) VALUES (%s, %s, %s, 0)",
                (user_id, key_hash, seq))
    return seq, 0


def _envelope(origin: str, seq: int, hlc: int, ev: Event, project: str, user: User) -> Replicated:
    body = _encoder.encode(msgspec.structs.replace(ev, seq=seq))
    return Replicated(origin=origin, origin_seq=seq, hlc=hlc, type=ev.type, body=msgspec.Raw(body), project=project,
                      author=user.email)


def _created(cur: Any, user: User, key_hash: bytes, seq: int) -> tuple[Replicated, str, int]:
    """The session row's ``session.created`` envelope, its project and its clock."""
    cur.execute("SELECT session_key, title, metadata, project, created_at, updated_at FROM gateway_sessions "
                "WHERE user_id = %s AND key_hash = %s", (user.id, key_hash))
    key, title, metadata, project, created, updated = cur.fetchone()
    ms = ms_of_dt(created or updated)
    ev = SessionCreated(session_key=key, title=title, metadata=msgspec.json.decode(metadata) if metadata else {},
                        project=project, created_at=iso_of_ms(ms), ts=iso_of_ms(ms))
    hlc = ms << HLC_COUNTER_BITS
    return _envelope(f"rows-{user.id}-s", seq, hlc, ev, project, user), project, hlc


def _messages(cur: Any, user: User, key_hash: bytes, after: int, project: str, floor: int) -> list[Replicated]:
    """Up to ``PAGE`` of the session's message rows above pos ``after`` as envelopes (clocks above ``floor``)."""
    cur.execute("SELECT session_key, message_id, role, content, timestamp, tool_calls, extra, updated_at, pos "
                "FROM gateway_session_messages WHERE user_id = %s AND key_hash = %s AND pos > %s ORDER BY pos LIMIT %s",
                (user.id, key_hash, after, PAGE))
    out: list[Replicated] = []
    for key, mid, role, content, timestamp, tool_calls, extra, updated, pos in cur.fetchall():
        ms = ms_of_dt(updated)
        floor = max(ms << HLC_COUNTER_BITS, floor + 1)
        ev = MessageAppended(session_key=key, message_id=mid, role=role, content=content, timestamp=timestamp,
                             tool_calls=None if tool_calls is None else msgspec.json.decode(tool_calls),
                             extra=msgspec.json.decode(extra) if extra else {}, ts=iso_of_ms(ms))
        out.append(_envelope(f"rows-{user.id}-m", int(pos), floor, ev, project, user))
    return out


def migrate_page(cur: Any, user: User, key_hash: bytes, report: MigrationReport) -> bool:
    """One transaction's worth of a session (see the module docstring); True if more of it remains."""
    from eventlog.app.gateway.event_store import push_events

    cur.execute("SELECT position FROM gateway_event_position WHERE id = 1 FOR UPDATE")
    seq, done = _session_seq(cur, user.id, key_hash)
    created, project, hlc = _created(cur, user, key_hash, seq)
    if done:  # the clock goes on from the last message migrated
        cur.execute("SELECT COALESCE(MAX(hlc), %s) FROM gateway_events WHERE user_id = %s AND origin = %s "
                    "AND origin_seq = %s", (hlc, user.id, f"rows-{user.id}-m", done))
        hlc = int(cur.fetchone()[0])
    msgs = _messages(cur, user, key_hash, done, project, hlc)
    batch = ([] if done else [created]) + msgs
    result = push_events(cur, user, batch)
    report.stored += result.stored
    report.duplicates += result.duplicates
    report.messages += len(msgs)
    if msgs:
        cur.execute("UPDATE gateway_row_migration SET max_pos = %s WHERE user_id = %s AND key_hash = %s",
                    (msgs[-1].origin_seq, user.id, key_hash))
    return len(msgs) == PAGE


def sessions_to_migrate(cur: Any, emails: Sequence[str] | None = None) -> Iterator[tuple[User, bytes]]:
    """(user, session key hash) of every live session row (of the accounts ``emails`` only, if given)."""
    where, params = "s.deleted_at IS NULL", [normalize_email(e) for e in emails or ()]
    if emails is not None:
        where += f" AND u.email IN ({', '.join(['%s'] * len(params)) or 'NULL'})"
    cur.execute("SELECT u.id, u.email, s.key_hash FROM gateway_sessions s JOIN gateway_users u ON u.id = s.user_id "
                f"WHERE {where} ORDER BY u.id, s.key_hash", tuple(params))
    for uid, email, h in cur.fetchall():
        yield User(int(uid), str(email), 0), bytes(h)


def migrate(conn: Any, emails: Sequence[str] | None = None) -> MigrationReport:
    """Turn every live session and message row (of the accounts ``emails``, if given) into events (see the
    module docstring); what it did."""
    from eventlog.app.gateway.event_store import retrying

    report = MigrationReport()
    todo = conn.transaction(lambda cur: list(sessions_to_migrate(cur, emails)), doing="listing the session rows")
    report.users, report.sessions = len({u.id for u, _ in todo}), len(todo)
    for user, key_hash in todo:
        while _page(conn, retrying, user, key_hash, report):
            pass
    return report


def _page(conn: Any, retrying: Any, user: User, key_hash: bytes, report: MigrationReport) -> bool:
    """``migrate_page`` in its own transaction (retried after a deadlock or a certification conflict; only the
    attempt that committed counts in ``report``)."""
    def attempt(cur: Any) -> tuple[bool, MigrationReport]:
        part = MigrationReport()
        return migrate_page(cur, user, key_hash, part), part

    more, part = retrying(conn, attempt, doing="migrating rows")
    report.stored += part.stored
    report.duplicates += part.duplicates
    report.messages += part.messages
    return more
