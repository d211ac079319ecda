"""Sync hardening: timeouts, rows the server cannot take, gateway rows the log would refuse, one account per log.

Each of these used to stop sync for good: a server that accepts and never answers held a
push for ~300 s; a message bigger than ``max_allowed_packet`` failed every later push; a
gateway row with ``tool_calls`` an object (or ``metadata`` a list) made every pull fail at
the log's door. Now: a bounded wait, and refused rows recorded (``offset.reset``, policy
``rejected``) and shown by ``sync status`` while the rest goes through.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from eventlog.app.gateway import auth, ops, sync
from eventlog.app.gateway.connection import Connection, Timeouts
from eventlog.app.gateway.http_client import HttpRemote, login
from eventlog.app.gateway.store import MySQLSessionStore
from eventlog.app.web.server import Running, gateway
from eventlog.errors import BackendError, ConfigError
from eventlog.events import OffsetReset
from tests.app.gateway.test_sync import device, snapshot
from tests.mysql_helpers import MYSQL_URL, fresh_email, query, requires_mysql

pytestmark = [pytest.mark.mysql, requires_mysql]

FAST = Timeouts(connect=1, read=1, write=1)


@pytest.fixture
def silent():
    """A port that accepts TCP connections (the kernel completes them) and never says a word."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield sock.getsockname()[1]
    sock.close()


def refusals(d) -> list[OffsetReset]:
    return [e for e in d.events() if isinstance(e, OffsetReset) and e.policy == "rejected"]


# --------------------------------------------------------------------------- timeouts


def test_a_direct_sync_to_a_server_that_never_answers_fails_within_the_timeouts(tmp_path, silent):
    with device(str(tmp_path / "d")) as d:
        d.store.add_message("s", "user", "x", message_id="m1")
        t0 = time.monotonic()
        with pytest.raises(BackendError) as e:
            sync.push(d.ws, f"mysql://root@127.0.0.1:{silent}/evlog", "me@example.test", timeouts=FAST)
        assert time.monotonic() - t0 < 8
        assert f"127.0.0.1:{silent}/evlog" in str(e.value)
        d.store.add_message("s", "user", "the workspace is not left locked", message_id="m2")


def test_an_http_sync_to_a_server_that_never_answers_fails_within_the_timeouts(tmp_path, silent):
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="no answer within 1 s"):
        HttpRemote(f"http://127.0.0.1:{silent}", "some-token", timeouts=FAST)
    assert time.monotonic() - t0 < 8


def test_the_timeouts_come_from_options_or_the_environment(monkeypatch, cli_runner, tmp_path, silent):
    monkeypatch.setenv("EVLOG_MYSQL_TIMEOUT", "2.5")
    monkeypatch.setenv("EVLOG_MYSQL_CONNECT_TIMEOUT", "4")
    assert Timeouts.default() == Timeouts(connect=4, read=2.5, write=2.5)
    assert Timeouts.default(1, 7) == Timeouts(connect=1, read=7, write=7)
    monkeypatch.setenv("EVLOG_MYSQL_TIMEOUT", "soon")
    with pytest.raises(ConfigError):
        Timeouts.default()
    monkeypatch.delenv("EVLOG_MYSQL_TIMEOUT")
    from eventlog.cli import cli

    home = str(tmp_path / "cli")
    cli_runner.invoke(cli, ["--home", home, "init"])
    t0 = time.monotonic()
    res = cli_runner.invoke(cli, ["--home", home, "sync", "push", "--rows", "--dsn", f"mysql://root@127.0.0.1:{silent}/x",
                                  "--user", "me@example.test", "--connect-timeout", "1", "--timeout", "1"])
    assert res.exit_code == 3 and "evlog: error:" in res.stderr and time.monotonic() - t0 < 8


# --------------------------------------------------------------------------- rows too big for the server


def server_packet() -> int:
    return int(query("SELECT @@global.max_allowed_packet")[0][0])


def test_a_message_bigger_than_max_allowed_packet_is_refused_recorded_and_the_rest_goes_through(tmp_path):
    """Against the real server limit (MariaDB's default 16 MiB): the old push failed on this forever."""
    packet = server_packet()
    user = fresh_email("big")
    with device(str(tmp_path / "d")) as d:
        d.store.add_message("s", "user", "before", message_id="m1")
        d.store.add_message("s", "user", "y" * (min(packet, 64 << 20) + 4096), message_id="huge")
        d.store.add_message("s", "user", "after", message_id="m3")
        if packet > 64 << 20:  # a server configured far above the default: test the same path at 64 MiB
            real = Connection._connect

            def lower(self):  # noqa: ANN001, ANN202
                c = real(self)
                self.max_packet = 64 << 20
                return c

            Connection._connect = lower  # type: ignore[method-assign]
        try:
            report = d.push(user)
        finally:
            if packet > 64 << 20:
                Connection._connect = real  # type: ignore[method-assign]
        assert report.messages == 2 and len(report.rejected) == 1 and "max_allowed_packet" in report.rejected[0]
        with MySQLSessionStore(MYSQL_URL, user) as web:
            assert [m.id for m in web.history("s")] == ["m1", "m3"]
        got = refusals(d)
        assert len(got) == 1 and "huge" in got[0].reason and got[0].processor.startswith("sync.push:")
        assert d.push(user).batches == 0  # nothing is retried forever
        st = sync.status(d.ws, MYSQL_URL, user)
        assert st.push_rejected == 1 and any("refused" in n for n in st.notes)
        import processors

        row = next(r for r in processors.offsets(d.ws) if r.processor == got[0].processor)
        assert row.lost_records == 1


def test_push_all_sends_a_refused_row_again_once_the_server_takes_it(tmp_path, monkeypatch):
    user = fresh_email("again")
    real = Connection._connect

    def small(self):  # noqa: ANN001, ANN202
        c = real(self)
        self.max_packet = 64 * 1024
        return c

    with device(str(tmp_path / "d")) as d:
        d.store.add_message("s", "user", "z" * 100_000, message_id="big")
        d.store.add_message("s", "user", "small", message_id="small")
        monkeypatch.setattr(Connection, "_connect", small)
        first = d.push(user)
        assert first.messages == 1 and len(first.rejected) == 1
        monkeypatch.setattr(Connection, "_connect", real)
        assert d.push(user).messages == 0
        again = sync.push(d.ws, MYSQL_URL, user, everything=True)
        assert again.messages == 2 and not again.rejected
        with MySQLSessionStore(MYSQL_URL, user) as web:
            assert {m.id for m in web.history("s")} == {"big", "small"}


def test_prepare_refuses_a_register_with_its_messages_and_keeps_statements_under_the_limit():
    from eventlog.app.gateway import rows as R

    reg = R.SessionRow(key="s", title="t" * 5000, deleted=False, version=(1, "o", "r"))
    ok = R.SessionRow(key="ok", deleted=False, version=(1, "o", "r"))
    msgs = [("s", "m1", "user", "x", "", None, {}, (2, "o", "r")), ("ok", "m2", "user", "y" * 900, "", None, {},
                                                                   (2, "o", "r"))] * 3
    got = ops.prepare(7, [reg, ok], msgs, max_packet=4096)
    assert {(r.key, r.message_id) for r in got.rejected} == {("s", None), ("s", "m1")}
    assert got.sessions == 1 and {k for k, _, _ in got.messages} == {"ok"}
    assert all(len(stmt) <= ops.statement_limit(4096) for stmt in got.stmts)


# --------------------------------------------------------------------------- gateway rows the log would refuse


def _seed_bad_rows(user: str) -> int:
    with MySQLSessionStore(MYSQL_URL, user, origin="web") as web:
        web.get_or_create("good", title="fine")
        web.add_message("good", "user", "fine text", message_id="g1")
        web.get_or_create("badmeta", title="metadata will be a list")
        web.add_message("badmeta", "user", "its message is fine", message_id="b1")
        web.add_message("good", "user", "tool calls will be an object", message_id="badcalls")
        web.add_message("good", "user", "extra will be a string", message_id="badextra")
        web.add_message("good", "user", "the role will be refused", message_id="badrole")
        uid = web.user_id
    query("UPDATE gateway_session_messages SET tool_calls = '{\"name\": \"exec\"}' WHERE user_id = %s "
          "AND message_id = 'badcalls'", (uid,))
    query("UPDATE gateway_session_messages SET extra = '\"text\"' WHERE user_id = %s AND message_id = 'badextra'",
          (uid,))
    query("UPDATE gateway_session_messages SET role = 'not a role!' WHERE user_id = %s AND message_id = 'badrole'",
          (uid,))
    query("UPDATE gateway_sessions SET metadata = '[1, 2]' WHERE user_id = %s AND session_key = 'badmeta'", (uid,))
    return uid


@pytest.mark.parametrize("transport", ["dsn", "http"])
def test_gateway_rows_of_the_wrong_shape_are_refused_one_by_one_and_the_pull_goes_on(tmp_path, transport):
    """The regression: the old pull raised InvalidEventError at the log's door, and again on every run."""
    user = fresh_email("shapes")
    uid = _seed_bad_rows(user)
    server = None
    try:
        if transport == "http":
            from eventlog.app.gateway.connection import DSN

            conn = Connection(DSN.parse(MYSQL_URL))
            try:
                query("UPDATE gateway_users SET password_hash = %s WHERE id = %s",
                      (auth.hash_password("pw for shapes"), uid))
            finally:
                conn.close()
            app, sock, url = gateway(MYSQL_URL, port=0)
            server = Running(app, sock, url).start()
        with device(str(tmp_path / "d")) as d:
            if transport == "http":
                login(d.home, server.url, user, "pw for shapes")

                def pull():  # noqa: ANN202
                    r = HttpRemote.open(d.home, server.url)
                    try:
                        return sync.pull(d.ws, remote=r)
                    finally:
                        r.close()

                def status():  # noqa: ANN202
                    r = HttpRemote.open(d.home, server.url)
                    try:
                        return sync.status(d.ws, remote=r)
                    finally:
                        r.close()
            else:
                def pull():  # noqa: ANN202
                    return d.pull(user)

                def status():  # noqa: ANN202
                    return sync.status(d.ws, MYSQL_URL, user)

            report = pull()
            assert len(report.rejected) == 4, report.rejected
            text = " ".join(report.rejected)
            assert "tool_calls is a JSON object" in text and "metadata is a JSON array" in text
            assert "extra is a JSON string" in text and "role" in text
            got = snapshot(d.store)
            assert set(got["good"][2]) == {"g1"} and got["good"][0] == "fine"
            assert set(got["badmeta"][2]) == {"b1"}  # its messages still came; the register did not
            assert pull().events_written == 0  # moved on: nothing retried forever
            st = status()
            assert st.pull_rejected == 4 and any("pull: 4 row(s) refused" in n for n in st.notes)
            query("UPDATE gateway_session_messages SET tool_calls = '[{\"name\": \"exec\"}]' WHERE user_id = %s "
                  "AND message_id = 'badcalls'", (uid,))
            fixed = pull()
            assert fixed.messages == 1 and not fixed.rejected
            assert d.store.history("good")[-1].tool_calls == [{"name": "exec"}]
    finally:
        if server is not None:
            server.stop()


def test_if_the_log_still_refuses_a_planned_event_its_session_is_set_aside_and_the_pull_goes_on(tmp_path,
                                                                                                monkeypatch):
    user = fresh_email("fallback")
    with MySQLSessionStore(MYSQL_URL, user, origin="web") as web:
        web.add_message("role", "user", "the role will be refused at the log's door", message_id="r1")
        web.add_message("extra", "user", "extra will be a string the plan cannot merge", message_id="x1")
        web.add_message("fine", "user", "this one is fine", message_id="f1")
        uid = web.user_id
    query("UPDATE gateway_session_messages SET role = 'not a role!' WHERE user_id = %s AND message_id = 'r1'", (uid,))
    query("UPDATE gateway_session_messages SET extra = '\"text\"' WHERE user_id = %s AND message_id = 'x1'", (uid,))
    monkeypatch.setattr(sync, "screen_page", lambda page: [])  # as if the screening missed every rule
    with device(str(tmp_path / "d")) as d:
        report = d.pull(user)
        kinds = {"refused" if "the log refused an event" in r else "unplannable"
                 for r in report.rejected if "could not be turned into events" in r or "the log refused" in r}
        assert kinds == {"refused", "unplannable"} and len(report.rejected) == 4  # two registers, two messages
        assert [m.id for m in d.store.history("fine")] == ["f1"]
        assert d.pull(user).events_written == 0
        assert refusals(d)


# --------------------------------------------------------------------------- one account per workspace


def test_a_workspace_that_pulled_as_one_user_does_not_push_as_another_by_accident(tmp_path):
    a, b = fresh_email("a"), fresh_email("b")
    with MySQLSessionStore(MYSQL_URL, a) as web:
        web.add_message("private", "user", "a's words", message_id="m1")
    with device(str(tmp_path / "d")) as d:
        d.pull(a)
        with pytest.raises(ConfigError, match="--as-another-user"):
            d.push(b)
        with pytest.raises(ConfigError):
            d.pull(b)
        assert query("SELECT id FROM gateway_users WHERE email = %s", (b,)) == []  # a refused sync created no account
        st = sync.status(d.ws, MYSQL_URL, b)  # reading is harmless: it only says so
        assert any(f"as {a}" in n for n in st.notes)
    with MySQLSessionStore(MYSQL_URL, b) as web_b:
        assert web_b.list() == []


def test_the_cli_reports_refused_rows_in_json(tmp_path, cli_runner, monkeypatch):
    from eventlog.cli import cli

    user = fresh_email("clirej")
    real = Connection._connect

    def small(self):  # noqa: ANN001, ANN202
        c = real(self)
        self.max_packet = 32 * 1024
        return c

    with device(str(tmp_path / "d")) as d:
        d.store.add_message("s", "user", "q" * 50_000, message_id="big")
        home = d.home
    monkeypatch.setattr(Connection, "_connect", small)
    monkeypatch.setenv("EVLOG_MYSQL_DSN", MYSQL_URL)
    res = cli_runner.invoke(cli, ["--home", home, "sync", "push", "--rows", "--user", user, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert len(out["rejected"]) == 1 and "big" in out["rejected"][0]
    res = cli_runner.invoke(cli, ["--home", home, "sync", "status", "--user", user, "--json"])
    assert json.loads(res.stdout)["push_rejected"] == 1
