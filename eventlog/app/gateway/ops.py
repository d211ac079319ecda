"""What the gateway does on behalf of one user: write a push batch, read changes, count what is pending.

Both ways a device syncs end here: direct ``--dsn`` sync (``sync.Gateway``) calls these
functions on its own connection, and the HTTP sync API (``eventlog.app.gateway.http_api``)
calls them on the server's connection for the user its token belongs to. So the
last-write-wins rules, the change counter and the rows written are the same in both modes.

**Rows the server cannot take.** A statement may not exceed the server's
``max_allowed_packet``; a row that alone would (a 20 MB message against the default 16 MiB)
used to fail its batch, and so every later push, forever. ``prepare`` renders each row and
refuses one that cannot fit in a statement of its own *before* anything is sent, returning
it in ``Prepared.rejected`` with the reason; the rest of the batch goes through. A refused
session register takes its messages in the same batch with it (they would have no session
row to belong to). The pushing device records each refusal in its log (``sync.Pusher``),
so ``evlog sync status`` and ``evlog offsets`` show it, and ``evlog sync push --retry-rejected``
(or ``--all``) sends it again once the server takes bigger packets.

**The one screen.** Before rendering, ``prepare`` runs every row through
``screen.gateway_session_problem`` / ``gateway_message_problem`` (the limits of the tables and
of the server's flavour, ``screen.Limits``) and clamps versions stamped in the future
(``screen.clamp_version``). Both paths end here, so direct and HTTP sync take and refuse the
same rows. A row the database refuses anyway (an error about the row, ``ROW_ERRORS``, not
an outage) makes ``write`` run the batch again row by row in the same transaction: that row
is refused with the server's message and the others are written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventlog.app.gateway import rows as R
from eventlog.app.gateway import screen as S
from eventlog.app.gateway.changes import Page, changed_sessions, count_changed_messages, fetch_changes
from eventlog.app.gateway.screen import MessageFields, Rejected

__all__ = ["ROW_ERRORS", "MessageFields", "Prepared", "Rejected", "changes", "max_row_bytes", "pending", "prepare",
           "statement_limit", "write"]

#: Bytes kept free in every statement for the protocol's own framing.
PACKET_SLACK = 1024
_SESSION_FRAME = len(R.SESSIONS_HEAD.encode()) + len(R.SESSIONS_TAIL.encode())
_MESSAGE_FRAME = len(R.MESSAGES_HEAD.encode()) + len(R.MESSAGES_TAIL.encode())



@dataclass
class Prepared:
    """A push batch rendered for one user: its statements, what they carry and what was refused."""

    stmts: list[bytes]
    sessions: int
    messages: list[tuple[str, str, R.Version]]  # (key, id, version) of every message sent
    rejected: list[Rejected] = field(default_factory=list)
    body: bytes = b""  # the HTTP sync API's request body instead of statements (``http_client``)
    rows: list[tuple[str, str | None, bytes]] = field(default_factory=list)  # (key, id or None, rendered VALUES)
    ceiling: int | None = None  # the receiving gateway's ``screen.ceiling_ms``: stored versions past it lose
    cleared_keys: list[str] = field(default_factory=list)  # sessions whose register carries a delete


def statement_limit(max_packet: int) -> int:
    """The biggest statement evlog sends to a server whose ``max_allowed_packet`` is ``max_packet``."""
    return max(4096, min(R.MAX_STATEMENT_BYTES, max_packet - PACKET_SLACK))


def max_row_bytes(max_packet: int) -> int:
    """The biggest rendered message row that fits in one statement (what the HTTP API advertises)."""
    return max(0, max_packet - PACKET_SLACK - _MESSAGE_FRAME)


def prepare(user_id: int, sessions: list[R.SessionRow], messages: list[MessageFields], *,
            max_packet: int, limits: S.Limits = S.STRICTEST, now: int | None = None) -> Prepared:
    """Render one push batch for ``user_id``, refusing rows the server cannot take (see the module docstring).

    ``now`` is the receiving gateway's clock (ms) for the clamp of future versions.
    """
    ceiling = S.ceiling_ms(now)
    sessions, messages, rejected = S.screen_push(sessions, messages, limits, ceiling)
    limit = statement_limit(max_packet)
    row_room = max_packet - PACKET_SLACK
    refused_keys: set[str] = set()
    rendered: list[tuple[str, str | None, bytes]] = []
    for r in sessions:
        try:
            v = ("(" + ",".join([R.literal(x) for x in R.session_params(user_id, r)]) + ")").encode("utf-8")
        except S.ENCODE_ERRORS as e:
            rejected.append(Rejected(r.key, None, f"cannot be encoded for the server: {e}"))
            refused_keys.add(r.key)
            continue
        if len(v) + _SESSION_FRAME > row_room:
            rejected.append(Rejected(r.key, None, _too_big(len(v) + _SESSION_FRAME, max_packet), len(v)))
            refused_keys.add(r.key)
        else:
            rendered.append((r.key, None, v))
    n_sessions = len(rendered)
    sent: list[tuple[str, str, R.Version]] = []
    for key, mid, role, content, timestamp, tool_calls, extra, version in messages:
        if key in refused_keys:
            rejected.append(Rejected(key, mid, "its session's register was refused in the same batch"))
            continue
        try:
            v = R.message_values(user_id, key, mid, role, content, timestamp, tool_calls, extra,
                                 version).encode("utf-8")
        except S.ENCODE_ERRORS as e:  # e.g. a lone surrogate (the log's and msgspec's decoders never make one)
            rejected.append(Rejected(key, mid, f"cannot be encoded for the server: {e}"))
            continue
        if len(v) + _MESSAGE_FRAME > row_room:
            rejected.append(Rejected(key, mid, _too_big(len(v) + _MESSAGE_FRAME, max_packet), len(v)))
            continue
        rendered.append((key, mid, v))
        sent.append((key, mid, version))
    stmts = (R.pack_encoded(R.SESSIONS_HEAD, R.SESSIONS_TAIL, [v for _, _, v in rendered[:n_sessions]], limit)
             + R.pack_encoded(R.MESSAGES_HEAD, R.MESSAGES_TAIL, [v for _, _, v in rendered[n_sessions:]], limit))
    cleared = [r.key for r in sessions if r.cleared != R.ZERO and r.key not in refused_keys]
    return Prepared(stmts, n_sessions, sent, rejected, rows=rendered, ceiling=ceiling, cleared_keys=cleared)


def _too_big(size: int, max_packet: int) -> str:
    return (f"{size} bytes as SQL, more than the server's max_allowed_packet ({max_packet}); raise it on the "
            f"server, then 'evlog sync push --retry-rejected' sends it again")


#: Server errors about one row's values, not about the server or the connection: the batch is run again row by
#: row and the row refused (MariaDB's JSON CHECK 4025, MySQL's invalid JSON 3140 / too deep 3157 / bad text 3144,
#: data too long 1406, bad string 1366 / 1300, bad time 1292, out of range 1264, NULL 1048, no parent row 1452).
ROW_ERRORS = frozenset({4025, 3140, 3157, 3144, 3146, 1406, 1366, 1300, 1292, 1264, 1048, 1452})


def write(cur: Any, user_id: int, batch: Prepared) -> tuple[int, int, list[Rejected]]:
    """Run a prepared batch in the caller's transaction: (its change counter value, messages kept, rows refused).

    Messages older than a newer delete of their session are dropped (``rows.drop_cleared``)
    and not counted. A batch left empty by refusals writes nothing and returns (0, 0, []).
    A row the server refuses (``ROW_ERRORS``) is isolated: the batch is written again one
    row at a time (what was written already is rewritten unchanged: an equal version is no
    change) and each refused row is returned with the server's reason.
    """
    if not batch.stmts:
        return 0, 0, []
    seq = R.next_change_seq(cur, user_id, ceiling=batch.ceiling)
    refused: list[Rejected] = []
    try:
        R.execute(cur, batch.stmts)
    except Exception as e:
        if _row_error(e) is None or not batch.rows:
            raise
        refused = _write_row_by_row(cur, batch)
    gone = {(r.key, r.message_id) for r in refused}
    rows = [R.MessageRow(key=k, message_id=mid, role="", content="", version=v) for k, mid, v in batch.messages
            if (k, mid) not in gone]
    if batch.ceiling is not None:
        R.drop_past_ceiling(cur, user_id, [k for k in batch.cleared_keys if (k, None) not in gone], batch.ceiling)
    return seq, len(rows) - R.drop_cleared(cur, user_id, rows), refused


def _row_error(e: BaseException) -> str | None:
    """The server's text when ``e`` is an error about a row's values (``ROW_ERRORS``), else None."""
    args: tuple[Any, ...] = getattr(e, "args", ())
    if len(args) >= 2 and isinstance(args[0], int) and args[0] in ROW_ERRORS:
        return f"the server refused it: ({args[0]}) {args[1]}"
    return None


def _write_row_by_row(cur: Any, batch: Prepared) -> list[Rejected]:
    """Each row of ``batch`` as its own statement; the rows the server refuses, with its reasons."""
    refused: list[Rejected] = []
    bad_keys: set[str] = set()
    for key, mid, value in batch.rows:
        if mid is not None and key in bad_keys:
            refused.append(Rejected(key, mid, "its session's register was refused in the same batch"))
            continue
        head, tail = (R.SESSIONS_HEAD, R.SESSIONS_TAIL) if mid is None else (R.MESSAGES_HEAD, R.MESSAGES_TAIL)
        try:
            cur.execute(head.encode() + value + tail.encode())
        except Exception as e:
            why = _row_error(e)
            if why is None:
                raise
            refused.append(Rejected(key, mid, why, len(value)))
            if mid is None:
                bad_keys.add(key)
    return refused


def changes(cur: Any, user_id: int, after: int, *, skip: list[int], limit: int) -> Page:
    """The user's rows changed after ``after`` (``changes.fetch_changes``), in the caller's transaction."""
    return fetch_changes(cur, user_id, after, skip=skip, limit=limit)


def pending(cur: Any, user_id: int, after: int, *, skip: list[int]) -> tuple[list[R.SessionRow], int, int]:
    """(session registers changed after ``after``, messages changed after it, the user's counter)."""
    regs = changed_sessions(cur, user_id, after)
    n, top = count_changed_messages(cur, user_id, after, skip=skip)
    return regs, n, top
