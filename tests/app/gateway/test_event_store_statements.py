"""What the gateway's event store asks the database (issue 22: push and pull throughput).

The contract is ``test_event_store``; these pin the statement shapes the throughput comes
from: a push of consecutive seqs looks up what the account holds as one index range, and a
pull page comes back as a few values the server joined (not a row per envelope), in order,
every envelope whole, one bigger than a part alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from eventlog.app.gateway import event_store as ES
from eventlog.replication.envelope import Replicated
from tests.app.gateway.test_event_store import _fresh_devices, bare, dev, drain, env, keys, mysql_store  # noqa: F401 (autouse)
from tests.mysql_helpers import MYSQL_URL, fresh_email

pytestmark = pytest.mark.skipif(not MYSQL_URL, reason="EVLOG_TEST_MYSQL_URL is not set")


@pytest.fixture
def store() -> Iterator[ES.MySQLEventStore]:
    with mysql_store() as s:
        yield s


class Spy:
    """A cursor that records the statements it runs and how many rows each answered."""

    def __init__(self, cur: Any) -> None:
        self.cur, self.log = cur, []

    def execute(self, sql: str, args: Any = None) -> Any:
        got = self.cur.execute(sql, args)
        self.log.append([sql, 0])
        return got

    def fetchall(self) -> Any:
        rows = self.cur.fetchall()
        self.log[-1][1] = len(rows)
        return rows

    def fetchone(self) -> Any:
        self.log[-1][1] = 1
        return self.cur.fetchone()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cur, name)


def spied(store: ES.MySQLEventStore, fn: Any) -> tuple[Any, list[list[Any]]]:
    holder: dict[str, Spy] = {}

    def run(cur: Any) -> Any:
        holder["spy"] = Spy(cur)
        return fn(holder["spy"])

    with store.pool.connection() as conn:
        got = ES.retrying(conn, run, doing="testing")
    return got, holder["spy"].log


def test_a_push_of_consecutive_seqs_looks_up_what_is_held_as_one_range(store):
    a = fresh_email("a")
    store.push(a, [env("d", 3), env("d", 4)])
    batch = [env("d", i) for i in range(1, 2001)]
    (result, log) = spied(store, lambda cur: ES.push_events(cur, ES.normalize_email(a), batch))
    assert (result.stored, result.duplicates) == (1998, 2)
    held = [(sql, rows) for sql, rows in log if sql.startswith("SELECT origin_seq FROM gateway_events")]
    assert len(held) == 1 and "BETWEEN" in held[0][0] and held[0][1] == 2  # was two IN lists of 1000 seqs
    assert keys(drain(store, a)[0]) == [("d", 3), ("d", 4)] + [("d", i) for i in range(1, 2001) if i not in (3, 4)]


def test_a_sparse_push_still_finds_what_is_held(store):
    a = fresh_email("a")
    store.push(a, [env("d", 5), env("d", 10**9)])
    got = store.push(a, [env("d", 1), env("d", 5), env("d", 10**9), env("d", 10**12)])
    assert (got.stored, got.duplicates) == (2, 2)


def test_a_page_comes_as_a_few_joined_parts_in_order(store, monkeypatch):
    monkeypatch.setattr(ES, "PART_BYTES", 4096)
    a = fresh_email("a")
    _, start = drain(store, a)
    big = b'"' + b"b" * 10_000 + b'"'
    sent = [env("d", i, body=big if i in (7, 300) else None) for i in range(1, 1001)]
    store.push(a, sent)
    (parts, cursor, more), log = spied(store, lambda cur: ES.pull_json(cur, ES.resolve_user(cur, a).id, start, 1000))
    assert not more and cursor > start
    rows = sum(n for sql, n in log if "GROUP_CONCAT" in sql)
    assert rows == len(parts) < 60  # ~36 KB of JSON in parts of 4 KB and two alone: was one row per envelope
    assert [p for p in parts if b"b" * 10_000 in p] == [p for p in parts if p.count(b'"origin"') == 1 and len(p) > 4096]
    page = msgspec.json.decode(b"[" + b",".join(parts) + b"]", type=list[Replicated])
    assert [(bare(e.origin), e.origin_seq, bytes(e.body)) for e in page] == [
        (bare(e.origin), e.origin_seq, bytes(e.body)) for e in sent]
    assert all(e.origin == dev("d") for e in page)


def test_a_page_with_erased_envelopes_skips_them_and_moves_past(store):
    a = fresh_email("a")
    _, start = drain(store, a)
    store.push(a, [env("d", i) for i in range(1, 6)])
    store.erase(a, [(dev("d"), 2), (dev("d"), 4)])
    page = store.pull(a, start, 3)
    assert keys(page.events) == [("d", 1), ("d", 3)] and page.more
    rest = store.pull(a, page.cursor, 10)
    assert keys(rest.events) == [("d", 5)] and not rest.more
