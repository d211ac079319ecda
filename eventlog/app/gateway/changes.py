"""Reading what changed on the gateway since a change counter value (what ``evlog sync pull`` fetches).

Every row carries the ``change_seq`` its user's counter had when the row last changed.
Counter values are taken under the user row's lock, which the taking transaction holds
until it ends, so transactions commit their values in order: in any consistent snapshot
the committed values form a prefix. A reader that has everything up to ``w`` therefore
misses nothing by asking for ``change_seq > w``.

Message rows a device pushed itself (their counter values are recorded in its log) can be
skipped: a guarded upsert either replaced the whole row with the device's copy or left it
(and its counter value) alone. Session rows cannot: their ``cleared`` version is merged
(the greater of both), so a row the device wrote may still hold news for it.

A page holds whole counter values (all rows of one transaction together, however many),
about ``limit`` rows, the registers of the sessions its messages belong to, and the
watermark to record once the page is applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventlog.app.gateway import rows as R


@dataclass
class Page:
    """Changed rows up to ``watermark`` (in one consistent snapshot)."""

    watermark: int
    more: bool
    sessions: dict[str, R.SessionRow] = field(default_factory=dict)  # changed registers
    context: dict[str, R.SessionRow] = field(default_factory=dict)  # unchanged registers of changed messages
    messages: list[R.MessageRow] = field(default_factory=list)  # in gateway (arrival) order

    @property
    def rows(self) -> int:
        return len(self.sessions) + len(self.messages)

    def keys(self) -> list[str]:
        """Session keys in the order of their first change in this page."""
        first: dict[str, int] = {}
        for r in self.sessions.values():
            first[r.key] = min(first.get(r.key, r.change_seq), r.change_seq)
        for m in self.messages:
            first[m.key] = min(first.get(m.key, m.change_seq), m.change_seq)
        return sorted(first, key=lambda k: (first[k], k))


def _skip(table: str, skip: list[int]) -> tuple[str, tuple[int, ...]]:
    if not skip or table != "gateway_session_messages":
        return "", ()
    return f" AND change_seq NOT IN ({', '.join(['%s'] * len(skip))})", tuple(skip)


def fetch_changes(cur: Any, user_id: int, after: int, *, skip: list[int] | None = None, limit: int = 1000) -> Page:
    """Rows of ``user_id`` with ``after < change_seq <= watermark`` (messages with values in ``skip`` left out).

    Run it inside one transaction (a consistent snapshot: InnoDB's REPEATABLE READ).
    """
    skip = skip or []
    cur.execute("SELECT change_seq FROM gateway_users WHERE id = %s", (user_id,))
    top = int(cur.fetchone()[0])
    cut = top
    for table in ("gateway_sessions", "gateway_session_messages"):
        not_in, skipped = _skip(table, skip)
        cur.execute(f"SELECT change_seq FROM {table} WHERE user_id = %s AND change_seq > %s{not_in} "
                    "ORDER BY change_seq LIMIT 1 OFFSET %s", (user_id, after, *skipped, max(0, limit - 1)))
        row = cur.fetchone()
        if row is not None:
            cut = min(cut, int(row[0]))
    page = Page(watermark=cut, more=cut < top)
    cur.execute(f"{R.SESSION_SELECT} WHERE user_id = %s AND change_seq > %s AND change_seq <= %s", (user_id, after, cut))
    page.sessions = {r.key: r for r in map(R.session_of, cur.fetchall())}
    not_in, skipped = _skip("gateway_session_messages", skip)
    cur.execute(f"{R.MESSAGE_SELECT} WHERE user_id = %s AND change_seq > %s AND change_seq <= %s{not_in} ORDER BY pos",
                (user_id, after, cut, *skipped))
    page.messages = [R.message_of(r) for r in cur.fetchall()]
    missing = sorted({m.key for m in page.messages} - set(page.sessions))
    for i in range(0, len(missing), 500):
        page.context.update(R.read_sessions(cur, user_id, missing[i:i + 500]))
    return page


def changed_sessions(cur: Any, user_id: int, after: int) -> list[R.SessionRow]:
    """Session registers changed after ``after`` (few: a caller compares them with its own copy)."""
    cur.execute(f"{R.SESSION_SELECT} WHERE user_id = %s AND change_seq > %s", (user_id, after))
    return [R.session_of(r) for r in cur.fetchall()]


def count_changed_messages(cur: Any, user_id: int, after: int, *, skip: list[int] | None = None) -> tuple[int, int]:
    """(messages changed after ``after`` with values not in ``skip``, the user's counter)."""
    not_in, skipped = _skip("gateway_session_messages", skip or [])
    cur.execute(f"SELECT COUNT(*) FROM gateway_session_messages WHERE user_id = %s AND change_seq > %s{not_in}",
                (user_id, after, *skipped))
    n = int(cur.fetchone()[0])
    cur.execute("SELECT change_seq FROM gateway_users WHERE id = %s", (user_id,))
    return n, int(cur.fetchone()[0])
