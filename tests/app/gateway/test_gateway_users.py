"""``evlog gateway user add|passwd|remove|list`` and the account rules behind them (``auth``)."""

from __future__ import annotations

import json

import pytest

from eventlog.app.gateway import auth
from eventlog.app.gateway.connection import DSN, Connection
from eventlog.app.gateway.store import MySQLSessionStore
from eventlog.errors import ConfigError, NotFound
from tests.mysql_helpers import MYSQL_URL, fresh_email, query, requires_mysql

pytestmark = [pytest.mark.mysql, requires_mysql]


@pytest.fixture
def conn():
    c = Connection(DSN.parse(MYSQL_URL))
    from eventlog.app.gateway.schema import migrate

    migrate(c)
    yield c
    c.close()


@pytest.fixture
def run(cli_runner, monkeypatch):
    from eventlog.cli import cli

    monkeypatch.setenv("EVLOG_MYSQL_DSN", MYSQL_URL)

    def invoke(*args: str, stdin: str | None = None):
        return cli_runner.invoke(cli, ["gateway", "user", *args], input=stdin)

    return invoke


def test_add_list_passwd_remove_from_the_command_line(run, conn):
    email = fresh_email("cli")
    res = run("add", email, "--password-stdin", stdin="first password\n")
    assert res.exit_code == 0, res.output
    assert "first password" not in res.output
    assert auth.login(conn, email, "first password", kind="web")[0].email == email
    res = run("add", email, "--password-stdin", stdin="another one!\n")
    assert res.exit_code == 3 and "exists already" in res.stderr
    rows = [json.loads(line) for line in run("list", "--json").stdout.splitlines()]
    mine = next(r for r in rows if r["email"] == email)
    assert mine["password_set"] is True and mine["web_sessions"] == 1 and "hash" not in json.dumps(mine)
    res = run("passwd", email, "--password-stdin", stdin="second password\n")
    assert res.exit_code == 0 and "revoked" in res.stderr
    with pytest.raises(auth.LoginFailed):
        auth.login(conn, email, "first password", kind="web")
    assert auth.login(conn, email, "second password", kind="sync")[0].email == email
    res = run("remove", email, "--yes")
    assert res.exit_code == 0
    assert query("SELECT COUNT(*) FROM gateway_users WHERE email = %s", (email,))[0][0] == 0
    assert run("remove", email, "--yes").exit_code == 3


def test_the_password_is_asked_twice_and_must_be_long_enough(run):
    email = fresh_email("prompt")
    res = run("add", email, stdin="short\nshort\n")
    assert res.exit_code == 3 and "at least 8" in res.stderr
    res = run("add", email, stdin="long enough 1\nlong enough 2\nlong enough 3\nlong enough 3\n")
    assert res.exit_code == 0, res.output
    assert "long enough" not in res.stdout


def test_a_user_made_by_direct_sync_gets_a_password_with_add(conn):
    email = fresh_email("direct")
    with MySQLSessionStore(MYSQL_URL, email) as s:
        s.add_message("k", "user", "from a device")
    with pytest.raises(auth.LoginFailed):
        auth.login(conn, email, "", kind="web")
    auth.add_user(conn, email, "now with a password")
    assert auth.login(conn, email, "now with a password", kind="web")[0].email == email


def test_removing_a_user_takes_their_sessions_and_tokens_with_them(conn):
    email = fresh_email("gone")
    auth.add_user(conn, email, "password 123")
    _, token = auth.login(conn, email, "password 123", kind="sync")
    with MySQLSessionStore(MYSQL_URL, email) as s:
        s.add_message("k", "user", "bye")
        uid = s.user_id
    auth.remove_user(conn, email)
    assert auth.lookup(conn, token, "sync") is None
    for table in ("gateway_sessions", "gateway_session_messages", "gateway_tokens"):
        assert query(f"SELECT COUNT(*) FROM {table} WHERE user_id = %s", (uid,))[0][0] == 0
    with pytest.raises(NotFound):
        auth.remove_user(conn, email)


def test_tokens_expire_and_are_bound_to_their_kind(conn):
    email = fresh_email("ttl")
    auth.add_user(conn, email, "password 123")
    now = [1_900_000_000.0]
    _, web = auth.login(conn, email, "password 123", kind="web", ttl=60, clock=lambda: now[0])
    assert auth.lookup(conn, web, "web", clock=lambda: now[0]).email == email
    assert auth.lookup(conn, web, "sync", clock=lambda: now[0]) is None
    now[0] += 61
    assert auth.lookup(conn, web, "web", clock=lambda: now[0]) is None
    with pytest.raises(ConfigError):
        auth.login(conn, email, "password 123", kind="admin")


def test_two_processes_creating_one_user_at_once_both_get_it(conn):
    """Found by tools/chaos.py: a sync that first saw no user, while another process created
    it, read its own stale snapshot after the insert and crashed on a missing row."""
    from eventlog.app.gateway.users import resolve_user

    email = fresh_email("both")
    other = Connection(DSN.parse(MYSQL_URL))

    class CreatedMeanwhile:
        """A cursor that lets the other process create the user right after our first look."""

        def __init__(self, cur):
            self.cur, self.looks = cur, 0

        def execute(self, sql, params=None):
            got = self.cur.execute(sql, params)
            if sql.startswith("SELECT") and self.looks == 0:
                self.looks += 1
                other.transaction(lambda c: resolve_user(c, email))
            return got

        def __getattr__(self, name):
            return getattr(self.cur, name)

    try:
        user = conn.transaction(lambda cur: resolve_user(CreatedMeanwhile(cur), email))
        assert user.email == email
        assert other.transaction(lambda c: resolve_user(c, email)) == user
    finally:
        other.close()
