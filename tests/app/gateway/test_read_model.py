"""The gateway's read models (``read_model``) are the device's projections of the same events.

Two devices write sessions, messages, edits, a delete and facts (added, edited, forgotten,
superseded) into one account; a third device pulls them. The gateway's view, caught up
incrementally after each push, lists the same sessions in the same order with the same
transcripts and facts as the third device, and equals a rebuild from scratch.
"""

from __future__ import annotations

import contextlib

import pytest

from eventlog.app.gateway import read_model
from eventlog.app.gateway.event_store import MySQLEventStore
from eventlog.app.gateway.users import resolve_user
from eventlog.app.session_store import LocalSessionStore
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import (
    MemoryAppended,
    MemoryEdited,
    MemoryForgotten,
    MemorySuperseded,
    MessageAppended,
    MessageUpdated,
    SessionCreated,
    SessionDeleted,
    SessionUpdated,
)
from eventlog.replication import sync as replication
from tests.mysql_helpers import MYSQL_URL, fresh_email, requires_mysql

pytestmark = requires_mysql


@pytest.fixture
def store():
    s = MySQLEventStore(MYSQL_URL)
    yield s
    s.close()


def _ws(tmp_path, name: str) -> str:
    home = str(tmp_path / name)
    init_workspace(home)
    return home


def _write(home: str, events: list) -> None:
    with Workspace.open(home, writable=True) as ws:
        ws.append(events)


def _sync(home: str, store: MySQLEventStore, account: str, *, push: bool = True) -> None:
    with Workspace.open(home, writable=True) as ws:
        if push:
            replication.push(ws.log, store, account, store_name="gw")
        else:
            replication.pull(ws.log, store, account, store_name="gw")


def _user_id(store: MySQLEventStore, account: str) -> int:
    with store.pool.connection() as conn:
        return conn.transaction(lambda cur: resolve_user(cur, account).id, doing="test")


def _gateway_view(store: MySQLEventStore, uid: int) -> tuple:
    def read(cur, user_id):
        listed, total = read_model.sessions(cur, user_id, limit=10_000)
        transcripts = {s.key: read_model.messages(cur, user_id, s.key)[0] for s in listed}
        return listed, total, transcripts, read_model.facts(cur, user_id, state=None)

    return read_model.ReadModel(store.pool).read(uid, read)


def _device_view(home: str) -> tuple:
    with Workspace.open(home) as ws:
        listed = LocalSessionStore(ws).list()
        transcripts = {s.key: LocalSessionStore(ws).history(s.key) for s in listed}
        files = sorted(ws.memory.files, key=lambda t: (t != "", t))  # MEMORY.md by MEMORY.md, in file order
        facts = [read_model.fact_row(f) for t in files for f in ws.memory.facts(t, state=None)]
    return listed, len(listed), transcripts, facts


def _first_batch() -> list:
    return [SessionCreated(session_key="s-plans", title="plans", project="/srv/shop"),
            MessageAppended(session_key="s-plans", message_id="m1", role="user", content="ship on Friday?"),
            MessageAppended(session_key="s-plans", message_id="m2", role="assistant", content="Yes, after tests."),
            SessionCreated(session_key="s-gone", title="scratch"),
            MessageAppended(session_key="s-gone", message_id="g1", role="user", content="temporary"),
            MemoryAppended(fact_id="f-1", scope="user", section="Preferences", text="Likes short answers", by="dream"),
            MemoryAppended(fact_id="f-2", scope="project", project="/srv/shop", section="Project Context",
                           text="Deploys on Fridays", by="dream")]


def _second_batch() -> list:
    return [MessageUpdated(session_key="s-plans", message_id="m2", content="Yes, after the tests pass."),
            SessionUpdated(session_key="s-plans", title="release plans", updated_at="2030-01-01T00:00:00.000Z"),
            SessionDeleted(session_key="s-gone"),
            MemoryEdited(fact_id="f-1", text="Likes short, direct answers"),
            MemoryAppended(fact_id="f-3", scope="project", project="/srv/shop", section="Project Context",
                           text="Deploys on Thursdays", by="dream"),
            MemorySuperseded(fact_id="f-2", by_fact_id="f-3", by="dream")]


def test_the_gateway_view_is_the_device_projection_of_the_same_events(tmp_path, store):
    account = fresh_email("view")
    laptop, desk, reader = _ws(tmp_path, "laptop"), _ws(tmp_path, "desk"), _ws(tmp_path, "reader")
    _write(laptop, _first_batch())
    _write(desk, [SessionCreated(session_key="s-desk", title="desk work"),
                  *[MessageAppended(session_key="s-desk", message_id=f"d{i}", role="user", content=f"line {i}")
                    for i in range(30)],
                  MemoryAppended(fact_id="f-d", scope="user", section="Preferences", text="Uses vim", by="user"),
                  MemoryForgotten(fact_id="f-d", by="user")])
    _sync(laptop, store, account)
    uid = _user_id(store, account)
    first = _gateway_view(store, uid)  # folded incrementally: this part now, the rest after the next pushes
    assert [s.key for s in first[0]] == ["s-plans", "s-gone"] or [s.key for s in first[0]] == ["s-gone", "s-plans"]
    _sync(desk, store, account)
    _write(laptop, _second_batch())
    _sync(laptop, store, account)
    _sync(reader, store, account, push=False)
    incremental, device = _gateway_view(store, uid), _device_view(reader)
    assert [s.key for s in device[0]] == ["s-plans", "s-desk"]
    assert incremental[0] == device[0]  # same sessions, same order, same titles, previews, counts
    assert incremental[2] == device[2]  # same transcripts (the edit applied, same order)
    assert incremental[3] == device[3] and {f.state for f in device[3]} == {"active", "forgotten", "superseded"}
    assert incremental[2]["s-plans"][1].content == "Yes, after the tests pass."
    read_model.ReadModel(store.pool).rebuild(uid)
    assert _gateway_view(store, uid) == incremental


def test_a_teammate_s_fact_shows_its_author_and_a_share_reaches_the_member_s_view(tmp_path, store):
    owner, member = fresh_email("owner"), fresh_email("member")
    mine, theirs = _ws(tmp_path, "mine"), _ws(tmp_path, "theirs")
    _write(mine, [SessionCreated(session_key="s-shop", project="/srv/shop"),
                  MessageAppended(session_key="s-shop", message_id="o1", role="user", content="the shop"),
                  SessionCreated(session_key="s-private"),
                  MessageAppended(session_key="s-private", message_id="p1", role="user", content="private")])
    _sync(mine, store, owner)
    mid = _user_id(store, member)
    assert _gateway_view(store, mid)[0] == []  # caught up before the share: nothing to see
    store.share(owner, "/srv/shop", member)
    assert [s.key for s in _gateway_view(store, mid)[0]] == ["s-shop"]  # the share rebuilt the member's view
    _write(theirs, [MemoryAppended(fact_id="f-t", scope="project", project="/srv/shop", section="Project Context",
                                   text="Tests run in CI", by="dream")])
    _sync(theirs, store, member)
    facts = _gateway_view(store, _user_id(store, owner))[3]
    assert [(f.text, f.author) for f in facts] == [("Tests run in CI", member)]


def test_an_erasure_at_the_gateway_rebuilds_the_views_without_the_erased_text(tmp_path, store):
    account = fresh_email("erase")
    home = _ws(tmp_path, "h")
    _write(home, [SessionCreated(session_key="s"),
                  MessageAppended(session_key="s", message_id="a", role="user", content="keep this"),
                  MessageAppended(session_key="s", message_id="b", role="user", content="my cat is called Tibbles")])
    _sync(home, store, account)
    uid = _user_id(store, account)
    assert len(_gateway_view(store, uid)[2]["s"]) == 2
    page = store.pull(account, 0, 100)
    (secret,) = [e for e in page.events if b"Tibbles" in bytes(e.body)]
    assert store.erase(account, [secret.key]) == 1
    with store.pool.connection() as conn:  # before any read of the view: no row holds the erased text
        lines = conn.transaction(lambda cur: (cur.execute("SELECT line FROM gateway_view_messages WHERE user_id = %s",
                                                          (uid,)), cur.fetchall())[1], doing="test")
    assert not any(b"Tibbles" in bytes(r[0]) for r in lines)
    transcripts = _gateway_view(store, uid)[2]
    assert [m.content for m in transcripts["s"]] == ["keep this"]


def test_a_catch_up_killed_before_its_commit_leaves_the_previous_view(tmp_path, store, monkeypatch):
    account = fresh_email("kill")
    home = _ws(tmp_path, "h")
    _write(home, [SessionCreated(session_key="s1"),
                  MessageAppended(session_key="s1", message_id="a", role="user", content="one")])
    _sync(home, store, account)
    uid = _user_id(store, account)
    before = _gateway_view(store, uid)
    _write(home, [MessageAppended(session_key="s1", message_id="b", role="user", content="two")])
    _sync(home, store, account)

    def crash(self, position):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(read_model.View, "save", crash)
    with contextlib.suppress(KeyboardInterrupt):
        _gateway_view(store, uid)
    monkeypatch.undo()
    with store.pool.connection() as conn:
        rows = conn.transaction(lambda cur: read_model.messages(cur, uid, "s1")[0], doing="test")
    assert [m.content for m in rows] == [m.content for m in before[2]["s1"]] == ["one"]
    assert [m.content for m in _gateway_view(store, uid)[2]["s1"]] == ["one", "two"]


def test_the_http_view_answers_the_read_model_s_structs_to_the_token_s_account_only(tmp_path, store):
    import msgspec
    from starlette.testclient import TestClient

    from eventlog.app.gateway.pool import Pool
    from eventlog.app.gateway.wire import API_PREFIX
    from eventlog.app.web.app import gateway_app
    from tests.app.gateway.test_event_store import sync_token

    account, other = fresh_email("http"), fresh_email("httpother")
    home = _ws(tmp_path, "h")
    _write(home, _first_batch())
    _sync(home, store, account)
    pool = Pool(MYSQL_URL)
    try:
        c = TestClient(gateway_app(pool), base_url="http://127.0.0.1")
        auth = {"Authorization": f"Bearer {sync_token(account)}"}
        got = c.post(f"{API_PREFIX}/view/sessions", content=b'{"limit": 10}', headers=auth)
        assert got.status_code == 200, got.text
        page = msgspec.json.decode(got.content, type=read_model.SessionsPage)
        listed = _gateway_view(store, _user_id(store, account))[0]
        assert page.sessions == listed and page.total == 2 and page.projects == ["/srv/shop"]
        t = c.post(f"{API_PREFIX}/view/transcript", content=b'{"key": "s-plans"}', headers=auth)
        assert [m.content for m in msgspec.json.decode(t.content, type=read_model.TranscriptPage).messages] == [
            "ship on Friday?", "Yes, after tests."]
        facts = msgspec.json.decode(c.get(f"{API_PREFIX}/view/facts", headers=auth).content, type=read_model.FactsPage)
        assert sorted(f.fact_id for f in facts.facts) == ["f-1", "f-2"]
        theirs = {"Authorization": f"Bearer {sync_token(other)}"}
        assert c.post(f"{API_PREFIX}/view/transcript", content=b'{"key": "s-plans"}', headers=theirs).status_code == 404
        assert c.post(f"{API_PREFIX}/view/sessions", content=b'{"limit": 5000}', headers=auth).status_code == 400
        assert c.post(f"{API_PREFIX}/view/sessions", content=b'{"bogus": 1}', headers=auth).status_code == 400
    finally:
        pool.close()


def test_an_unshare_removes_the_project_from_the_member_s_view_rows_at_once(tmp_path, store):
    owner, member = fresh_email("unowner"), fresh_email("unmember")
    mine = _ws(tmp_path, "mine")
    _write(mine, [SessionCreated(session_key="s-shop", project="/srv/shop"),
                  MessageAppended(session_key="s-shop", message_id="o1", role="user", content="shop secret")])
    _sync(mine, store, owner)
    store.share(owner, "/srv/shop", member)
    mid = _user_id(store, member)
    assert [s.key for s in _gateway_view(store, mid)[0]] == ["s-shop"]
    assert store.unshare(owner, "/srv/shop", member)
    with store.pool.connection() as conn:
        left = conn.transaction(lambda cur: (cur.execute("SELECT COUNT(*) FROM gateway_view_messages WHERE user_id = %s",
                                                         (mid,)), cur.fetchone()[0])[1], doing="test")
    assert left == 0
    assert _gateway_view(store, mid)[0] == []


def test_many_accounts_first_views_at_once_do_not_deadlock(store, monkeypatch):
    """50 users' first page loads at once deadlocked each other under REPEATABLE READ (gap locks of a new
    account's empty view reaching into its neighbours' rows) until the pool ran dry and pages answered
    503 (tools/bench_web.py --only gateway_page_loads). Here every view transaction gets one try."""
    import threading

    from eventlog.app.gateway import event_store, web_events

    users = []
    with store.pool.connection() as conn:
        for _ in range(12):
            user = conn.transaction(lambda cur: resolve_user(cur, fresh_email()), doing="test")
            evs = [(SessionCreated(session_key=f"s{s}", title=f"Session {s}", project="/srv/shop"), "/srv/shop")
                   for s in range(40)]
            conn.transaction(lambda cur, u=user, e=evs: web_events.append(cur, u, e), doing="seeding")
            users.append(user.id)
    failures: list[BaseException] = []

    def once(conn, fn, *, doing, isolation=""):  # noqa: ANN001, ANN202 - retrying without its retries
        try:
            return conn.transaction(fn, doing=doing, isolation=isolation, retry=False)
        except BaseException as e:
            failures.append(e)
            raise

    monkeypatch.setattr(event_store, "retrying", once)
    barrier = threading.Barrier(len(users))
    listed: dict[int, int] = {}

    def first_view(uid: int) -> None:
        barrier.wait(10)
        with contextlib.suppress(Exception):
            listed[uid] = read_model.ReadModel(store.pool).read(uid, lambda cur, u: read_model.sessions(cur, u)[1])

    threads = [threading.Thread(target=first_view, args=(uid,)) for uid in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert failures == [] and listed == dict.fromkeys(users, 40)
