"""``evlog gateway migrate``: rows written by the row-sync code path become events, idempotently, resumably.

The rows are written by ``MySQLSessionStore`` (what the previous version's gateway and
``sync push --rows`` write) on a real MariaDB; the migration turns them into events that a
device pulls into the same sessions and messages, and the web view refuses the account until
it ran (naming the command).
"""

from __future__ import annotations

import json

import pytest

from eventlog.app.gateway import row_migration
from eventlog.app.gateway.connection import DSN, Connection
from eventlog.app.gateway.event_store import MySQLEventStore
from eventlog.app.gateway.store import MySQLSessionStore
from eventlog.app.gateway.users import resolve_user
from eventlog.app.session_store import LocalSessionStore
from eventlog.app.web.sources import GatewaySource
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from eventlog.replication import sync as replication
from tests.mysql_helpers import MYSQL_URL, fresh_email, requires_mysql

pytestmark = requires_mysql


@pytest.fixture
def conn():
    c = Connection(DSN.parse(MYSQL_URL))
    yield c
    c.close()


def _old_gateway_rows(email: str) -> dict[str, list[str]]:
    """Sessions and messages as the row-sync version stored them (one deleted session, which is not carried)."""
    with MySQLSessionStore(MYSQL_URL, email, origin="old-device") as store:
        store.get_or_create("s-plans", title="plans", project="/srv/shop", metadata={"agent": "claude"})
        for i in range(5):
            store.add_message("s-plans", "user" if i % 2 == 0 else "assistant", f"plan {i}", message_id=f"p{i}")
        store.get_or_create("s-notes", title="notes")
        store.add_message("s-notes", "user", "remember the milk", message_id="n0")
        store.get_or_create("s-gone", title="gone")
        store.add_message("s-gone", "user", "bye", message_id="g0")
        store.delete("s-gone")
        return {s.key: [m.content for m in store.history(s.key)] for s in store.list()}


def _user(conn: Connection, email: str):  # noqa: ANN202
    return conn.transaction(lambda cur: resolve_user(cur, email, create=False), doing="test")


def test_migrate_turns_old_rows_into_events_a_device_pulls_and_a_second_run_stores_nothing(tmp_path, conn, cli_runner):
    email = fresh_email("old")
    rows = _old_gateway_rows(email)
    assert sorted(rows) == ["s-notes", "s-plans"]
    first = cli_runner.invoke(cli, ["gateway", "migrate", "--dsn", MYSQL_URL, "--user", email, "--json"])
    assert first.exit_code == 0, first.output
    got = json.loads(first.stdout)
    assert (got["users"], got["sessions"], got["messages"], got["stored"]) == (1, 2, 6, 8)
    again = json.loads(cli_runner.invoke(cli, ["gateway", "migrate", "--dsn", MYSQL_URL, "--user", email,
                                               "--json"]).stdout)
    assert (again["stored"], again["duplicates"], again["messages"]) == (0, 0, 0)  # nothing left to send
    home = str(tmp_path / "desk")
    init_workspace(home)
    store = MySQLEventStore(MYSQL_URL)
    try:
        with Workspace.open(home, writable=True) as ws:
            assert replication.pull(ws.log, store, email, store_name="gw").received == 8
            local = LocalSessionStore(ws)
            assert {s.key: [m.content for m in local.history(s.key)] for s in local.list()} == rows
            assert local.get("s-plans").project == "/srv/shop" and local.get("s-plans").metadata == {"agent": "claude"}
    finally:
        store.close()


def test_a_migration_killed_between_pages_resumes_without_loss_or_duplicates(conn, monkeypatch):
    email = fresh_email("killed")
    with MySQLSessionStore(MYSQL_URL, email) as s:
        s.get_or_create("big")
        for i in range(7):
            s.add_message("big", "user", f"m{i}", message_id=f"m{i}")
    monkeypatch.setattr(row_migration, "PAGE", 3)
    real, calls = row_migration.migrate_page, []

    def dying(cur, user, key_hash, report):  # noqa: ANN001, ANN202
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt("killed mid-migration")
        return real(cur, user, key_hash, report)

    monkeypatch.setattr(row_migration, "migrate_page", dying)
    with pytest.raises(KeyboardInterrupt):
        row_migration.migrate(conn, [email])
    monkeypatch.setattr(row_migration, "migrate_page", real)
    report = row_migration.migrate(conn, [email])
    assert report.stored == 4 and report.duplicates == 0  # the 4 messages after the first page
    events = MySQLEventStore(MYSQL_URL)
    try:
        page = events.pull(email, 0, 100)
    finally:
        events.close()
    assert [e.type for e in page.events].count("message.appended") == 7 and len(page.events) == 8
    assert row_migration.migrate(conn, [email]).stored == 0


def test_rows_pushed_after_a_migration_are_picked_up_by_the_next_run(conn):
    email = fresh_email("later")
    with MySQLSessionStore(MYSQL_URL, email) as s:
        s.add_message("s", "user", "before", message_id="a")
    row_migration.migrate(conn, [email])
    with MySQLSessionStore(MYSQL_URL, email) as s:
        s.add_message("s", "user", "after", message_id="b")
    assert conn.transaction(lambda cur: row_migration.pending_rows(cur, _user(conn, email).id), doing="test")
    assert row_migration.migrate(conn, [email]).stored == 1
    uid = _user(conn, email).id
    assert not conn.transaction(lambda cur: row_migration.pending_rows(cur, uid), doing="test")


def test_the_web_view_refuses_an_account_with_rows_not_migrated_and_names_the_command(conn):
    from eventlog.app.gateway.pool import Pool

    email = fresh_email("refused")
    _old_gateway_rows(email)
    user = _user(conn, email)
    source = GatewaySource(Pool(MYSQL_URL))
    try:
        with pytest.raises(row_migration.NotMigrated, match="evlog gateway migrate"):
            source.sessions(user, offset=0, limit=10, project=None, query=None)
        row_migration.migrate(conn, [email])
        listed, total, _projects = source.sessions(user, offset=0, limit=10, project=None, query=None)
        assert sorted(s.key for s in listed) == ["s-notes", "s-plans"] and total == 2
        assert [m.content for m in source.transcript(user, "s-plans", page=None, per=50)[1]] == [
            f"plan {i}" for i in range(5)]
    finally:
        source.close()
