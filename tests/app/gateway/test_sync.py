"""Sync through a gateway: two devices of one user, the web, and a stranger.

The tests that need only the gateway's rules run twice (the ``gateway`` fixture): against
the in-memory gateway (``memory_store``: no server) and against the real MySQL/MariaDB
server named by ``EVLOG_TEST_MYSQL_URL``; those about the server itself (hand-written SQL,
killed connections, credentials, the command line) run against MySQL only
(``@mysql_only``). Fresh user e-mails keep tests apart. A device is a workspace with its
own log (opened as the writer) and a local session store over it; "the web" is the
gateway's session store (or hand-written SQL) writing straight into the gateway tables.
Clocks are injected where a test needs exact times.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.app.gateway import sync
from eventlog.app.gateway.connection import DSN
from eventlog.app.gateway.memory_store import MemoryGateway
from eventlog.app.gateway.store import MySQLSessionStore
from eventlog.app.session_store import LocalSessionStore
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.errors import BackendError, NotFound
from eventlog.events import MessageUpdated, SyncPulled, SyncPushed
from tests.contracts.session_store import WEIRD_KEYS
from tests.mysql_helpers import MYSQL_URL, fresh_email, kill, query, requires_mysql

START_MS = 1_900_000_000_000  # 2030-03-17: far from the real clock, so only injected times matter


@pytest.fixture(autouse=True)
def clocks_of_2030_are_not_clamped(monkeypatch):
    """These devices' clocks read 2030 on purpose: widen the clamp of future versions (``screen``) past it."""
    monkeypatch.setenv("EVLOG_SYNC_CLOCK_SKEW", str(10 * 365 * 86400))


class Clock:
    """A shared fake wall clock (seconds, as time.time) that only moves when told."""

    def __init__(self, ms: int = START_MS) -> None:
        self.ms = ms
        self.lock = threading.Lock()

    def __call__(self) -> float:
        return (self.ms + 0.5) / 1000

    def tick(self, ms: int = 1) -> int:
        with self.lock:
            self.ms += ms
            return self.ms


class MySQLGateway:
    """The real server: direct (``--dsn``) sync and ``MySQLSessionStore``."""

    kind = "mysql"

    def push(self, ws: Workspace, user: str, **kw: Any) -> sync.SyncReport:
        return sync.push(ws, MYSQL_URL, user, **kw)

    def pull(self, ws: Workspace, user: str, **kw: Any) -> sync.SyncReport:
        return sync.pull(ws, MYSQL_URL, user, **kw)

    def status(self, ws: Workspace, user: str) -> sync.StatusReport:
        return sync.status(ws, MYSQL_URL, user)

    def store(self, user: str, **kw: Any) -> MySQLSessionStore:
        return MySQLSessionStore(MYSQL_URL, user, **kw)

    def message_rows(self, user_id: int) -> list[str]:
        """The id of every message row the gateway holds for the user (deleted sessions' rows must be gone)."""
        return [r[0] for r in query("SELECT message_id FROM gateway_session_messages WHERE user_id = %s", (user_id,))]


class InMemoryGateway:
    """``MemoryGateway``: the same rules without a server (``MemoryRemote`` and ``MemorySessionStore``)."""

    kind = "memory"

    def __init__(self) -> None:
        self.gw = MemoryGateway("test")

    def push(self, ws: Workspace, user: str, **kw: Any) -> sync.SyncReport:
        return sync.push(ws, remote=self.gw.remote(user), **kw)

    def pull(self, ws: Workspace, user: str, **kw: Any) -> sync.SyncReport:
        return sync.pull(ws, remote=self.gw.remote(user), **kw)

    def status(self, ws: Workspace, user: str) -> sync.StatusReport:
        return sync.status(ws, remote=self.gw.remote(user))

    def store(self, user: str, **kw: Any) -> Any:
        return self.gw.store(user, **kw)

    def message_rows(self, user_id: int) -> list[str]:
        with self.gw.lock:
            return [mid for msgs in self.gw.tables(user_id).messages.values() for mid in msgs]


@pytest.fixture(scope="module", params=["memory", pytest.param("mysql", marks=[pytest.mark.mysql, requires_mysql])])
def gateway(request):
    """The gateway a test syncs with (one per module: fresh user e-mails keep tests apart)."""
    return InMemoryGateway() if request.param == "memory" else MySQLGateway()


def mysql_only(fn):
    """A test about the server itself (SQL, connections, credentials): the MySQL gateway only."""
    for mark in (pytest.mark.parametrize("gateway", ["mysql"], indirect=True), requires_mysql, pytest.mark.mysql):
        fn = mark(fn)
    return fn


@dataclass
class Device:
    """A workspace standing for one device: its log, its local store, the gateway it syncs with."""

    home: str
    ws: Workspace
    store: LocalSessionStore
    gateway: Any = field(default_factory=MySQLGateway)

    def push(self, user: str, **kw) -> sync.SyncReport:
        return self.gateway.push(self.ws, user, **kw)

    def pull(self, user: str, **kw) -> sync.SyncReport:
        return self.gateway.pull(self.ws, user, **kw)

    def events(self) -> list:
        return list(self.ws.log.read())


@contextmanager
def device(home: str, clock: Clock | None = None, gateway: Any = None) -> Iterator[Device]:
    """A device syncing with ``gateway`` (default: the MySQL server)."""
    init_workspace(home)
    ws = Workspace.open(home, writable=True, **({"clock": clock} if clock else {}))
    try:
        yield Device(home, ws, LocalSessionStore(ws), gateway if gateway is not None else MySQLGateway())
    finally:
        ws.close()


@pytest.fixture
def devices(tmp_path, gateway):
    """Two devices of one user (laptop, desktop), a web store of that user, and the user's e-mail."""
    user = fresh_email("owner")
    with device(str(tmp_path / "laptop"), gateway=gateway) as a, \
            device(str(tmp_path / "desktop"), gateway=gateway) as b:
        web = gateway.store(user, origin="web")
        try:
            yield a, b, web, user
        finally:
            web.close()


def snapshot(store) -> dict:
    """Everything a user sees: per visible session, title, metadata and its messages by id."""
    out = {}
    for info in store.list():
        msgs = {m.id: (m.role, m.content, m.tool_calls, m.extra) for m in store.history(info.key)}
        out[info.key] = (info.title, info.metadata, msgs)
    return out


def converge(user: str, *devs: Device) -> None:
    """Push everything, then pull everything (the order a sync daemon would use)."""
    for d in devs:
        d.push(user)
    for d in devs:
        d.pull(user)


# --------------------------------------------------------------------------- convergence


@mysql_only
def test_two_devices_and_the_web_converge_on_edits_from_everywhere(devices):
    a, b, web, user = devices
    a.store.get_or_create("s1", title="planning", metadata={"project": "evlog"})
    a.store.add_message("s1", "user", "hello from the laptop", message_id="m1")
    a.push(user)
    b.pull(user)
    assert snapshot(b.store) == snapshot(a.store)

    b.store.add_message("s1", "assistant", "answer from the desktop", message_id="m2")
    b.store.update("s1", metadata={"pinned": True})
    b.push(user)  # before the SQL edit below: registers are last-write-wins as a whole
    web.add_message("s1", "user", "typed in the browser", message_id="m3")
    web.update_message("s1", "m1", "hello from the laptop (fixed on the web)")
    query("UPDATE gateway_sessions SET title = 'renamed by hand in SQL' WHERE user_id = %s", (web.user_id,))
    a.store.get_or_create("s2", title="second session")
    a.store.add_message("s2", "user", "another topic")

    converge(user, a, b)
    converge(user, a, b)  # a second round must change nothing
    want = snapshot(web)
    assert snapshot(a.store) == snapshot(b.store) == want
    s1 = want["s1"]
    assert s1[0] == "renamed by hand in SQL" and s1[1] == {"project": "evlog", "pinned": True}
    assert s1[2]["m1"][1] == "hello from the laptop (fixed on the web)"
    assert set(s1[2]) == {"m1", "m2", "m3"}


def test_pull_events_are_not_pushed_back_and_own_pushes_are_not_pulled_back(devices):
    a, b, web, user = devices
    a.store.add_message("s", "user", "one", message_id="m1")
    first = a.push(user)
    assert (first.sessions, first.messages, first.batches) == (1, 1, 1)
    assert a.pull(user).events_written == 0  # its own rows come back as nothing
    assert a.push(user).batches == 0
    b.pull(user)
    again = b.push(user)  # what b pulled is not a change of b's
    assert (again.batches, again.messages) == (0, 0)
    before = len(b.events())
    assert b.pull(user).events_written == 0 and len(b.events()) == before
    st = b.gateway.status(b.ws, user)
    assert (st.push_pending_events, st.pull_pending_sessions, st.pull_pending_messages) == (0, 0, 0)


def test_status_counts_what_is_pending_each_way(devices):
    a, b, web, user = devices
    a.store.add_message("s", "user", "x", message_id="m1")
    a.store.add_message("s", "user", "y", message_id="m2")
    st = a.gateway.status(a.ws, user)
    assert (st.push_pending_sessions, st.push_pending_messages) == (1, 2)
    a.push(user)
    web.add_message("s", "user", "z", message_id="m3")
    st = a.gateway.status(a.ws, user)
    assert (st.push_pending_events, st.pull_pending_messages) == (0, 1)
    assert st.push_position == a.ws.log.last_seq - 1 and st.gateway_change_seq == 2


def test_pulls_page_through_many_changes_without_losing_any(devices):
    a, b, web, user = devices
    for i in range(40):
        web.add_message(f"s{i % 3}", "user", f"msg {i}", message_id=f"m{i}")
    report = a.pull(user, page_rows=7)
    assert report.batches > 3
    assert snapshot(a.store) == snapshot(web)
    assert sum(len(a.store.history(k)) for k in ("s0", "s1", "s2")) == 40


# --------------------------------------------------------------------------- deletes


def test_a_delete_on_a_device_reaches_the_web_and_the_other_device(devices):
    a, b, web, user = devices
    a.store.add_message("gone", "user", "bye", message_id="m1")
    a.store.add_message("kept", "user", "stay", message_id="m1")
    converge(user, a, b)
    assert b.store.get("gone") is not None
    b.store.delete("gone")
    converge(user, b, a)
    assert web.get("gone") is None and a.store.get("gone") is None
    assert snapshot(a.store) == snapshot(b.store) == snapshot(web) and list(snapshot(web)) == ["kept"]
    assert len(a.gateway.message_rows(web.user_id)) == 1


def test_a_delete_on_the_web_reaches_the_devices(devices):
    _a_delete_on_the_web_reaches_the_devices(devices, lambda web: web.delete("s"))


@mysql_only
def test_a_delete_in_hand_written_sql_reaches_the_devices(devices):
    def by_hand(web) -> None:
        query("UPDATE gateway_sessions SET deleted_at = UTC_TIMESTAMP(3) WHERE user_id = %s", (web.user_id,))

    _a_delete_on_the_web_reaches_the_devices(devices, by_hand)


def _a_delete_on_the_web_reaches_the_devices(devices, delete) -> None:
    a, b, web, user = devices
    a.store.add_message("s", "user", "x", message_id="m1")
    converge(user, a, b)
    delete(web)
    a.pull(user)
    b.pull(user)
    assert a.store.get("s") is None and b.store.get("s") is None
    a.store.add_message("s", "user", "a new start", message_id="m1")  # the key can be used again
    converge(user, a, b)
    assert snapshot(a.store) == snapshot(b.store) == snapshot(web)
    assert [m.content for m in web.history("s")] == ["a new start"]


def test_a_delete_drops_older_messages_from_a_device_that_had_not_seen_it_but_keeps_newer_ones(tmp_path, gateway):
    clock = Clock()
    user = fresh_email()
    with device(str(tmp_path / "a"), clock, gateway) as a, device(str(tmp_path / "b"), clock, gateway) as b:
        a.store.get_or_create("s", title="t")
        clock.tick()
        a.store.add_message("s", "user", "old", message_id="m-old")
        converge(user, a, b)
        clock.tick()
        b.store.add_message("s", "user", "written before the delete", message_id="m-before")
        clock.tick()
        a.store.delete("s")  # a has not seen m-before
        clock.tick()
        b.store.add_message("s", "user", "written after the delete", message_id="m-after")
        converge(user, a, b)
        converge(user, a, b)
        with gateway.store(user) as web:
            want = snapshot(web)
        assert snapshot(a.store) == snapshot(b.store) == want
        assert want == {"s": ("", {}, {"m-after": ("user", "written after the delete", None, {})})}


# --------------------------------------------------------------------------- last write wins


def test_the_newest_title_wins_whichever_side_syncs_first(tmp_path, gateway):
    clock = Clock()
    user = fresh_email()
    with device(str(tmp_path / "a"), clock, gateway) as a, device(str(tmp_path / "b"), clock, gateway) as b:
        a.store.get_or_create("s", title="first")
        converge(user, a, b)
        clock.tick(5)
        b.store.update("s", title="older edit")
        clock.tick(5)
        a.store.update("s", title="newest edit")
        a.push(user)
        b.push(user)  # arrives last but is older: ignored by the gateway
        b.pull(user)
        a.pull(user)
        assert a.store.get("s").title == b.store.get("s").title == "newest edit"


def test_a_tie_at_the_same_millisecond_is_broken_by_origin_the_same_way_everywhere(tmp_path, gateway):
    clock = Clock()
    user = fresh_email()
    with device(str(tmp_path / "a"), clock, gateway) as a:
        a.store.get_or_create("s", title="start")
        a.push(user)
        clock.tick(10)
        with gateway.store(user, origin="zzz-web", clock=clock) as web:
            a.store.update("s", title="from the device")  # same millisecond as the web's write
            web.update("s", title="from the web")
            a.push(user)
            a.pull(user)
            # "zzz-web" > "evlog:..." so the web's write wins on both sides, whatever the order
            assert a.store.get("s").title == web.get("s").title == "from the web"


#: One step: a write on the desktop or the web (kind, side, session, message id), or a sync; then how many ms pass.
op = st.one_of(
    st.tuples(st.sampled_from(["title", "msg", "edit", "meta", "delete"]), st.sampled_from(["desk", "web"]),
              st.sampled_from(["s1", "s2"]), st.sampled_from(["m1", "m2", "m3"]), st.integers(1, 3)),
    st.tuples(st.sampled_from(["push", "pull"]), st.just(""), st.just(""), st.just(""), st.integers(1, 3)),
)


class Model:
    """The newest write of every row, and what a user must therefore see in the end."""

    def __init__(self) -> None:
        self.reg: dict[str, tuple[int, object]] = {}  # key -> (time, (title, metadata) or "deleted")
        self.msgs: dict[tuple[str, str], tuple[int, str]] = {}
        self.deleted: dict[str, int] = {}

    def expected(self) -> dict:
        out = {}
        for key in set(self.reg) | {k for k, _ in self.msgs}:
            alive = {mid: c for (k, mid), (t, c) in self.msgs.items() if k == key and t > self.deleted.get(key, -1)}
            reg = self.reg.get(key)
            live = reg is not None and reg[1] != "deleted"
            if live or alive:
                title, meta = reg[1] if live else ("", {})  # type: ignore[misc]
                out[key] = (title, meta, alive)
        return out


def _write(op, store, desk: Device, model: Model, now: int, n: int) -> None:
    kind, side, key, mid, _ = op
    info = store.get(key)
    text = f"{side}-{n}"
    if kind in ("title", "meta"):
        if info is None:
            return
        store.update(key, **({"title": text} if kind == "title" else {"metadata": {mid: n}}))
        got = store.get(key)
        model.reg[key] = (now, (got.title, got.metadata))
    elif kind == "msg":
        if info is not None and any(m.id == mid for m in store.history(key)):
            return
        store.add_message(key, "user", text, message_id=mid)
        if info is None:
            model.reg[key] = (now, ("", {}))
        model.msgs[(key, mid)] = (now, text)
    elif kind == "edit":
        if info is None or not any(m.id == mid for m in store.history(key)):
            return
        if side == "web":
            store.update_message(key, mid, text)
        else:
            desk.ws.append([MessageUpdated(session_key=key, message_id=mid, content=text)])
        model.msgs[(key, mid)] = (now, text)
    elif kind == "delete" and store.delete(key):
        model.reg[key] = (now, "deleted")
        model.deleted[key] = now


def _contents(store) -> dict:
    return {k: (t, m, {mid: v[1] for mid, v in msgs.items()}) for k, (t, m, msgs) in snapshot(store).items()}


@pytest.mark.parametrize("gateway", ["memory", pytest.param("mysql", marks=[pytest.mark.slow, pytest.mark.mysql,
                                                                           requires_mysql])], indirect=True)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, max_size=25), final=st.sampled_from(["push then pull", "pull then push"]))
def test_last_write_wins_converges_for_any_interleaving_of_desktop_and_web_edits(gateway, ops, final):
    clock = Clock()
    user = fresh_email("lww")
    model = Model()
    with tempfile.TemporaryDirectory() as tmp, device(os.path.join(tmp, "desk"), clock, gateway) as desk, \
            gateway.store(user, origin="web", clock=clock) as web:
        for n, op in enumerate(ops):
            now = clock.tick(op[4])
            if op[0] == "push":
                desk.push(user)
            elif op[0] == "pull":
                desk.pull(user)
            else:
                _write(op, desk.store if op[1] == "desk" else web, desk, model, now, n)
        clock.tick()
        steps = [desk.push, desk.pull] if final == "push then pull" else [desk.pull, desk.push]
        for step in steps:
            step(user)
        want = model.expected()
        assert _contents(desk.store) == _contents(web) == want


# --------------------------------------------------------------------------- failures


@pytest.fixture
def gateways(monkeypatch):
    """Every ``sync.Gateway`` the test opens, so it can cut their connections."""
    opened = []

    class Recording(sync.Gateway):
        def __init__(self, *args, **kw) -> None:
            super().__init__(*args, **kw)
            opened.append(self)

    monkeypatch.setattr(sync, "Gateway", Recording)
    return opened


@mysql_only
def test_a_connection_killed_in_the_middle_of_a_push_is_reopened_and_nothing_is_lost_or_doubled(devices, gateways):
    a, b, web, user = devices
    for i in range(50):
        a.store.add_message(f"s{i % 2}", "user", f"m{i}", message_id=f"m{i}")

    def cut(n: int) -> None:
        if n == 2:
            kill(gateways[-1].conn.thread_id())

    report = a.push(user, batch_rows=10, on_batch=cut)
    assert report.reconnects == 1 and report.messages == 50 and report.batches >= 5
    _assert_gateway_holds(a.gateway, web, 50)
    b.pull(user)
    assert snapshot(b.store) == snapshot(a.store) == snapshot(web)


@mysql_only
def test_a_connection_killed_in_the_middle_of_a_pull_is_reopened(devices, gateways):
    a, b, web, user = devices
    for i in range(30):
        web.add_message("s", "user", f"m{i}", message_id=f"m{i}")
    real = sync.fetch_changes
    calls = []

    def cutting(cur, *args, **kw):
        calls.append(1)
        if len(calls) == 2:
            kill(gateways[-1].conn.thread_id())
        return real(cur, *args, **kw)

    sync.fetch_changes = cutting
    try:
        report = a.pull(user, page_rows=10)
    finally:
        sync.fetch_changes = real
    assert report.reconnects == 1 and report.messages == 30
    assert [m.id for m in a.store.history("s")] == [f"m{i}" for i in range(30)]


def _assert_gateway_holds(gateway, web, n: int) -> None:
    ids = gateway.message_rows(web.user_id)
    assert len(ids) == len(set(ids)) == n


def test_a_push_that_dies_after_a_commit_and_before_its_position_resumes_without_loss_or_duplicates(devices):
    a, b, web, user = devices
    for i in range(60):
        a.store.add_message(f"s{i % 3}", "user", f"m{i}", message_id=f"m{i}")

    def crash(n: int) -> None:
        if n == 3:
            raise BackendError("simulated: the process died after the third COMMIT")

    with pytest.raises(BackendError):
        a.push(user, batch_rows=10, on_batch=crash)
    pushed = [e for e in a.events() if isinstance(e, SyncPushed)]
    assert len(pushed) == 2  # the third batch is in MySQL but its position is not in the log
    report = a.push(user, batch_rows=10)
    assert report.position_before == pushed[-1].record_seq
    _assert_gateway_holds(a.gateway, web, 60)
    b.pull(user)
    assert snapshot(b.store) == snapshot(a.store) == snapshot(web)
    assert sum(len(b.store.history(k)) for k in ("s0", "s1", "s2")) == 60


def test_a_pull_that_dies_before_its_append_leaves_nothing_half_done_and_reruns_cleanly(devices, monkeypatch):
    a, b, web, user = devices
    for i in range(5):
        web.add_message("s", "user", f"m{i}", message_id=f"m{i}")
    before = len(a.events())

    def crash(events):
        raise OSError("simulated crash before the pull's batch reached the log")

    monkeypatch.setattr(a.ws, "append", crash)
    with pytest.raises(OSError):
        a.pull(user)
    monkeypatch.undo()
    assert len(a.events()) == before and a.store.get("s") is None
    report = a.pull(user)
    assert report.messages == 5 and [m.id for m in a.store.history("s")] == [f"m{i}" for i in range(5)]
    assert a.pull(user).events_written == 0


def test_a_pulled_event_whose_dedup_key_the_log_already_holds_is_written_without_it(devices):
    a, b, web, user = devices
    a.store.add_message("s", "user", "x", message_id="m1")
    key = next(e.dedup for e in a.events() if e.dedup.startswith("msg:"))
    ev = sync._without_known_dedup(a.ws, MessageUpdated(session_key="s", message_id="m1", content="y", dedup=key))
    assert ev.dedup == "" and ev.content == "y"
    fresh = MessageUpdated(session_key="s", message_id="m1", content="y", dedup="msg:never-seen")
    assert sync._without_known_dedup(a.ws, fresh) is fresh


@mysql_only
def test_a_dropped_connection_before_a_pull_is_reopened(devices):
    a, b, web, user = devices
    web.add_message("s", "user", "x")
    kill(web.conn.thread_id())
    web.add_message("s", "user", "y")  # the web store reconnects too
    assert a.pull(user).messages == 2


@mysql_only
def test_a_recreated_gateway_gets_everything_pushed_again(devices):
    a, b, web, user = devices
    a.store.add_message("s", "user", "x", message_id="m1")
    a.push(user)
    query("DELETE FROM gateway_users WHERE id = %s", (web.user_id,))  # the rows cascade away
    report = a.push(user)
    assert report.resets and report.messages == 1
    with MySQLSessionStore(MYSQL_URL, user) as fresh:
        assert [m.content for m in fresh.history("s")] == ["x"]


# --------------------------------------------------------------------------- security


def test_a_third_user_sees_nothing_of_theirs_and_cannot_change_their_rows(devices, tmp_path):
    a, b, web, user = devices
    a.store.get_or_create("shared-name", title="owner's")
    a.store.add_message("shared-name", "user", "owner's secret", message_id="m1")
    converge(user, a, b)
    stranger = fresh_email("stranger")
    with device(str(tmp_path / "stranger"), gateway=a.gateway) as c:
        assert c.pull(stranger).messages == 0 and c.store.list() == []
        c.store.get_or_create("shared-name", title="stranger's")
        c.store.add_message("shared-name", "user", "stranger's text", message_id="m1")
        c.store.delete("shared-name")
        c.store.add_message("shared-name", "user", "again", message_id="m1")
        c.push(stranger)
        c.pull(stranger)
        assert [m.content for m in c.store.history("shared-name")] == ["again"]
    converge(user, a, b)
    assert snapshot(a.store) == snapshot(b.store) == snapshot(web)
    assert snapshot(web)["shared-name"][0] == "owner's"
    assert snapshot(web)["shared-name"][2]["m1"][1] == "owner's secret"


def test_injection_shaped_keys_and_contents_sync_verbatim(devices):
    a, b, web, user = devices
    content = "'; DROP TABLE gateway_sessions; -- \\ \" %s %(x)s \x00 😀 " + "长" * 2000
    for key in WEIRD_KEYS:
        a.store.get_or_create(key, title=key, metadata={key: content[:50]})
        a.store.add_message(key, "user", content, message_id=key or "empty")
    converge(user, a, b)
    assert snapshot(b.store) == snapshot(a.store) == snapshot(web)
    for key in WEIRD_KEYS:
        assert web.history(key)[0].content == content and web.get(key).title == key


@mysql_only
def test_credentials_never_reach_errors_events_or_reports(devices, tmp_path):
    a, b, web, user = devices
    d = DSN.parse(MYSQL_URL)
    secret = "Pa55-w0rd-not-for-logs"
    wrong = f"mysql://{d.user}:{secret}@{d.host}:{d.port}/{d.database}"
    a.store.add_message("s", "user", "x")
    with pytest.raises(BackendError) as info:
        sync.push(a.ws, wrong, user)
    assert secret not in str(info.value) and d.target in str(info.value)
    login = "evlog_sync_test"
    try:
        query(f"CREATE USER IF NOT EXISTS '{login}'@'%' IDENTIFIED BY '{secret}'")
        query(f"GRANT ALL PRIVILEGES ON `{d.database}`.* TO '{login}'@'%'")
    except Exception as e:  # noqa: BLE001 - a server where we may not create users
        pytest.skip(f"cannot create a login on this server: {e}")
    try:
        good = f"mysql://{login}:{secret}@{d.host}:{d.port}/{d.database}"
        report = sync.push(a.ws, good, user)
        report2 = sync.pull(a.ws, good, user)
        a.ws.log.sync()
        raw = b""
        for name in os.listdir(os.path.join(a.home, "log")):
            with open(os.path.join(a.home, "log", name), "rb") as f:
                raw += f.read()
        assert secret.encode() not in raw and login.encode() not in raw
        assert secret not in json.dumps([vars(report), vars(report2)])
    finally:
        query(f"DROP USER IF EXISTS '{login}'@'%'")


# --------------------------------------------------------------------------- the command line


@pytest.fixture
def sync_cli():
    """The ``evlog`` group with ``sync`` registered (and unregistered afterwards if the CLI does not register it)."""
    from eventlog.cli import cli

    had = "sync" in cli.commands
    import eventlog.cli.sync_command  # noqa: F401

    cli.add_command(eventlog.cli.sync_command.sync)
    yield cli
    if not had:  # leave the global group as it was, so docs tests see the real command set
        cli.commands.pop("sync", None)


@mysql_only
def test_the_sync_commands_print_one_json_object_and_read_the_dsn_from_the_environment(devices, cli_runner,
                                                                                        monkeypatch, sync_cli):
    cli = sync_cli
    a, b, web, user = devices
    a.store.add_message("s", "user", "from the device", message_id="m1")
    a.ws.close()
    monkeypatch.setenv("EVLOG_MYSQL_DSN", MYSQL_URL)
    res = cli_runner.invoke(cli, ["--home", a.home, "sync", "push", "--rows", "--user", user, "--json"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["messages"] == 1
    res = cli_runner.invoke(cli, ["--home", a.home, "sync", "status", "--user", user, "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["push_pending_events"] == 0
    res = cli_runner.invoke(cli, ["--home", a.home, "sync", "pull", "--rows", "--user", user])
    assert res.exit_code == 0 and "direction:" in res.stdout
    d = DSN.parse(MYSQL_URL)
    res = cli_runner.invoke(cli, ["--home", a.home, "sync", "push", "--rows", "--user", user,
                                  "--dsn", f"mysql://{d.user}:NotThePassword-42@{d.host}:{d.port}/{d.database}"])
    assert res.exit_code == 3 and "NotThePassword-42" not in res.stderr and "evlog: error:" in res.stderr


def test_every_pulled_batch_records_its_position_with_its_events(devices):
    a, b, web, user = devices
    web.add_message("s", "user", "x", message_id="m1")
    web.update("s", title="t", metadata={"k": 1})
    a.pull(user)
    evs = a.events()
    marker = next(i for i, e in enumerate(evs) if isinstance(e, SyncPulled))
    assert evs[marker].count == len(evs) - marker - 1
    assert evs[marker].user == user and "@" not in evs[marker].target
    with pytest.raises(NotFound):
        b.store.history("s")
