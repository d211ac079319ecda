"""The in-memory gateway (``eventlog.app.gateway.memory_store``): that it is the MySQL gateway without the server.

The contract suite runs against it in ``test_session_store_contract.py`` and sync's push and
pull in ``test_sync.py`` (the ``memory`` variants). Here: what only the in-memory gateway
needs, and, with a server, that it leaves exactly the rows MySQL leaves: the merge rules
against the guarded upserts, and whole sequences of store operations side by side.
"""

from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.app.gateway import rows as R
from eventlog.app.gateway.changes import fetch_changes
from eventlog.app.gateway.memory_store import MemoryGateway
from eventlog.errors import BackendError, NotFound
from tests.mysql_helpers import MYSQL_URL, fresh_email, requires_mysql

START_MS = 1_900_000_000_000


class Clock:
    def __init__(self, ms: int = START_MS) -> None:
        self.ms = ms

    def __call__(self) -> float:
        return (self.ms + 0.5) / 1000


def test_users_are_created_on_first_use_and_kept_apart():
    gw = MemoryGateway()
    a, b = gw.store("A@example.test"), gw.store("b@example.test")
    assert a.user == gw.user("a@example.test") and a.user != b.user and gw.user(b.user.id) == b.user
    a.add_message("s", "user", "mine", message_id="m1")
    assert b.list() == [] and b.get("s") is None
    with pytest.raises(NotFound):
        b.history("s")
    with pytest.raises(NotFound):
        gw.user("nobody@example.test", create=False)


def test_every_write_takes_a_change_counter_value_and_changes_pages_by_whole_values():
    gw = MemoryGateway()
    store = gw.store("u@example.test")
    for i in range(5):
        store.add_message("s", "user", f"m{i}", message_id=f"m{i}")
    uid = store.user_id
    page = gw.changes(uid, 0, limit=2)
    assert (page.watermark, page.more) == (2, True) and [m.message_id for m in page.messages] == ["m0", "m1"]
    assert list(page.sessions) == ["s"]  # the register changed with the first message
    rest = gw.changes(uid, 2, skip=[4])
    assert [m.message_id for m in rest.messages] == ["m2", "m4"] and list(rest.context) == ["s"]
    regs, n, top = gw.pending(uid, 2, skip=[4])
    assert (regs, n, top) == ([], 2, 5)


def test_a_message_needs_its_session_row():
    gw = MemoryGateway()
    uid = gw.user("u@example.test").id
    with gw.lock, pytest.raises(BackendError, match="no session row"):
        gw.upsert_messages(uid, [R.MessageRow(key="nowhere", message_id="m", role="user", content="x",
                                              version=(1, "o", "r"))], gw.next_change_seq(uid))


def test_rows_are_copied_in_and_out():
    gw = MemoryGateway()
    store = gw.store("u@example.test")
    meta = {"a": [1]}
    store.get_or_create("s", metadata=meta)
    meta["a"].append(2)
    got = store.get("s")
    assert got is not None and got.metadata == {"a": [1]}
    got.metadata["a"].append(3)
    assert store.get("s").metadata == {"a": [1]}


def test_a_remote_pushes_and_pulls_through_the_same_tables_the_store_reads(tmp_path):
    from eventlog.app.gateway import sync
    from eventlog.app.session_store import LocalSessionStore
    from eventlog.app.workspace import init_workspace

    gw = MemoryGateway("test")
    web = gw.store("u@example.test", origin="web")
    home = str(tmp_path / "device")
    init_workspace(home)
    with LocalSessionStore.open(home) as device:
        device.add_message("s", "user", "from the device", message_id="m1")
        report = sync.push(device.ws, remote=gw.remote("u@example.test"))
        assert (report.target, report.messages) == ("memory:test", 1)
        assert [m.content for m in web.history("s")] == ["from the device"]
        web.add_message("s", "assistant", "from the web", message_id="m2")
        assert sync.pull(device.ws, remote=gw.remote("u@example.test")).messages == 1
        assert [m.content for m in device.history("s")] == ["from the device", "from the web"]


def test_concurrent_pushes_and_store_writes_are_serialised():
    gw = MemoryGateway()
    store = gw.store("u@example.test")

    def write(n: int) -> None:
        for i in range(50):
            store.add_message(f"s{n}", "user", f"{i}", message_id=f"{n}-{i}")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    page = gw.changes(store.user_id, 0, limit=10_000)
    assert page.watermark == 200 and len(page.messages) == 200
    assert sorted(m.change_seq for m in page.messages) == list(range(1, 201))


# --------------------------------------------------------------------------- the same as MySQL

versions = st.tuples(st.integers(1, 4), st.sampled_from(["a", "b"]), st.sampled_from(["r1", "r2"]))
session_rows = st.builds(
    R.SessionRow, key=st.just("k"), title=st.sampled_from(["", "t1", "t2"]), preview=st.sampled_from(["", "p1", "p2"]),
    preview_set=st.booleans(), metadata=st.sampled_from([{}, {"x": 1}]), project=st.sampled_from(["", "p"]),
    created_ms=st.sampled_from([0, 5]), deleted=st.booleans(), version=versions,
    cleared=st.one_of(st.just(R.ZERO), versions), active_ms=st.integers(0, 4))
message_rows = st.builds(
    R.MessageRow, key=st.just("k"), message_id=st.just("m"), role=st.sampled_from(["user", "assistant"]),
    content=st.sampled_from(["c1", "c2"]), timestamp=st.sampled_from(["", "2026-01-01T00:00:00Z"]),
    tool_calls=st.sampled_from([None, [{"id": "c"}]]), extra=st.sampled_from([{}, {"e": 1}]), version=versions)


def _comparable(r: R.SessionRow | R.MessageRow) -> tuple:
    if isinstance(r, R.SessionRow):
        return (r.key, r.title, r.preview, r.preview_set, r.metadata, r.project, r.created_ms, r.deleted, r.version,
                r.cleared, r.active_ms, r.change_seq)
    return (r.key, r.message_id, r.role, r.content, r.timestamp, r.tool_calls, r.extra, r.version, r.change_seq)


@pytest.mark.mysql
@requires_mysql
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(regs=st.lists(session_rows, min_size=1, max_size=3), msgs=st.lists(message_rows, max_size=3))
def test_the_merge_rules_leave_what_the_guarded_upserts_leave(regs, msgs):
    """Registers then messages, one transaction each, into MySQL and into a MemoryGateway: the same rows."""
    from eventlog.app.gateway.store import MySQLSessionStore

    gw = MemoryGateway()
    with MySQLSessionStore(MYSQL_URL, fresh_email("merge")) as db:
        mem_uid = gw.user(db.user.email).id
        for batch in [[r] for r in regs] + [[m] for m in msgs]:
            def sql(cur, batch=batch):
                R.next_change_seq(cur, db.user_id)
                if isinstance(batch[0], R.SessionRow):
                    R.upsert_sessions(cur, db.user_id, batch)
                else:
                    R.upsert_messages(cur, db.user_id, batch)

            db.conn.transaction(sql)
            with gw.lock:
                seq = gw.next_change_seq(mem_uid)
                if isinstance(batch[0], R.SessionRow):
                    gw.upsert_sessions(mem_uid, batch, seq)
                else:
                    gw.upsert_messages(mem_uid, batch, seq)
        want = db.conn.transaction(lambda cur: fetch_changes(cur, db.user_id, 0, limit=100))
    got = gw.changes(mem_uid, 0, limit=100)
    assert [_comparable(r) for r in got.sessions.values()] == [_comparable(r) for r in want.sessions.values()]
    assert [_comparable(m) for m in got.messages] == [_comparable(m) for m in want.messages]
    assert got.watermark == want.watermark


@pytest.mark.slow
@pytest.mark.mysql
@requires_mysql
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(regs=st.lists(session_rows, min_size=1, max_size=3), msgs=st.lists(message_rows, max_size=3))
def test_with_a_ceiling_stored_versions_past_it_lose_alike_in_memory_and_in_sql(regs, msgs):
    """As above with a writer's ceiling of 2 ms (``rows._G``, ``drop_past_ceiling``): versions 3 and 4 are past it."""
    from eventlog.app.gateway.store import MySQLSessionStore

    ceiling = 2
    gw = MemoryGateway()
    with MySQLSessionStore(MYSQL_URL, fresh_email("ceiling")) as db:
        mem_uid = gw.user(db.user.email).id
        for batch in [[r] for r in regs] + [[m] for m in msgs]:
            def sql(cur, batch=batch):
                R.next_change_seq(cur, db.user_id, ceiling=ceiling)
                if isinstance(batch[0], R.SessionRow):
                    R.upsert_sessions(cur, db.user_id, batch)
                    R.drop_past_ceiling(cur, db.user_id, [r.key for r in batch if r.cleared != R.ZERO], ceiling)
                else:
                    R.upsert_messages(cur, db.user_id, batch)

            db.conn.transaction(sql)
            with gw.lock:
                seq = gw.next_change_seq(mem_uid)
                if isinstance(batch[0], R.SessionRow):
                    gw.upsert_sessions(mem_uid, batch, seq, ceiling)
                else:
                    gw.upsert_messages(mem_uid, batch, seq, ceiling)
        want = db.conn.transaction(lambda cur: fetch_changes(cur, db.user_id, 0, limit=100))
    got = gw.changes(mem_uid, 0, limit=100)
    assert [_comparable(r) for r in got.sessions.values()] == [_comparable(r) for r in want.sessions.values()]
    assert [_comparable(m) for m in got.messages] == [_comparable(m) for m in want.messages]
    assert got.watermark == want.watermark


#: One store operation: (what, session key, message id, text, timestamp), then how many ms pass.
store_op = st.tuples(
    st.sampled_from(["get_or_create", "add", "update_title", "update_meta", "update_preview", "delete", "edit"]),
    st.sampled_from(["s1", "s2"]), st.sampled_from(["m1", "m2", "m3"]), st.sampled_from(["", "x", "hello there"]),
    st.sampled_from(["2026-01-01T00:00:00Z", "2031-01-01T00:00:00.250Z", "not a time"]), st.integers(0, 2))


def _apply(store, op) -> object:
    what, key, mid, text, stamp, _ = op
    try:
        if what == "get_or_create":
            return store.get_or_create(key, title=text, metadata={"t": text})
        if what == "add":
            return store.add_message(key, "user" if text else "tool", text, message_id=mid, timestamp=stamp)
        if what == "update_title":
            return store.update(key, title=text)
        if what == "update_meta":
            return store.update(key, metadata={mid: text})
        if what == "update_preview":
            return store.update(key, preview=text)
        if what == "delete":
            return store.delete(key)
        return store.update_message(key, mid, text, extra={"edited": mid})
    except NotFound as e:
        return f"NotFound: {e}"


@pytest.mark.slow
@pytest.mark.mysql
@requires_mysql
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(store_op, max_size=20))
def test_the_memory_store_answers_and_writes_exactly_as_the_mysql_store(ops):
    """The same operations at the same (injected) times: the same answers, and the same rows and versions."""
    from eventlog.app.gateway.store import MySQLSessionStore

    clock = Clock()
    gw = MemoryGateway()
    with MySQLSessionStore(MYSQL_URL, fresh_email("twin"), origin="web", clock=clock) as db:
        mem = gw.store(db.user.email, origin="web", clock=clock)
        for op in ops:
            clock.ms += op[5]
            assert _apply(mem, op) == _apply(db, op), op
            assert mem.list() == db.list()
        for key in ("s1", "s2"):
            if db.get(key) is not None:
                assert mem.history(key) == db.history(key) and mem.history(key, 2) == db.history(key, 2)
        want = db.conn.transaction(lambda cur: fetch_changes(cur, db.user_id, 0, limit=1000))
    got = gw.changes(mem.user_id, 0, limit=1000)
    assert {k: _comparable(r) for k, r in got.sessions.items()} == {k: _comparable(r) for k, r in want.sessions.items()}
    assert [_comparable(m) for m in got.messages] == [_comparable(m) for m in want.messages]
