"""The event store contract (``eventlog.replication.store``), one suite run against every store.

``MemoryEventStore`` defines the contract; ``MySQLEventStore`` (the gateway's tables) and
``HttpEventStore`` (the gateway's HTTP routes in front of them) must behave the same. Every
test works under fresh accounts, so the stores on the shared test database never see each
other's envelopes; positions are global to a store, so no test assumes where they start.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import msgspec
import pytest

from eventlog.app.gateway import auth
from eventlog.app.gateway.auth import AuthError
from eventlog.app.gateway.connection import DSN, Connection
from eventlog.app.gateway.event_store import MySQLEventStore
from eventlog.app.gateway.http_events import HttpEventStore
from eventlog.errors import BackendError, ConfigError
from eventlog.replication.envelope import Replicated
from eventlog.replication.store import EventStore, MemoryEventStore, PullPage, PushResult, Share
from tests.mysql_helpers import MYSQL_URL, fresh_email

PASSWORD = "event store password 42"


@contextlib.contextmanager
def mysql_store(**kw: Any) -> Iterator[MySQLEventStore]:
    s = MySQLEventStore(MYSQL_URL, **kw)
    try:
        yield s
    finally:
        s.close()


def sync_token(email: str) -> str:
    """A sync token for ``email`` (the user is created, or given a password, first)."""
    conn = Connection(DSN.parse(MYSQL_URL))
    try:
        auth.add_user(conn, email, PASSWORD)  # (a user a share created, without a password, gets this one)
        return auth.login(conn, email, PASSWORD, kind="sync")[1]
    finally:
        conn.close()


class PerAccountHttp:
    """An ``EventStore`` over HTTP for any account: each account's calls go with that account's own token."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.stores: dict[str, HttpEventStore] = {}

    def of(self, account: str) -> HttpEventStore:
        if account not in self.stores:
            self.stores[account] = HttpEventStore(self.url, sync_token(account))
        return self.stores[account]

    def push(self, account: str, events: Sequence[Replicated]) -> PushResult:
        return self.of(account).push(account, events)

    def pull(self, account: str, after: int, limit: int = 1000) -> PullPage:
        return self.of(account).pull(account, after, limit)

    def high_water(self, account: str, origin: str) -> int:
        return self.of(account).high_water(account, origin)

    def share(self, owner: str, project: str, member: str, *, read_only: bool = False) -> None:
        self.of(owner).share(owner, project, member, read_only=read_only)

    def unshare(self, owner: str, project: str, member: str) -> bool:
        return self.of(owner).unshare(owner, project, member)

    def shares(self, account: str) -> list[Share]:
        return self.of(account).shares(account)

    def close(self) -> None:
        for s in self.stores.values():
            s.close()


@pytest.fixture(scope="module")
def http_server() -> Iterator[Any]:
    from eventlog.app.web.server import Running, gateway

    app, sock, url = gateway(MYSQL_URL, port=0, policy=auth.LoginPolicy(per_email=1000, per_client=100_000))
    with Running(app, sock, url) as running:
        yield running


_TAG = {"test": ""}  # a per-test suffix of origins: a device belongs to the first account that pushed it, store-wide


@pytest.fixture(autouse=True)
def _fresh_devices() -> None:
    """Every test's devices are new ones (the shared test database keeps the owners of earlier tests' devices)."""
    _TAG["test"] = uuid.uuid4().hex[:10]


def dev(name: str) -> str:
    """The origin a test calls ``name`` (a short name gets the test's suffix; an empty or long one stays as it is)."""
    return f"{name}~{_TAG['test']}" if 0 < len(name) <= 64 else name


def bare(origin: str) -> str:
    """The name a test gave an origin (``dev`` undone)."""
    return origin.split("~")[0]


def env(origin: str, seq: int, *, project: str = "", body: bytes | None = None, type_: str = "note.added",
        hlc: int | None = None) -> Replicated:
    return Replicated(origin=dev(origin), origin_seq=seq, hlc=hlc if hlc is not None else (1_700_000_000_000 << 16) + seq,
                      type=type_, body=msgspec.Raw(body if body is not None else b'{"seq":%d,"text":"x"}' % seq),
                      project=project)


def drain(store: EventStore, account: str, after: int = 0, limit: int = 1000) -> tuple[list[Replicated], int]:
    """Every envelope visible to ``account`` above ``after``, page by page; and the last cursor."""
    out: list[Replicated] = []
    while True:
        page = store.pull(account, after, limit)
        assert page.cursor >= after
        out += page.events
        after = page.cursor
        if not page.more:
            return out, after


def keys(events: list[Replicated]) -> list[tuple[str, int]]:
    return [(bare(e.origin), e.origin_seq) for e in events]


@pytest.fixture(params=["memory", "mysql", "http"])
def store(request: Any) -> Iterator[EventStore]:
    if request.param == "memory":
        yield MemoryEventStore()
        return
    if not MYSQL_URL:
        pytest.skip("EVLOG_TEST_MYSQL_URL is not set")
    if request.param == "mysql":
        with mysql_store() as s:
            yield s
        return
    s = PerAccountHttp(request.getfixturevalue("http_server").url)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def acct() -> Callable[[str], str]:
    names: dict[str, str] = {}
    return lambda label: names.setdefault(label, fresh_email(label))


def test_push_stores_new_envelopes_once_and_pull_returns_them_in_push_order(store, acct):
    a = acct("a")
    _, start = drain(store, a)
    first = store.push(a, [env("dev1", 1), env("dev1", 2), env("dev2", 1)])
    assert (first.stored, first.duplicates) == (3, 0)
    again = store.push(a, [env("dev1", 2), env("dev1", 3), env("dev1", 3)])  # a re-sent one, a new one twice
    assert (again.stored, again.duplicates) == (1, 2)
    assert again.position >= first.position + 1
    got, cursor = drain(store, a, start)
    assert keys(got) == [("dev1", 1), ("dev1", 2), ("dev2", 1), ("dev1", 3)]
    assert all(e.author == a for e in got)
    assert cursor >= again.position
    assert store.push(a, [env("dev1", 1)]).stored == 0
    assert drain(store, a, cursor)[0] == []


def test_bodies_and_fields_come_back_byte_for_byte(store, acct):
    a = acct("a")
    _, start = drain(store, a)
    body = '{"text":"caf\u00e9 \u2603 \U0001f600",  "n" : [1, 2.50, null] ,"deep":{"x":{}}}'.encode()
    sent = [env("dev1", 7, body=body, project="proj/é 'q' \\b", type_="fact.edited", hlc=123), env("dev1", 8, body=b"[]")]
    store.push(a, sent)
    got, _ = drain(store, a, start)
    assert [bytes(e.body) for e in got] == [body, b"[]"]
    assert [(bare(e.origin), e.origin_seq, e.hlc, e.type, e.project) for e in got] == [
        ("dev1", 7, 123, "fact.edited", "proj/é 'q' \\b"), ("dev1", 8, sent[1].hlc, "note.added", "")]


def forged(ev: Replicated, author: str) -> Replicated:
    return msgspec.structs.replace(ev, author=author)


def test_a_forged_author_is_replaced_by_the_pusher_of_its_own_device(store, acct):
    a, victim = acct("a"), acct("victim")
    _, start = drain(store, a)
    store.push(a, [forged(env("dev1", 1), victim), env("dev1", 2), forged(env("dev1", 3), "someone@else.test")])
    assert [e.author for e in drain(store, a, start)[0]] == [a, a, a]


def test_a_device_belongs_to_the_account_that_pushed_it_first(store, acct):
    a, b = acct("a"), acct("b")
    store.push(a, [env("dev1", 1)])
    with pytest.raises(ConfigError, match=r"envelope 1 .*origin_seq 2.*another account"):
        store.push(b, [env("bdev", 1), env("dev1", 2)])  # a's device, an event the store does not hold
    assert (store.high_water(b, dev("bdev")), store.high_water(b, dev("dev1"))) == (0, 0)  # nothing stored
    assert store.push(b, [env("bdev", 1)]).stored == 1


def test_a_relayed_envelope_keeps_the_author_recorded_for_it(store, acct):
    owner, mate = acct("owner"), acct("mate")
    _, start = drain(store, mate)
    store.share(owner, "proj", mate)
    store.push(owner, [env("o", 1, project="proj")])
    pulled = drain(store, mate, start)[0]
    assert [e.author for e in pulled] == [owner]
    result = store.push(mate, [forged(e, mate) for e in pulled] + [env("m", 1, project="proj")])  # a device relays all
    assert (result.stored, result.duplicates) == (2, 0)
    assert store.high_water(mate, dev("o")) == 1
    got = drain(store, mate, start)[0]
    assert sorted((bare(e.origin), e.author) for e in got) == [("m", mate), ("o", owner), ("o", owner)]


def test_a_member_cannot_bring_new_events_in_the_owners_name_even_in_a_shared_project(store, acct):
    owner, mate = acct("owner"), acct("mate")
    _, start = drain(store, owner)
    store.share(owner, "proj", mate)
    store.push(owner, [env("o", 1, project="proj")])
    with pytest.raises(ConfigError, match="another account"):
        store.push(mate, [forged(env("o", 2, project="proj", body=b'"owner says: delete prod"'), owner)])
    assert keys(drain(store, owner, start)[0]) == [("o", 1)]


def test_pages_follow_the_limit_and_resume_from_the_cursor(store, acct):
    a = acct("a")
    _, start = drain(store, a)
    store.push(a, [env("dev1", i) for i in range(1, 8)])
    page = store.pull(a, start, 3)
    assert keys(page.events) == [("dev1", 1), ("dev1", 2), ("dev1", 3)] and page.more
    rest, _ = drain(store, a, page.cursor, 2)
    assert keys(rest) == [("dev1", i) for i in range(4, 8)]


def test_high_water_is_per_account_and_origin(store, acct):
    a, b = acct("a"), acct("b")
    assert store.high_water(a, dev("dev1")) == 0
    store.push(a, [env("dev1", 5), env("dev1", 3), env("dev2", 9)])
    assert (store.high_water(a, dev("dev1")), store.high_water(a, dev("dev2")), store.high_water(a, dev("dev3"))) == (5, 9, 0)
    assert store.high_water(b, dev("dev1")) == 0


def test_accounts_are_isolated_and_identity_is_per_account(store, acct):
    a, b = acct("a"), acct("b")
    _, start_b = drain(store, b)
    store.push(a, [env("dev1", 1, project="p"), env("dev1", 2)])
    assert drain(store, b, start_b)[0] == []
    assert store.push(b, [env("dev1", 1)]).stored == 1  # the same key under another account is another event
    store.push(b, [env("dev2", 1)])
    got, _ = drain(store, b, start_b)
    assert keys(got) == [("dev1", 1), ("dev2", 1)] and [e.author for e in got] == [a, b]  # a's device stays a's


def test_a_shared_project_reaches_members_and_nothing_else_does(store, acct):
    owner, mate, other = acct("owner"), acct("mate"), acct("other")
    _, start = drain(store, mate)
    store.share(owner, "proj", mate)
    store.push(owner, [env("o", 1, project="proj"), env("o", 2, project="private"), env("o", 3)])
    store.push(mate, [env("m", 1, project="proj"), env("m", 2)])
    store.push(other, [env("x", 1, project="proj")])  # same project name, not in the group
    assert keys(drain(store, mate, start)[0]) == [("o", 1), ("m", 1), ("m", 2)]
    assert keys(drain(store, owner, start)[0]) == [("o", 1), ("o", 2), ("o", 3), ("m", 1)]
    assert keys(drain(store, other, start)[0]) == [("x", 1)]
    mates = [e for e in drain(store, owner, start)[0] if bare(e.origin) == "m"]
    assert [e.author for e in mates] == [mate]


def test_members_see_each_other_and_a_read_only_members_writes_stay_its_own(store, acct):
    owner, w, ro = acct("owner"), acct("writer"), acct("reader")
    _, start = drain(store, owner)
    store.share(owner, "proj", w)
    store.share(owner, "proj", ro, read_only=True)
    store.push(w, [env("w", 1, project="proj")])
    store.push(ro, [env("r", 1, project="proj")])
    store.push(owner, [env("o", 1, project="proj")])
    assert keys(drain(store, ro, start)[0]) == [("w", 1), ("r", 1), ("o", 1)]
    assert keys(drain(store, w, start)[0]) == [("w", 1), ("o", 1)]
    assert keys(drain(store, owner, start)[0]) == [("w", 1), ("o", 1)]


def test_shares_are_listed_changed_and_removed(store, acct):
    owner, mate = acct("owner"), acct("mate")
    _, start = drain(store, mate)
    store.share(owner, "proj", mate)
    store.share(owner, "proj", mate, read_only=True)  # sharing again changes the mode
    expected = [Share(owner, "proj", mate, True)]
    assert store.shares(owner) == expected and store.shares(mate) == expected
    store.push(owner, [env("o", 1, project="proj")])
    assert store.unshare(owner, "proj", mate) is True
    assert store.unshare(owner, "proj", mate) is False
    assert store.shares(owner) == [] and store.shares(mate) == []
    assert drain(store, mate, start)[0] == []


def test_an_empty_project_is_never_shared(store, acct):
    owner, mate = acct("owner"), acct("mate")
    _, start = drain(store, mate)
    store.share(owner, "", mate)
    store.push(owner, [env("o", 1)])
    assert drain(store, mate, start)[0] == []


def test_a_pull_that_brings_nothing_keeps_the_cursor(store, acct):
    a = acct("a")
    store.push(a, [env("dev1", 1)])
    _, cursor = drain(store, a)
    page = store.pull(a, cursor)
    assert page.events == [] and not page.more and page.cursor == cursor


# --------------------------------------------------------------------------- the gateway stores only

gateway_only = pytest.mark.skipif(not MYSQL_URL, reason="EVLOG_TEST_MYSQL_URL is not set")


@pytest.fixture(params=["mysql", "http"])
def gateway_store(request: Any) -> Iterator[EventStore]:
    if not MYSQL_URL:
        pytest.skip("EVLOG_TEST_MYSQL_URL is not set")
    if request.param == "mysql":
        with mysql_store() as s:
            yield s
        return
    s = PerAccountHttp(request.getfixturevalue("http_server").url)
    try:
        yield s
    finally:
        s.close()


@pytest.mark.parametrize(("bad", "field"), [
    (env("", 1), "origin is empty"),
    (env("d" * 192, 1), "origin is 192 characters"),
    (msgspec.structs.replace(env("d", 1), type=""), "type is empty"),
    (env("d", -1), "origin_seq -1"),
    (env("d", 1, body=b'{"a": 1'), "body is not one JSON value"),
    (env("d", 1, body=b'"a" "b"'), "body is not one JSON value"),
    (None, "body is"),  # a body over max_allowed_packet (built in the test: 70 MB)
])
def test_a_push_with_an_envelope_the_tables_cannot_hold_stores_nothing_and_names_it(gateway_store, acct, bad, field):
    a = acct("a")
    bad = bad or env("d", 1, body=b'"' + b"x" * (70 * 1024 * 1024) + b'"')
    with pytest.raises((ConfigError, BackendError)) as e:
        gateway_store.push(a, [env("good", 1), bad])
    message = str(e.value)
    if "body is" in field and "413" in message:
        return  # the HTTP server refuses a body over its limit before reading it (413): also nothing stored
    assert "envelope 1" in message and field in message
    assert gateway_store.high_water(a, dev("good")) == 0


def test_a_page_stops_at_its_byte_budget_but_always_brings_one(gateway_store, acct, monkeypatch):
    from eventlog.app.gateway import event_store

    monkeypatch.setattr(event_store, "PAGE_BYTES", 250)
    a = acct("a")
    _, start = drain(gateway_store, a)
    small = b'"' + b"x" * 98 + b'"'  # 100 bytes
    gateway_store.push(a, [env("d", 1, body=b'"' + b"y" * 998 + b'"'), *[env("d", i, body=small) for i in range(2, 7)]])
    first = gateway_store.pull(a, start)
    assert keys(first.events) == [("d", 1)] and first.more  # over the budget alone: still one
    second = gateway_store.pull(a, first.cursor)
    assert keys(second.events) == [("d", 2), ("d", 3)] and second.more
    rest, _ = drain(gateway_store, a, second.cursor)
    assert keys(rest) == [("d", 4), ("d", 5), ("d", 6)]


@gateway_only
def test_the_biggest_body_the_store_takes_is_stored_byte_for_byte():
    a = fresh_email("a")
    with mysql_store() as s:
        n = s.max_body()
        core = b"\\\\'\\u0000\xe2\x98\x83" * ((n - 2) // 12)  # an escaped backslash, a quote, NUL and UTF-8
        big = b'"' + core + b" " * (n - 2 - len(core)) + b'"'
        assert len(big) == n
        _, start = drain(s, a)
        s.push(a, [env("d", 1, body=big), env("d", 2, body=b'"it\'s"')])
        with pytest.raises(ConfigError, match="body is"):
            s.push(a, [env("d", 3, body=big + b" ")])
        got, _ = drain(s, a, start)
    assert [bytes(e.body) for e in got] == [big, b'"it\'s"']


@gateway_only
def test_a_token_is_one_account(http_server):
    a, b = fresh_email("a"), fresh_email("b")
    s = HttpEventStore(http_server.url, sync_token(a))
    try:
        with pytest.raises(ConfigError, match="not"):
            s.push(b, [env("d", 1)])
        assert s.push(a.upper(), [env("d", 1)]).stored == 1  # e-mails compare as the gateway stores them
    finally:
        s.close()
    with pytest.raises(AuthError):
        HttpEventStore(http_server.url, "not-a-token")


@gateway_only
def test_a_push_committed_late_is_not_skipped_by_a_pull_made_meanwhile():
    """The AUTO_INCREMENT trap: a push that took a lower position commits after one that took a higher one.

    The slow push stops inside its transaction (after its insert, before its commit) while a
    second push runs and a pull is made. With positions from AUTO_INCREMENT the second push
    commits position N+1, the pull returns it and moves its cursor past N, and the slow push's
    envelope (position N) is never pulled. Here the second push waits for the slow one's
    counter lock, so the pull in between returns neither and the next pull returns both.
    """
    a = fresh_email("a")
    inside, release = threading.Event(), threading.Event()
    armed = [False]

    def hold() -> None:
        if armed[0]:
            armed[0] = False
            inside.set()
            release.wait(20)

    with mysql_store(before_commit=hold) as slow, mysql_store() as fast, mysql_store() as reader:
        slow.push(a, [env("setup", 1)])  # creates the user
        _, cursor = drain(reader, a)
        armed[0] = True
        t1 = threading.Thread(target=slow.push, args=(a, [env("slow", 1)]))
        t1.start()
        assert inside.wait(20)
        t2 = threading.Thread(target=fast.push, args=(a, [env("fast", 1)]))
        t2.start()
        time.sleep(0.5)  # the fast push is under way
        meanwhile, cursor = drain(reader, a, cursor)
        release.set()
        t1.join(20)
        t2.join(20)
        rest, _ = drain(reader, a, cursor)
    assert meanwhile == []
    assert sorted(keys(meanwhile + rest)) == [("fast", 1), ("slow", 1)]


@gateway_only
def test_concurrent_pushes_and_a_pull_loop_lose_and_repeat_nothing():
    a = fresh_email("a")
    writers, batches, per = 4, 25, 8
    done = threading.Event()
    seen: list[Replicated] = []
    errors: list[BaseException] = []

    def write(w: int) -> None:
        try:
            with mysql_store(pool_size=1) as s:
                for b in range(batches):
                    s.push(a, [env(f"w{w}", b * per + i + 1) for i in range(per)])
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    with mysql_store(pool_size=1) as reader:
        reader.push(a, [env("setup", 1)])
        got, cursor = drain(reader, a)
        seen += got

        def read() -> None:
            nonlocal cursor
            while not done.is_set():
                page = reader.pull(a, cursor, 7)
                seen.extend(page.events)
                cursor = page.cursor

        threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        puller = threading.Thread(target=read)
        puller.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        done.set()
        puller.join(60)
        seen += drain(reader, a, cursor)[0]
    assert errors == []
    expected = {("setup", 1)} | {(f"w{w}", s) for w in range(writers) for s in range(1, batches * per + 1)}
    assert len(seen) == len(expected) and set(keys(seen)) == expected


@gateway_only
def test_an_older_gateway_server_without_event_routes_is_refused_with_what_to_do():
    from eventlog.app.web.server import Running, gateway

    app, sock, url = gateway(MYSQL_URL, port=0, policy=auth.LoginPolicy(per_email=1000, per_client=100_000))
    app.router.routes[:] = [r for r in app.router.routes if "/events/" not in getattr(r, "path", "")]
    a = fresh_email("a")
    with Running(app, sock, url) as running:
        s = HttpEventStore(running.url, sync_token(a))
        try:
            with pytest.raises(ConfigError, match="older server without the event log.*upgrade"):
                s.pull(a, 0)
        finally:
            s.close()


@gateway_only
def test_m010_gives_the_devices_of_an_older_gateway_to_the_account_that_pushed_them_first_and_notes_relays():
    from eventlog.app.gateway.schema import MIGRATIONS

    (m010,) = [m for m in MIGRATIONS if m.__name__ == "m010_create_gateway_event_devices"]
    a, b = fresh_email("a"), fresh_email("b")
    with mysql_store() as s:
        s.push(a, [env("old", 1)])
        s.push(b, [env("old", 1)])  # held: b's relay of it
        conn = Connection(DSN.parse(MYSQL_URL))
        try:  # the gateway before m010: events, no owner recorded
            for table in ("gateway_event_relays", "gateway_event_devices"):
                conn.transaction(lambda cur, t=table: cur.execute(f"DELETE FROM {t} WHERE origin = %s", (dev("old"),)),
                                 doing="forgetting an owner")
            conn.transaction(m010, doing="migrating")

            def emails(table: str) -> list[str]:
                return conn.transaction(lambda cur: (cur.execute(
                    f"SELECT u.email FROM {table} d JOIN gateway_users u ON u.id = d.user_id "  # noqa: S608
                    "WHERE d.origin = %s", (dev("old"),)), [r[0] for r in cur.fetchall()])[1], doing="reading")

            owners, relays = emails("gateway_event_devices"), emails("gateway_event_relays")
        finally:
            conn.close()
        assert (owners, relays) == ([a], [b])
        with pytest.raises(ConfigError, match="another account"):
            s.push(b, [env("old", 2)])


# --------------------------------------------------------------------------- erasure (memory and MySQL stores)


@pytest.fixture(params=["memory", "mysql"])
def erasable(request: Any) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryEventStore()
        return
    if not MYSQL_URL:
        pytest.skip("EVLOG_TEST_MYSQL_URL is not set")
    with mysql_store() as s:
        yield s


def test_an_erased_envelope_is_never_pulled_again_and_a_resent_copy_is_a_duplicate(erasable, acct):
    a = acct("a")
    _, start = drain(erasable, a)
    erasable.push(a, [env("dev1", 1), env("dev1", 2, body=b'"the secret"'), env("dev1", 3)])
    assert erasable.erase(a, [(dev("dev1"), 2)]) == 1
    assert keys(drain(erasable, a, start)[0]) == [("dev1", 1), ("dev1", 3)]
    again = erasable.push(a, [env("dev1", 2, body=b'"the secret"')])  # a device that did not apply it yet
    assert (again.stored, again.duplicates) == (0, 1)
    assert erasable.high_water(a, dev("dev1")) == 3
    assert keys(drain(erasable, a, start)[0]) == [("dev1", 1), ("dev1", 3)]
    assert erasable.erase(a, [(dev("dev1"), 2)]) == 0  # done already


def test_the_owner_erases_every_copy_and_a_member_only_its_own(erasable, acct):
    owner, mate, late = acct("owner"), acct("mate"), acct("late")
    _, start = drain(erasable, owner)
    for m in (mate, late):
        erasable.share(owner, "proj", m)
    erasable.push(owner, [env("o", 1, project="proj"), env("o", 2, project="proj")])
    relay = drain(erasable, mate, start)[0]
    erasable.push(mate, relay)  # mate's device relays what it pulled
    assert erasable.erase(mate, [(dev("o"), 1)]) == 1  # mate's copy only: the owner's stays
    assert keys(drain(erasable, owner, start)[0]) == [("o", 1), ("o", 2), ("o", 2)]
    assert erasable.erase(owner, [(dev("o"), 2)]) == 2  # the owner's row and mate's relayed copy
    assert keys(drain(erasable, owner, start)[0]) == [("o", 1)]
    assert erasable.push(late, relay).stored == 2  # a relay of an erased envelope is stored without its body
    assert [(bare(e.origin), e.origin_seq, e.author) for e in drain(erasable, late, start)[0]] == [
        ("o", 1, owner), ("o", 1, owner)]
