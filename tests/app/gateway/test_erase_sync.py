"""Erasure reaches the gateway and every synced device (INVARIANTS I25, I26).

Runs against the in-memory gateway and, when ``EVLOG_TEST_MYSQL_URL`` is set, the real
MariaDB/MySQL server: device A erases with the gateway named, the gateway's rows are gone
(a dump of its tables holds no byte of it), device B applies the same erasure on its next
pull, and neither a push from B nor a later pull brings anything back.
"""

from __future__ import annotations

import json
import os

import pytest

from eventlog.app import replay
from eventlog.app.erase import Target, erase
from eventlog.app.gateway import sync
from eventlog.app.gateway.memory_store import MemoryGateway
from eventlog.app.gateway.sync_state import device_origin
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import ErasureRecorded, MessageAppended, SessionCreated
from tests.mysql_helpers import MYSQL_URL, fresh_email, query, requires_mysql

SECRET = "TANGERINE-WALRUS-9083"


class _Memory:
    def __init__(self) -> None:
        self.gw = MemoryGateway("erase")

    def remote(self, user: str):  # noqa: ANN201
        return self.gw.remote(user)

    def store(self, user: str, **kw):  # noqa: ANN003, ANN201
        return self.gw.store(user, **kw)

    def dump(self, user: str) -> str:
        with self.gw.lock:
            return repr(self.gw._tables) + repr(self.gw.erasures)  # noqa: SLF001 - the whole in-memory database


class _MySQL:
    def remote(self, user: str):  # noqa: ANN201
        return sync.Gateway(MYSQL_URL, user)

    def store(self, user: str, **kw):  # noqa: ANN003, ANN201
        from eventlog.app.gateway.store import MySQLSessionStore

        return MySQLSessionStore(MYSQL_URL, user, **kw)

    def dump(self, user: str) -> str:
        """Every row of the user's in every table (tests share the database and are kept apart by users)."""
        [(uid,)] = query("SELECT id FROM gateway_users WHERE email = %s", (user,))
        out = []
        for (table,) in query("SHOW TABLES"):
            cols = {r[0] for r in query(f"SHOW COLUMNS FROM `{table}`")}  # noqa: S608 - names from SHOW TABLES
            if "user_id" in cols:
                out.append(query(f"SELECT * FROM `{table}` WHERE user_id = %s", (uid,)))  # noqa: S608
        return repr(out)


@pytest.fixture(params=["memory", pytest.param("mysql", marks=[pytest.mark.mysql, requires_mysql])])
def gateway(request):
    return _Memory() if request.param == "memory" else _MySQL()


def _device(home: str) -> Workspace:
    init_workspace(home)
    return Workspace.open(home, writable=True)


def _hits(home: str, secret: str = SECRET) -> list[str]:
    out = []
    for root, _d, files in os.walk(home):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                if secret.encode() in f.read():
                    out.append(os.path.relpath(os.path.join(root, name), home))
    return out


def _sync(ws: Workspace, gateway, user: str, how) -> None:  # noqa: ANN001
    remote = gateway.remote(user)
    try:
        how(ws, remote=remote)
    finally:
        remote.close()


def _secret_session(ws: Workspace, secret: str = SECRET) -> None:
    ws.append([SessionCreated(session_key="plans", title="plans"),
               MessageAppended(session_key="plans", message_id="m1", role="user", content=f"the vault code is {secret}"),
               MessageAppended(session_key="plans", message_id="m2", role="assistant", content="Noted, I will keep it."),
               SessionCreated(session_key="other", title="other"),
               MessageAppended(session_key="other", message_id="o1", role="user", content="keep this one")])


def test_an_erase_removes_the_rows_from_the_gateway_and_a_synced_device_applies_it(tmp_path, gateway):
    user = fresh_email("erase")
    a, b = _device(str(tmp_path / "a")), _device(str(tmp_path / "b"))
    try:
        _secret_session(a)
        _sync(a, gateway, user, sync.push)
        _sync(b, gateway, user, sync.pull)
        b.flush()
        assert SECRET in gateway.dump(user) and _hits(b.home), "the fixture did not sync the secret"
        origin_before = device_origin(a.log)

        remote = gateway.remote(user)
        try:
            dry = erase(a, Target("session", "plans"), dry_run=True, remote=remote)
            assert dry.gateway.get("gateway_sessions") == 1 and dry.gateway.get("gateway_session_messages") == 2
            assert SECRET in gateway.dump(user), "a dry run deleted gateway rows"
            report = erase(a, Target("session", "plans"), remote=remote)
        finally:
            remote.close()
        assert report.gateway == dry.gateway
        assert SECRET not in gateway.dump(user), "the gateway still holds the erased text"
        assert device_origin(a.log) == origin_before, "erasing the first line changed the device's name"

        _sync(b, gateway, user, sync.pull)  # B applies the erasure
        b.flush()
        assert _hits(b.home) == [], "the synced device kept the erased text"
        assert "plans" not in b.sessions.index and "other" in b.sessions.index
        _sync(b, gateway, user, sync.push)  # nothing erased goes back
        _sync(a, gateway, user, sync.pull)
        _sync(b, gateway, user, sync.pull)
        a.flush()
        b.flush()
        assert SECRET not in gateway.dump(user)
        assert _hits(a.home) == [] and _hits(b.home) == []
        applied = [e for e in b.log.read() if isinstance(e, ErasureRecorded)]
        assert len(applied) == 1, "the erasure was applied more than once"
        for ws in (a, b):
            assert [p for p in ws.log.verify() if p.damaged] == []
            assert replay.check(ws).clean
    finally:
        a.close()
        b.close()


def test_a_device_that_never_held_the_erased_session_records_it_once_and_moves_on(tmp_path, gateway):
    user = fresh_email("erase")
    a, c = _device(str(tmp_path / "a")), _device(str(tmp_path / "c"))
    try:
        _secret_session(a)
        _sync(a, gateway, user, sync.push)
        remote = gateway.remote(user)
        try:
            erase(a, Target("session", "plans"), remote=remote)
        finally:
            remote.close()
        _sync(c, gateway, user, sync.pull)  # a new device: the rows are gone, the erasure is recorded as applied
        _sync(c, gateway, user, sync.pull)
        recorded = [e for e in c.log.read() if isinstance(e, ErasureRecorded)]
        assert len(recorded) == 1 and recorded[0].seqs == []
        assert "plans" not in c.sessions.index and "other" in c.sessions.index
    finally:
        a.close()
        c.close()


def test_an_erase_killed_after_the_gateway_committed_is_finished_by_the_devices_next_sync(tmp_path, monkeypatch):
    from eventlog import erasure

    gateway = _Memory()
    user = fresh_email("erase")
    a = _device(str(tmp_path / "a"))
    try:
        _secret_session(a)
        _sync(a, gateway, user, sync.push)

        def killed(*_a, **_k):  # noqa: ANN002, ANN003
            raise KeyboardInterrupt("killed between the gateway's commit and the local one")

        monkeypatch.setattr(erasure, "commit", killed)
        with pytest.raises(KeyboardInterrupt):
            erase(a, Target("session", "plans"), remote=gateway.remote(user))
        monkeypatch.undo()
        assert SECRET not in gateway.dump(user) and _hits(a.home), "the test did not stop between the two commits"
        _sync(a, gateway, user, sync.pull)
        a.flush()
        assert _hits(a.home) == []
        assert [p for p in a.log.verify() if p.damaged] == []
    finally:
        a.close()


def test_verify_reports_an_interrupted_erase_as_pending_not_as_damage(tmp_path):
    from eventlog.log import Log

    d = str(tmp_path / "log")
    with Log.open(d, writable=True, create=True) as log:
        log.append(MessageAppended(session_key="s", message_id="m", role="user", content="x"))
    with open(os.path.join(d, "ERASING"), "wb") as f:
        f.write(b'{"erasure_seq":9,"erasure_id":"x"}')
    problems = Log.open(d).verify()
    assert [(p.kind, p.damaged) for p in problems] == [("erasure-pending", False)]
    with Log.open(d, writable=True) as log:
        from eventlog import erasure

        assert erasure.resume(log) == 0  # its erasure never reached the log: the old state stands
    assert Log.open(d).verify() == []


def test_a_local_erase_is_not_undone_by_a_pull_of_rows_the_gateway_still_holds(tmp_path, gateway):
    secret = "LOCAL-ONLY-" + fresh_email("s").split("@")[0]  # its own: these rows stay at the gateway on purpose
    user = fresh_email("erase")
    a = _device(str(tmp_path / "a"))
    try:
        _secret_session(a, secret)
        _sync(a, gateway, user, sync.push)
        report = erase(a, Target("session", "plans"))  # no gateway named: its rows stay there
        assert any("--dsn" in n for n in report.notes), "the user was not told the gateway keeps its copy"
        assert secret in gateway.dump(user)
        web = gateway.store(user, origin="web")
        try:
            web.update_message("plans", "m1", f"edited on the web, still {secret}")  # a change a pull would fetch
            web.add_message("plans", "user", f"and a new line about {secret}", message_id="m3")
        finally:
            web.close()
        _sync(a, gateway, user, sync.pull)
        a.flush()
        assert _hits(a.home, secret) == [] and "plans" not in a.sessions.index
    finally:
        a.close()


@pytest.mark.mysql
@requires_mysql
def test_the_erase_command_with_dsn_purges_the_gateway_and_prints_its_rows(tmp_path, cli_runner):
    from eventlog.cli import cli

    gateway, user = _MySQL(), fresh_email("erase")
    a = _device(str(tmp_path / "a"))
    try:
        _secret_session(a)
        _sync(a, gateway, user, sync.push)
    finally:
        a.close()
    args = ["--home", a.home, "erase", "--session", "plans", "--dsn", MYSQL_URL, "--user", user, "--json"]
    out = cli_runner.invoke(cli, [*args, "--dry-run"])
    assert out.exit_code == 0, out.stderr
    assert {"place": "gateway", "table": "gateway_session_messages", "rows": 2} in [json.loads(x) for x in out.stdout.splitlines()]
    assert SECRET in gateway.dump(user)
    out = cli_runner.invoke(cli, [*args, "--yes"])
    assert out.exit_code == 0, out.stderr
    assert SECRET not in gateway.dump(user) and _hits(a.home) == []
