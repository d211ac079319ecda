"""Sync through the gateway's HTTP API: per-user tokens, the same rules and positions as direct sync.

A real server (``evlog web --gateway``'s app under uvicorn, in a thread or as separate
processes) in front of the test database; devices are workspaces that log in with
``evlog sync login`` and sync with ``--gateway URL``. The last-write-wins machinery of
``tests/app/gateway/test_sync.py`` is reused to check that both transports give the same results.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.app.gateway import auth, sync
from eventlog.app.gateway import wire as W
from eventlog.app.gateway.credentials import credentials_path, load_token
from eventlog.app.gateway.http_client import AuthError, GatewayURL, HttpRemote, login, logout
from eventlog.app.gateway.store import MySQLSessionStore
from eventlog.app.web.server import Running, gateway
from eventlog.errors import ConfigError
from eventlog.events import SyncPulled, SyncPushed
from tests.app.gateway.test_sync import (
    Clock,
    Device,
    Model,
    _contents,
    _write,
    clocks_of_2030_are_not_clamped,
    converge,
    device,
    op,
    snapshot,
)
from tests.mysql_helpers import MYSQL_URL, fresh_email, query, requires_mysql

pytestmark = [pytest.mark.mysql, requires_mysql]
__all__ = ["clocks_of_2030_are_not_clamped"]  # an autouse fixture, imported to apply here

PASSWORD = "sync password 42"


@pytest.fixture(scope="module")
def server():
    app, sock, url = gateway(MYSQL_URL, port=0, policy=auth.LoginPolicy(per_email=50, per_client=10_000))
    with Running(app, sock, url) as running:
        yield running


def account(label: str = "dev") -> str:
    email = fresh_email(label)
    from eventlog.app.gateway.connection import DSN, Connection

    conn = Connection(DSN.parse(MYSQL_URL))
    try:
        auth.add_user(conn, email, PASSWORD)
    finally:
        conn.close()
    return email


class HttpDevice(Device):
    """A device that syncs through the HTTP API with its own token."""

    url: str = ""

    def remote(self) -> HttpRemote:
        return HttpRemote.open(self.home, self.url)

    def push(self, user: str | None = None, **kw) -> sync.SyncReport:
        r = self.remote()
        try:
            return sync.push(self.ws, remote=r, **kw)
        finally:
            r.close()

    def pull(self, user: str | None = None, **kw) -> sync.SyncReport:
        r = self.remote()
        try:
            return sync.pull(self.ws, remote=r, **kw)
        finally:
            r.close()

    def status(self) -> sync.StatusReport:
        r = self.remote()
        try:
            return sync.status(self.ws, remote=r)
        finally:
            r.close()


def http_device(d: Device, url: str, email: str) -> HttpDevice:
    login(d.home, url, email, PASSWORD)
    h = HttpDevice(d.home, d.ws, d.store)
    h.url = url
    return h


# --------------------------------------------------------------------------- logging in


def test_login_keeps_the_token_in_a_0600_file_and_never_prints_or_logs_it(server, tmp_path, cli_runner):
    from eventlog.cli import cli

    email = account()
    home = str(tmp_path / "dev")
    assert cli_runner.invoke(cli, ["--home", home, "init"]).exit_code == 0
    res = cli_runner.invoke(cli, ["--home", home, "sync", "login", "--gateway", server.url, "--user", email,
                                  "--password-stdin", "--json"], input=PASSWORD + "\n")
    assert res.exit_code == 0, res.output
    path = credentials_path(home)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    user, token = load_token(home, GatewayURL.parse(server.url).base)
    assert user == email and len(token) >= 40
    assert token not in res.output and token not in res.stderr and json.loads(res.stdout)["user"] == email
    res = cli_runner.invoke(cli, ["--home", home, "sync", "push", "--rows", "--gateway", server.url, "--json"])
    assert res.exit_code == 0 and token not in res.output
    res = cli_runner.invoke(cli, ["--home", home, "sync", "status", "--gateway", server.url])
    assert res.exit_code == 0 and token not in res.output
    logged = b""
    for name in os.listdir(os.path.join(home, "log")):
        with open(os.path.join(home, "log", name), "rb") as f:
            logged += f.read()
    assert token.encode() not in logged and PASSWORD.encode() not in logged
    os.chmod(path, 0o644)
    res = cli_runner.invoke(cli, ["--home", home, "sync", "push", "--rows", "--gateway", server.url])
    assert res.exit_code == 3 and "may be read by other users" in res.stderr


def test_a_wrong_password_gets_no_token_and_the_same_answer_as_an_unknown_user(server, tmp_path):
    email = account()
    with pytest.raises(auth.AuthError) as wrong:
        login(str(tmp_path), server.url, email, "nope")
    with pytest.raises(auth.AuthError) as unknown:
        login(str(tmp_path), server.url, fresh_email("ghost"), "nope")
    assert str(wrong.value).replace(server.url.rstrip("/"), "") == str(unknown.value).replace(server.url.rstrip("/"), "")
    assert not os.path.exists(credentials_path(str(tmp_path)))


def test_logout_revokes_the_token_on_the_server(server, tmp_path):
    email = account()
    home = str(tmp_path)
    login(home, server.url, email, PASSWORD)
    _, token = load_token(home, GatewayURL.parse(server.url).base)
    assert logout(home, server.url) is True
    assert load_token(home, GatewayURL.parse(server.url).base) is None
    with pytest.raises(AuthError):
        HttpRemote(server.url, token)


def test_plain_http_is_refused_for_a_remote_host(monkeypatch):
    monkeypatch.delenv("EVLOG_GATEWAY_ALLOW_HTTP", raising=False)
    with pytest.raises(ConfigError, match="https"):
        GatewayURL.parse("http://gateway.example:8080")
    assert GatewayURL.parse("https://gateway.example/evlog/").base == "https://gateway.example:443/evlog"
    assert GatewayURL.parse("http://127.0.0.1:9").base == "http://127.0.0.1:9"
    with pytest.raises(ConfigError):
        GatewayURL.parse("https://user:pw@gateway.example")


# --------------------------------------------------------------------------- the API's guard


def _raw(server, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    import http.client

    g = GatewayURL.parse(server.url)
    conn = http.client.HTTPConnection(g.host, g.port, timeout=10)
    try:
        conn.request(method, W.API_PREFIX + path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


@pytest.mark.parametrize("method,path", [("GET", "/me"), ("POST", "/push"), ("POST", "/changes"),
                                         ("POST", "/pending"), ("POST", "/logout")])
def test_every_api_route_needs_a_live_sync_token_and_ignores_cookies(server, method, path):
    body = b"{}" if method == "POST" else None
    assert _raw(server, method, path, body)[0] == 401
    assert _raw(server, method, path, body, {"Authorization": "Bearer not-a-token"})[0] == 401
    email = account()
    from eventlog.app.gateway.connection import DSN, Connection

    conn = Connection(DSN.parse(MYSQL_URL))
    try:
        _, web_token = auth.login(conn, email, PASSWORD, kind="web")
    finally:
        conn.close()
    assert _raw(server, method, path, body, {"Cookie": f"evlog_session={web_token}"})[0] == 401
    assert _raw(server, method, path, body, {"Authorization": f"Bearer {web_token}"})[0] == 401


def test_bodies_of_the_wrong_shape_or_size_are_refused_before_the_database(server, tmp_path):
    email = account()
    login(str(tmp_path), server.url, email, PASSWORD)
    _, token = load_token(str(tmp_path), GatewayURL.parse(server.url).base)
    auth_h = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    assert _raw(server, "POST", "/push", b"not json", auth_h)[0] == 400
    bad = {"sessions": [], "messages": [["s", "m", "user", "x", "", {"an": "object"}, {}, [1, "o", "r"]]]}
    status, body = _raw(server, "POST", "/push", json.dumps(bad).encode(), auth_h)
    assert status == 400 and b"messages[0][5]" in body  # tool_calls, the sixth field
    assert _raw(server, "POST", "/changes", b'{"after": -1}', auth_h)[0] == 400
    huge = b'{"sessions": [], "messages": [], "pad": "' + b"x" * (40 * 1024 * 1024) + b'"}'
    assert _raw(server, "POST", "/push", huge, auth_h)[0] == 413
    assert query("SELECT COUNT(*) FROM gateway_session_messages m JOIN gateway_users u ON u.id = m.user_id "
                 "WHERE u.email = %s", (email,))[0][0] == 0


# --------------------------------------------------------------------------- sync through HTTP


@pytest.fixture
def http_devices(server, tmp_path):
    """Two devices of one user syncing over HTTP, and that user's web store."""
    email = account("owner")
    with device(str(tmp_path / "laptop")) as a, device(str(tmp_path / "desktop")) as b:
        web = MySQLSessionStore(MYSQL_URL, email, origin="web")
        try:
            yield http_device(a, server.url, email), http_device(b, server.url, email), web, email
        finally:
            web.close()


def test_two_devices_and_the_web_converge_through_the_http_api(http_devices):
    a, b, web, email = http_devices
    a.store.get_or_create("s1", title="planning", metadata={"project": "evlog"})
    a.store.add_message("s1", "user", "hello from the laptop", message_id="m1")
    a.push()
    b.pull()
    assert snapshot(b.store) == snapshot(a.store)
    b.store.add_message("s1", "assistant", "answer from the desktop", message_id="m2")
    b.push()
    web.add_message("s1", "user", "typed in the browser", message_id="m3")
    web.update_message("s1", "m1", "hello (fixed on the web)")
    a.store.add_message("s2", "user", "another topic")
    converge(email, a, b)
    converge(email, a, b)
    assert snapshot(a.store) == snapshot(b.store) == snapshot(web)
    assert snapshot(web)["s1"][2]["m1"][1] == "hello (fixed on the web)"
    st = a.status()
    assert (st.push_pending_events, st.pull_pending_sessions, st.pull_pending_messages) == (0, 0, 0)


def test_http_sync_records_the_same_positions_as_direct_sync(http_devices):
    """The target is the database the server serves, so a device can move from --dsn to --gateway."""
    a, b, web, email = http_devices
    a.store.add_message("s", "user", "via the database", message_id="m1")
    direct = sync.push(a.ws, MYSQL_URL, email)
    a.store.add_message("s", "user", "via http", message_id="m2")
    over_http = a.push()
    assert over_http.target == direct.target and over_http.position_before == direct.position_after
    assert over_http.messages == 1  # only what is new since the direct push
    pushed = [e for e in a.events() if isinstance(e, SyncPushed)]
    assert {(e.target, e.user, e.epoch) for e in pushed} == {(direct.target, email, pushed[0].epoch)}
    web.add_message("s", "user", "from the web", message_id="m3")
    assert a.pull().messages == 1
    assert sync.pull(a.ws, MYSQL_URL, email).messages == 0  # the same position: nothing new
    assert [e.change_seq for e in a.events() if isinstance(e, SyncPulled)]


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op, max_size=15), final=st.sampled_from(["push then pull", "pull then push"]))
def test_last_write_wins_converges_through_http_for_any_interleaving(server, ops, final):
    clock = Clock()
    email = account("lww")
    model = Model()
    with tempfile.TemporaryDirectory() as tmp, device(os.path.join(tmp, "desk"), clock) as d, \
            MySQLSessionStore(MYSQL_URL, email, origin="web", clock=clock) as web:
        desk = http_device(d, server.url, email)
        for n, o in enumerate(ops):
            now = clock.tick(o[4])
            if o[0] == "push":
                desk.push()
            elif o[0] == "pull":
                desk.pull()
            else:
                _write(o, desk.store if o[1] == "desk" else web, desk, model, now, n)
        clock.tick()
        steps = [desk.push, desk.pull] if final == "push then pull" else [desk.pull, desk.push]
        for step in steps:
            step()
        assert _contents(desk.store) == _contents(web) == model.expected()


# --------------------------------------------------------------------------- isolation by token


def test_a_token_reads_and_writes_only_its_own_users_rows(server, tmp_path):
    owner, stranger = account("owner"), account("stranger")
    with MySQLSessionStore(MYSQL_URL, owner) as o:
        o.get_or_create("same-key", title="owner's")
        o.add_message("same-key", "user", "owner's secret", message_id="m1")
    with device(str(tmp_path / "s")) as d:
        s = http_device(d, server.url, stranger)
        assert s.pull().messages == 0 and s.store.list() == []
        assert s.status().pull_pending_messages == 0
        s.store.get_or_create("same-key", title="stranger's")
        s.store.add_message("same-key", "user", "stranger's text", message_id="m1")
        assert s.push().messages == 1
        with pytest.raises(ConfigError, match="logged in"):
            HttpRemote.open(s.home, server.url, user=owner)  # naming another user does not make it theirs
        r = s.remote()
        try:
            page = r.changes(0, [], 1000)
            assert {m.content for m in page.messages} == {"stranger's text"}
        finally:
            r.close()
    with MySQLSessionStore(MYSQL_URL, owner) as o:
        assert o.get("same-key").title == "owner's"
        assert [m.content for m in o.history("same-key")] == ["owner's secret"]


def test_a_workspace_that_synced_as_one_user_refuses_to_push_as_another(server, tmp_path):
    first, second = account("first"), account("second")
    with device(str(tmp_path / "d")) as d:
        one = http_device(d, server.url, first)
        d.store.add_message("s", "user", "first's words", message_id="m1")
        one.push()
        two = http_device(d, server.url, second)
        with pytest.raises(ConfigError, match="as another user|as " + re.escape(first)):
            two.push()
        with pytest.raises(ConfigError):
            two.pull()
        assert two.push(allow_other_user=True).messages == 1  # on purpose
    with MySQLSessionStore(MYSQL_URL, second) as s:
        assert [m.content for m in s.history("s")] == ["first's words"]


# --------------------------------------------------------------------------- several processes


def _spawn(home: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "EVLOG_MYSQL_DSN": MYSQL_URL}
    evlog = os.path.join(os.path.dirname(sys.executable), "evlog")
    proc = subprocess.Popen([evlog, "--home", home, "web", "--gateway", "--port", "0", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"the gateway process did not start: {err}")
    return proc, json.loads(line)["url"]


@pytest.mark.slow
def test_two_gateway_processes_and_two_devices_with_interleaved_writes_converge(tmp_path):
    email = account("team")
    procs = []
    try:
        p1, url1 = _spawn(str(tmp_path))
        procs.append(p1)
        p2, url2 = _spawn(str(tmp_path))
        procs.append(p2)
        assert url1 != url2
        with device(str(tmp_path / "a")) as da, device(str(tmp_path / "b")) as db, \
                MySQLSessionStore(MYSQL_URL, email, origin="web") as web:
            a, b = http_device(da, url1, email), http_device(db, url2, email)
            for i in range(12):
                a.store.add_message(f"s{i % 3}", "user", f"a{i}", message_id=f"a{i}")
                b.store.add_message(f"s{i % 3}", "assistant", f"b{i}", message_id=f"b{i}")
                if i % 4 == 1:
                    web.add_message(f"s{i % 3}", "user", f"w{i}", message_id=f"w{i}")
                if i % 3 == 0:
                    a.push()
                    b.pull()
                if i % 3 == 1:
                    b.push()
                    a.pull()
                if i == 6:
                    b.store.update("s0", title="renamed on b")
                    a.store.delete("s2")
            for _ in range(2):
                a.push()
                b.push()
                a.pull()
                b.pull()
            final = snapshot(web)
            assert snapshot(a.store) == snapshot(b.store) == final
            assert final["s0"][0] == "renamed on b"
            assert {"a8", "a11"} <= set(final["s2"][2]) and not {"a2", "a5"} & set(final["s2"][2])
    finally:
        for p in procs:
            p.terminate()
            p.communicate(timeout=10)  # waits, and closes the pipes
