"""Erasure over the HTTP gateway (INVARIANTS I25, I26): a device that syncs only over HTTP erases and applies.

A real server (``evlog web --gateway``'s app under uvicorn, in a thread, as in
``tests/app/gateway/test_sync_http.py``) in front of the test database. Device A, logged in with
``evlog sync login``, runs ``evlog erase --text X --yes``: the gateway's rows go first
(``POST /erase``), then A's log; device B, which syncs only over HTTP, applies the erasure
(``POST /erasures``) on its next pull or push. A forensic byte search of the gateway's
tables and of B's workspace then finds nothing. Without a token, or with another user's,
nothing of the user's is erased.
"""

from __future__ import annotations

import json

import pytest

from eventlog.app import replay
from eventlog.app.gateway import auth, sync
from eventlog.app.gateway import wire as W
from eventlog.app.gateway.credentials import save_token
from eventlog.app.gateway.http_client import Client, HttpRemote, login
from eventlog.app.web.server import Running, gateway
from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.errors import BackendError
from eventlog.events import ErasureRecorded
from tests.app.gateway.test_erase_sync import SECRET, _device, _hits, _MySQL, _secret_session
from tests.app.gateway.test_sync_http import PASSWORD, account
from tests.mysql_helpers import MYSQL_URL, query, requires_mysql

pytestmark = [pytest.mark.mysql, requires_mysql]


@pytest.fixture(scope="module")
def server():
    app, sock, url = gateway(MYSQL_URL, port=0, policy=auth.LoginPolicy(per_email=50, per_client=10_000))
    with Running(app, sock, url) as running:
        yield running


def _http(ws: Workspace, url: str, how) -> None:  # noqa: ANN001
    remote = HttpRemote.open(ws.home, url)
    try:
        how(ws, remote=remote)
    finally:
        remote.close()


def _two_devices(tmp_path, url: str) -> tuple[str, Workspace, Workspace]:  # noqa: ANN001
    email = account("erase-http")
    a, b = _device(str(tmp_path / "a")), _device(str(tmp_path / "b"))
    login(a.home, url, email, PASSWORD)
    login(b.home, url, email, PASSWORD)
    _secret_session(a)
    _http(a, url, sync.push)
    _http(b, url, sync.pull)
    b.flush()
    assert SECRET in _MySQL().dump(email) and _hits(b.home), "the fixture did not sync the secret"
    return email, a, b


def _erase_cli(cli_runner, home: str, *args: str):  # noqa: ANN001, ANN202
    return cli_runner.invoke(cli, ["--home", home, "erase", *args], catch_exceptions=False)


def test_erase_on_a_device_logged_in_over_http_removes_the_text_from_the_gateway_and_the_other_device(
        server, tmp_path, cli_runner):
    email, a, b = _two_devices(tmp_path, server.url)
    a.close()
    try:
        dry = _erase_cli(cli_runner, a.home, "--text", SECRET, "--dry-run", "--json")
        assert dry.exit_code == 0, dry.output
        places = [json.loads(line) for line in dry.stdout.splitlines()]
        assert {"place": "gateway", "table": "gateway_session_messages", "rows": 1} in places
        assert SECRET in _MySQL().dump(email), "a dry run deleted gateway rows"

        res = _erase_cli(cli_runner, a.home, "--text", SECRET, "--yes")
        assert res.exit_code == 0, res.output
        assert SECRET not in _MySQL().dump(email), "the gateway still holds the erased text"
        assert "keeps its copy" not in res.stderr

        _http(b, server.url, sync.pull)  # B applies the erasure on its next pull
        b.flush()
        assert _hits(b.home) == [], "the device that syncs over HTTP kept the erased text"
        assert "other" in b.sessions.index
        _http(b, server.url, sync.push)  # nothing erased goes back
        _http(b, server.url, sync.pull)
        assert SECRET not in _MySQL().dump(email)
        assert len([e for e in b.log.read() if isinstance(e, ErasureRecorded)]) == 1, "applied more than once"
        with Workspace.open(a.home, writable=True) as wa:
            _http(wa, server.url, sync.pull)  # A does not apply its own erasure a second time
            assert len([e for e in wa.log.read() if isinstance(e, ErasureRecorded)]) == 1
            assert _hits(wa.home) == []
            for ws in (wa, b):
                assert [p for p in ws.log.verify() if p.damaged] == []
                assert replay.check(ws).clean
    finally:
        b.close()


def test_a_device_that_was_offline_during_the_erase_applies_it_on_its_next_push(server, tmp_path):
    from eventlog.app.erase import Target, erase

    email, a, b = _two_devices(tmp_path, server.url)
    try:
        remote = HttpRemote.open(a.home, server.url)
        try:
            report = erase(a, Target("session", "plans"), remote=remote)
        finally:
            remote.close()
        assert report.gateway == {"gateway_sessions": 1, "gateway_session_messages": 2}
        assert SECRET not in _MySQL().dump(email)
        _http(b, server.url, sync.push)  # B's first contact since the erase is a push: it applies first
        b.flush()
        assert _hits(b.home) == []
        assert "plans" not in b.sessions.index and "other" in b.sessions.index
        assert SECRET not in _MySQL().dump(email), "B pushed an erased row back"
    finally:
        a.close()
        b.close()


def test_an_erase_whose_gateway_does_not_answer_changes_nothing_locally(server, tmp_path, cli_runner):
    email, a, b = _two_devices(tmp_path, server.url)
    b.close()
    a.close()
    save_token(a.home, "http://127.0.0.1:9", email, "x" * 40)  # a second login, to a gateway that is away
    res = cli_runner.invoke(cli, ["--home", a.home, "erase", "--text", SECRET, "--yes", "--gateway",
                                  "http://127.0.0.1:9"])
    assert res.exit_code != 0
    assert "nothing was erased" in res.output
    assert _hits(a.home), "a failed gateway erase changed the local log"
    res = cli_runner.invoke(cli, ["--home", a.home, "erase", "--text", SECRET, "--yes"])
    assert res.exit_code != 0 and "--gateway" in res.output, "two logins and none named must be refused"
    res = _erase_cli(cli_runner, a.home, "--text", SECRET, "--yes", "--local-only")
    assert res.exit_code == 0, res.output
    assert _hits(a.home) == [] and SECRET in _MySQL().dump(email), "--local-only must not touch the gateway"
    assert "keeps its copy" in res.stderr


def _erase_body(key: str, mid: str) -> bytes:
    from eventlog.erasure import ref_hash

    return json.dumps({"erasure_id": "e" * 32, "origin": "attacker", "sessions": [key], "messages": [[key, mid]],
                       "refs": [ref_hash("session", key)], "needles": []}).encode()


def test_an_unauthenticated_or_other_users_request_cannot_erase(server, tmp_path):
    email, a, b = _two_devices(tmp_path, server.url)
    a.close()
    b.close()
    before = _MySQL().dump(email)
    anonymous = Client(server.url)
    try:
        for path in ("/erase", "/erasures"):
            with pytest.raises(auth.AuthError):
                anonymous.request("POST", path, _erase_body("plans", "m1"))
    finally:
        anonymous.close()
    forged = Client(server.url, token="not-a-token-" + "x" * 30)
    try:
        with pytest.raises(auth.AuthError):
            forged.request("POST", "/erase", _erase_body("plans", "m1"))
    finally:
        forged.close()

    other = account("erase-other")
    got = login(str(tmp_path / "c"), server.url, other, PASSWORD)
    intruder = Client(server.url, token=got.token)
    try:
        res = intruder.request("POST", "/erase", _erase_body("plans", "m1"), W.EraseResult)
        assert res.rows == {}, "another user's request counted this user's rows"
        listed = intruder.request("POST", "/erasures", b'{"after": 0}', W.ErasuresResult)
        assert [e.origin for e in listed.erasures] == ["attacker"]
    finally:
        intruder.close()
    assert _MySQL().dump(email) == before, "another user's token erased this user's rows"
    owner = HttpRemote.open(a.home, server.url)
    try:
        from eventlog.app.gateway.erasure import erasures_after

        assert erasures_after(owner, 0) == [], "the owner sees another user's erasure"
    finally:
        owner.close()
    [(n,)] = query("SELECT COUNT(*) FROM gateway_erasures e JOIN gateway_users u ON u.id = e.user_id "
                   "WHERE u.email = %s", (email,))
    assert n == 0


def test_an_erase_request_sent_twice_is_recorded_once(server, tmp_path):
    email, a, b = _two_devices(tmp_path, server.url)
    b.close()
    try:
        remote = HttpRemote.open(a.home, server.url)
        try:
            body = _erase_body("plans", "m1")
            first = remote.client.request("POST", "/erase", body, W.EraseResult)
            again = remote.client.request("POST", "/erase", body, W.EraseResult)
        finally:
            remote.close()
        assert first.id == again.id and first.rows and again.rows == {}
        [(n,)] = query("SELECT COUNT(*) FROM gateway_erasures e JOIN gateway_users u ON u.id = e.user_id "
                       "WHERE u.email = %s", (email,))
        assert n == 1
    finally:
        a.close()


def test_a_bad_erase_body_is_refused_before_the_database(server, tmp_path):
    email = account("erase-bad")
    got = login(str(tmp_path / "c"), server.url, email, PASSWORD)
    c = Client(server.url, token=got.token)
    try:
        for body in (b'{"erasure_id": 1}', b'{"erasure_id": "", "origin": "", "sessions": [], "messages": [], '
                                          b'"refs": []}', b"[" * 5000):
            with pytest.raises(BackendError, match="HTTP 400"):
                c.request("POST", "/erase", body)
    finally:
        c.close()


def test_a_device_still_syncs_with_an_older_server_without_erasures_and_erase_says_why_it_stops(tmp_path, monkeypatch,
                                                                                                cli_runner):
    from eventlog.app.gateway.http_api import SyncAPI

    routes = SyncAPI.routes
    monkeypatch.setattr(SyncAPI, "routes", lambda self: [r for r in routes(self) if "/eras" not in r.path])
    app, sock, url = gateway(MYSQL_URL, port=0, policy=auth.LoginPolicy(per_email=50, per_client=10_000))
    with Running(app, sock, url) as old:
        email, a, b = _two_devices(tmp_path, old.url)  # push and pull work: the device finds no erasures there
        a.close()
        b.close()
        res = cli_runner.invoke(cli, ["--home", a.home, "erase", "--text", SECRET, "--yes"])
        assert res.exit_code != 0
        assert "does not relay erasures" in res.output and "nothing was erased" in res.output
        assert _hits(a.home) and SECRET in _MySQL().dump(email)
