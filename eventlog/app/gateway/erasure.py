"""Erasure at the gateway: delete the erased rows, and tell every other device (INVARIANTS I25, I26).

``evlog erase`` on a device that names a gateway (``purge``) deletes, in one transaction,
the message rows of every erased message and the session rows of every erased session
(their messages go with them), blanks a surviving session's title or preview that still
holds an erased text, and records one row in ``gateway_erasures``: the erasure's id, the
erasing device's origin and the ``ref_hash`` names of what it removed (hashes of session
keys and message ids; never text, never the keys themselves). The same transaction empties
the bodies of the erased events in the replicated event log (``Removal.events``, their origin
keys; ``event_store.erase_events``): the account's copies, and every account's copies of its
own devices' events; their rows stay without a body, and no pull returns them again.

A deleted row is no change another device can pull, so every ``sync pull`` and ``push``
first applies the erasures recorded after its position (``apply_pulled``): the device runs
the same local erase (``eventlog.app.erase``, target kind ``sync``: the events of the named
messages, sessions and facts and what was made from them). Each applied gateway erasure is
recorded in the device's log as a ``log.erasure`` whose ``origin`` is ``<target>#<id>``,
which is also the pull position for erasures (one with no seqs when the device held none of
it). A device applies them before it pushes, so it never sends an erased row back.

The in-memory gateway (``MemoryGateway``) keeps the same rows in ``erasures``. Over the HTTP
sync API (``HttpRemote``) the server runs the same ``purge_rows`` / ``rows_after`` for the
token's user (``POST /erase``, ``POST /erasures``), so a device that syncs only over HTTP
erases at the gateway and applies the other devices' erasures just as a direct one does.
Recording is idempotent by erasure id: a request sent twice (a retried connection) deletes
and records once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eventlog.app.gateway.event_store import erase_events
from eventlog.errors import ConfigError

if TYPE_CHECKING:
    from eventlog.app.gateway.sync import Remote
    from eventlog.app.workspace import Workspace

TABLE = "gateway_erasures"
EVENTS_EMPTIED = "gateway_events (bodies emptied)"


@dataclass(frozen=True)
class Removal:
    """What one erase removes at the gateway: session keys, (key, message id) pairs, names for other devices."""

    sessions: tuple[str, ...]
    messages: tuple[tuple[str, str], ...]
    refs: tuple[str, ...]
    needles: tuple[bytes, ...] = ()  # texts a surviving session's title or preview must not hold
    erasure_id: str = ""
    origin: str = ""
    events: tuple[tuple[str, int], ...] = ()  # origin keys (device, origin seq) of the erased events


@dataclass(frozen=True)
class GatewayErasure:
    """One row of ``gateway_erasures``."""

    id: int
    erasure_id: str
    origin: str
    refs: tuple[str, ...]


def purge(remote: Remote, removal: Removal, *, dry_run: bool = False) -> tuple[dict[str, int], int]:
    """Delete (``dry_run``: count) the rows of ``removal`` and record the erasure: (rows by table, its row id)."""
    from eventlog.app.gateway.http_client import HttpRemote
    from eventlog.app.gateway.memory_store import MemoryRemote
    from eventlog.app.gateway.sync import Gateway

    if isinstance(remote, MemoryRemote):
        return _purge_memory(remote, removal, dry_run)
    if isinstance(remote, Gateway):
        return purge_rows(remote.conn, remote.user.id, removal, dry_run=dry_run)
    if isinstance(remote, HttpRemote):
        return remote.purge(removal, dry_run=dry_run)
    raise ConfigError(f"this gateway ({type(remote).__name__}) does not relay erasures")


def erasures_after(remote: Remote, after: int) -> list[GatewayErasure]:
    """The user's gateway erasures with an id above ``after``, oldest first ([] for a remote without them)."""
    from eventlog.app.gateway.http_client import HttpRemote
    from eventlog.app.gateway.memory_store import MemoryRemote
    from eventlog.app.gateway.sync import Gateway

    if isinstance(remote, MemoryRemote):
        with remote.gateway.lock:
            return [e for uid, e in remote.gateway.erasures if uid == remote.user.id and e.id > after]
    if isinstance(remote, Gateway):
        return rows_after(remote.conn, remote.user.id, after)
    if isinstance(remote, HttpRemote):
        return remote.erasures_after(after)
    return []


def purge_rows(conn: Any, user_id: int, removal: Removal, *, dry_run: bool = False) -> tuple[dict[str, int], int]:
    """``purge`` at the database, for ``user_id`` only, in one transaction (direct sync and the HTTP API)."""
    return conn.transaction(lambda cur: _purge_sql(cur, user_id, removal, dry_run),
                            doing="erasing rows")


def rows_after(conn: Any, user_id: int, after: int) -> list[GatewayErasure]:
    """``erasures_after`` at the database, for ``user_id`` only."""
    def read(cur: Any) -> list[GatewayErasure]:
        cur.execute(f"SELECT id, erasure_id, origin, refs FROM {TABLE} WHERE user_id = %s AND id > %s ORDER BY id",
                    (user_id, after))
        return [GatewayErasure(int(i), e, o, tuple(json.loads(r))) for i, e, o, r in cur.fetchall()]

    return conn.transaction(read, doing="reading erasures")


def apply_pulled(ws: Workspace, remote: Remote) -> int:
    """Apply the gateway's erasures this device has not applied yet (see the module docstring); how many."""
    from eventlog.app.erase import Target, erase, erasures

    rows = erasures_after(remote, 0)  # one small query; the log is read only when there are any
    if not rows:
        return 0
    prefix = f"{remote.target}#"
    done = {int(e.origin[len(prefix):]) for e in erasures(ws) if e.origin.startswith(prefix)
            and e.origin[len(prefix):].isdigit()}
    todo = [g for g in rows if g.id not in done]
    for g in todo:
        erase(ws, Target("sync", refs=g.refs, origin=f"{prefix}{g.id}"), record_empty=True)
    return len(todo)


def drop_erased(page: Any, erased: set[str]) -> int:
    """Take the rows of what this log erased out of a pulled page (the gateway may still hold them when an
    erase did not name it); how many. A pull never brings an erased message or session back."""
    from eventlog.erasure import ref_hash

    if not erased:
        return 0
    gone = {k for k in page.keys() if ref_hash("session", k) in erased}  # noqa: SIM118 - Page.keys() is a method
    before = page.rows
    for k in gone:
        page.sessions.pop(k, None)
        page.context.pop(k, None)
    page.messages = [m for m in page.messages if m.key not in gone and ref_hash(m.key, m.message_id) not in erased]
    return before - page.rows


# --- the in-memory gateway -------------------------------------------------------------


def _purge_memory(remote: Any, removal: Removal, dry_run: bool) -> tuple[dict[str, int], int]:
    gw = remote.gateway
    with gw.lock:
        seen = [e.id for uid, e in gw.erasures if uid == remote.user.id and e.erasure_id == removal.erasure_id]
        if seen and removal.erasure_id and not dry_run:
            return {}, seen[0]
        t = gw.tables(remote.user.id)
        sessions = [k for k in removal.sessions if k in t.sessions]
        messages = [(k, m) for k, m in removal.messages if m in t.messages.get(k, {}) and k not in sessions]
        cascaded = sum(len(t.messages.get(k, {})) for k in sessions)
        scrub = [k for k, row in t.sessions.items() if k not in sessions and _holds(row.title + row.preview, removal)]
        counts = _counts(len(sessions), len(messages) + cascaded, len(scrub))
        if dry_run:
            return counts, 0
        for k in sessions:
            t.sessions.pop(k, None)
            t.messages.pop(k, None)
        for k, m in messages:
            t.messages.get(k, {}).pop(m, None)
        for k in scrub:
            row = t.sessions[k]
            row.title = "" if _holds(row.title, removal) else row.title
            row.preview = "" if _holds(row.preview, removal) else row.preview
        row = GatewayErasure(len(gw.erasures) + 1, removal.erasure_id, removal.origin, removal.refs)
        gw.erasures.append((remote.user.id, row))
        return counts, row.id


# --- MySQL ---------------------------------------------------------------------------

_KEY = "key_hash = UNHEX(SHA2(%s, 256))"
_ID = "id_hash = UNHEX(SHA2(%s, 256))"


def _purge_sql(cur: Any, user_id: int, removal: Removal, dry_run: bool) -> tuple[dict[str, int], int]:
    one: Callable[[str, tuple[Any, ...]], int] = lambda sql, args: (cur.execute(sql, args), cur.fetchone()[0])[1]  # noqa: E731
    if not dry_run and removal.erasure_id:
        cur.execute(f"SELECT id FROM {TABLE} WHERE user_id = %s AND erasure_id = %s FOR UPDATE",
                    (user_id, removal.erasure_id))
        seen = cur.fetchone()
        if seen is not None:  # the same request again (a retried connection): done already
            return {}, int(seen[0])
    sessions = [k for k in removal.sessions
                if one(f"SELECT COUNT(*) FROM gateway_sessions WHERE user_id = %s AND {_KEY}", (user_id, k))]
    cascaded = sum(one(f"SELECT COUNT(*) FROM gateway_session_messages WHERE user_id = %s AND {_KEY}", (user_id, k))
                   for k in sessions)
    messages = [(k, m) for k, m in removal.messages if k not in sessions and one(
        f"SELECT COUNT(*) FROM gateway_session_messages WHERE user_id = %s AND {_KEY} AND {_ID}", (user_id, k, m))]
    keys = sorted({k for k, _m in removal.messages} - set(sessions))
    scrub = []
    for k in keys:
        cur.execute(f"SELECT title, preview FROM gateway_sessions WHERE user_id = %s AND {_KEY}", (user_id, k))
        row = cur.fetchone()
        if row is not None and _holds(row[0] + row[1], removal):
            scrub.append((k, "" if _holds(row[0], removal) else row[0], "" if _holds(row[1], removal) else row[1]))
    counts = _counts(len(sessions), len(messages) + cascaded, len(scrub))
    emptied = erase_events(cur, user_id, removal.events, dry_run=dry_run)
    if emptied:
        counts[EVENTS_EMPTIED] = emptied
    if dry_run:
        return counts, 0
    for k in sessions:  # its messages go with it (ON DELETE CASCADE)
        cur.execute(f"DELETE FROM gateway_session_messages WHERE user_id = %s AND {_KEY}", (user_id, k))
        cur.execute(f"DELETE FROM gateway_sessions WHERE user_id = %s AND {_KEY}", (user_id, k))
    for k, m in messages:
        cur.execute(f"DELETE FROM gateway_session_messages WHERE user_id = %s AND {_KEY} AND {_ID}", (user_id, k, m))
    for k, title, preview in scrub:
        cur.execute(f"UPDATE gateway_sessions SET title = %s, preview = %s WHERE user_id = %s AND {_KEY}",
                    (title, preview, user_id, k))
    cur.execute(f"INSERT INTO {TABLE} (user_id, erasure_id, origin, refs, created_at) "
                "VALUES (%s, %s, %s, %s, UTC_TIMESTAMP(3))",
                (user_id, removal.erasure_id, removal.origin[:64], json.dumps(list(removal.refs))))
    return counts, int(cur.lastrowid)


def _counts(sessions: int, messages: int, scrubbed: int) -> dict[str, int]:
    out = {"gateway_sessions": sessions, "gateway_session_messages": messages}
    if scrubbed:
        out["gateway_sessions (title/preview blanked)"] = scrubbed
    return {k: v for k, v in out.items() if v}


def _holds(text: str, removal: Removal) -> bool:
    data = text.encode("utf-8", "surrogatepass")
    return any(n in data for n in removal.needles if n)
