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
so ``evlog sync status`` and ``evlog offsets`` show it, and ``evlog sync push --all`` sends it
again once the server takes bigger packets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventlog.app.gateway import rows as R
from eventlog.app.gateway.changes import Page, changed_sessions, count_changed_messages, fetch_changes

#: Bytes kept free in every statement for the protocol's own framing.
PACKET_SLACK = 1024
_SESSION_FRAME = len(R.SESSIONS_HEAD.encode()) + len(R.SESSIONS_TAIL.encode())
_MESSAGE_FRAME = len(R.MESSAGES_HEAD.encode()) + len(R.MESSAGES_TAIL.encode())

#: One message to push: key, message id, role, content, timestamp, tool calls, extra, version.
MessageFields = tuple[str, str, str, str, str, "list[Any] | None", "dict[str, Any]", R.Version]


@dataclass
class Rejected:
    """A row the gateway cannot take (or a pull cannot turn into an event), and why."""

    key: str
    message_id: str | None  # None: the session register
    reason: str
    size: int = 0  # bytes of the rendered row, when size was the reason
    seq: int = 0  # push: the log record it came from; pull: the gateway change counter value

    def describe(self) -> str:
        what = f"message {_short(self.message_id)} of session {_short(self.key)}" if self.message_id is not None \
            else f"session {_short(self.key)}"
        return f"{what}: {self.reason}"


def _short(text: str, n: int = 120) -> str:
    r = repr(text)
    return r if len(r) <= n else r[: n - 1] + "…"


@dataclass
class Prepared:
    """A push batch rendered for one user: its statements, what they carry and what was refused."""

    stmts: list[bytes]
    sessions: int
    messages: list[tuple[str, str, R.Version]]  # (key, id, version) of every message sent
    rejected: list[Rejected] = field(default_factory=list)
    body: bytes = b""  # the HTTP sync API's request body instead of statements (``http_client``)


def statement_limit(max_packet: int) -> int:
    """The biggest statement evlog sends to a server whose ``max_allowed_packet`` is ``max_packet``."""
    return max(4096, min(R.MAX_STATEMENT_BYTES, max_packet - PACKET_SLACK))


def max_row_bytes(max_packet: int) -> int:
    """The biggest rendered message row that fits in one statement (what the HTTP API advertises)."""
    return max(0, max_packet - PACKET_SLACK - _MESSAGE_FRAME)


def prepare(user_id: int, sessions: list[R.SessionRow], messages: list[MessageFields], *,
            max_packet: int) -> Prepared:
    """Render one push batch for ``user_id``, refusing rows too big for the server (see the module docstring)."""
    limit = statement_limit(max_packet)
    row_room = max_packet - PACKET_SLACK
    rejected: list[Rejected] = []
    refused_keys: set[str] = set()
    session_values: list[bytes] = []
    for r in sessions:
        v = ("(" + ",".join([R.literal(x) for x in R.session_params(user_id, r)]) + ")").encode("utf-8")
        if len(v) + _SESSION_FRAME > row_room:
            rejected.append(Rejected(r.key, None, _too_big(len(v) + _SESSION_FRAME, max_packet), len(v)))
            refused_keys.add(r.key)
        else:
            session_values.append(v)
    message_values: list[bytes] = []
    sent: list[tuple[str, str, R.Version]] = []
    for key, mid, role, content, timestamp, tool_calls, extra, version in messages:
        if key in refused_keys:
            rejected.append(Rejected(key, mid, "its session's register was refused in the same batch"))
            continue
        v = R.message_values(user_id, key, mid, role, content, timestamp, tool_calls, extra, version).encode("utf-8")
        if len(v) + _MESSAGE_FRAME > row_room:
            rejected.append(Rejected(key, mid, _too_big(len(v) + _MESSAGE_FRAME, max_packet), len(v)))
            continue
        message_values.append(v)
        sent.append((key, mid, version))
    stmts = (R.pack_encoded(R.SESSIONS_HEAD, R.SESSIONS_TAIL, session_values, limit)
             + R.pack_encoded(R.MESSAGES_HEAD, R.MESSAGES_TAIL, message_values, limit))
    return Prepared(stmts, len(session_values), sent, rejected)


def _too_big(size: int, max_packet: int) -> str:
    return (f"{size} bytes as SQL, more than the server's max_allowed_packet ({max_packet}); raise it on the "
            f"server, then 'evlog sync push --all' sends it again")


def write(cur: Any, user_id: int, batch: Prepared) -> tuple[int, int]:
    """Run a prepared batch in the caller's transaction: (its change counter value, messages kept).

    Messages older than a newer delete of their session are dropped (``rows.drop_cleared``)
    and not counted. A batch left empty by refusals writes nothing and returns (0, 0).
    """
    if not batch.stmts:
        return 0, 0
    seq = R.next_change_seq(cur, user_id)
    R.execute(cur, batch.stmts)
    rows = [R.MessageRow(key=k, message_id=mid, role="", content="", version=v) for k, mid, v in batch.messages]
    return seq, len(rows) - R.drop_cleared(cur, user_id, rows)


def changes(cur: Any, user_id: int, after: int, *, skip: list[int], limit: int) -> Page:
    """The user's rows changed after ``after`` (``changes.fetch_changes``), in the caller's transaction."""
    return fetch_changes(cur, user_id, after, skip=skip, limit=limit)


def pending(cur: Any, user_id: int, after: int, *, skip: list[int]) -> tuple[list[R.SessionRow], int, int]:
    """(session registers changed after ``after``, messages changed after it, the user's counter)."""
    regs = changed_sessions(cur, user_id, after)
    n, top = count_changed_messages(cur, user_id, after, skip=skip)
    return regs, n, top
