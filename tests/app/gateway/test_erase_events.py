"""Erasure reaches the gateway's event log (issue 22): ``evlog erase`` with a gateway empties the erased events.

On the real MariaDB/MySQL server (``EVLOG_TEST_MYSQL_URL``), erasing directly and over HTTP: an owner's device pushes a session
of a shared project through the event store, a second device of the owner and a teammate's
device pull it; the owner erases the session with the gateway named. Afterwards no gateway table holds a byte of the erased text, a new device pulls
none of it, and the devices that still hold it push nothing of it back.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from eventlog.app.erase import Target, erase, origin_keys
from eventlog.app.gateway import sync as row_sync
from eventlog.app.gateway.erasure import EVENTS_EMPTIED
from eventlog.app.gateway.event_store import MySQLEventStore
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended, SessionCreated
from eventlog.replication import sync
from tests.app.gateway.test_sync_http import PASSWORD, account
from tests.mysql_helpers import MYSQL_URL, fresh_email, query, requires_mysql

pytestmark = [pytest.mark.mysql, requires_mysql]

PROJECT = "/home/team/repo"
TEXT_TYPES = ("char", "varchar", "text", "tinytext", "mediumtext", "longtext", "blob", "tinyblob", "mediumblob",
              "longblob", "json", "binary", "varbinary")


def _device(root: object, name: str) -> Workspace:
    home = os.path.join(str(root), name)
    init_workspace(home)
    return Workspace.open(home, writable=True)


def _hits(home: str, secret: str) -> list[str]:
    out = []
    for root, _d, files in os.walk(home):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                if secret.encode() in f.read():
                    out.append(os.path.relpath(os.path.join(root, name), home))
    return out


def gateway_tables_holding(secret: str) -> list[str]:
    """Every ``table.column`` of the gateway database with a value that holds ``secret`` (every row, every table)."""
    cols = query("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
                 f"AND DATA_TYPE IN ({', '.join(['%s'] * len(TEXT_TYPES))})", TEXT_TYPES)
    return [f"{t}.{c}" for t, c in cols
            if query(f"SELECT COUNT(*) FROM `{t}` WHERE LOCATE(%s, `{c}`) > 0", (secret,))[0][0]]  # noqa: S608


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from eventlog.app.gateway import auth
    from eventlog.app.web.server import Running, gateway

    app, sock, url = gateway(MYSQL_URL, port=0, policy=auth.LoginPolicy(per_email=50, per_client=10_000))
    with Running(app, sock, url) as running:
        yield running


def _remote(how: str, ws: Workspace, owner: str, request: Any) -> Any:
    """The gateway ``evlog erase`` goes to: direct (``--dsn``), or the HTTP gateway the device logged in to."""
    if how == "direct":
        return row_sync.Gateway(MYSQL_URL, owner)
    from eventlog.app.gateway.http_client import HttpRemote, login

    url = request.getfixturevalue("server").url
    login(ws.home, url, owner, PASSWORD)
    return HttpRemote.open(ws.home, url)


@pytest.mark.parametrize("how", ["direct", "http"])
def test_an_erase_empties_the_erased_events_at_the_gateway_and_nothing_brings_them_back(tmp_path, how, request,
                                                                                      server):
    # ``server`` first in both modes: starting the gateway migrates the schema, which account() needs on a new database
    secret = f"PERSIMMON-{uuid.uuid4().hex}"
    owner, mate = account("owner"), fresh_email("mate")
    store = MySQLEventStore(MYSQL_URL)
    a, b, m = _device(tmp_path, "a"), _device(tmp_path, "b"), _device(tmp_path, "m")
    try:
        store.share(owner, PROJECT, mate)
        a.append([SessionCreated(session_key="plans", title="plans", project=PROJECT),
                  MessageAppended(session_key="plans", message_id="m1", role="user", content=f"the code is {secret}"),
                  SessionCreated(session_key="other", title="other", project=PROJECT),
                  MessageAppended(session_key="other", message_id="o1", role="user", content="keep this one")])
        sync.push(a.log, store, owner, store_name="gw")
        sync.pull(b.log, store, owner, store_name="gw")
        sync.pull(m.log, store, mate, store_name="gw")
        sync.push(m.log, store, mate, store_name="gw")  # (a device pushes its own events; relays: test_event_store)
        assert gateway_tables_holding(secret) == ["gateway_events.body"], "the fixture did not push the secret"

        remote = _remote(how, a, owner, request)
        try:
            dry = erase(a, Target("session", "plans"), dry_run=True, remote=remote)
            assert dry.gateway.get(EVENTS_EMPTIED) == 2  # the session's session.created and its message
            assert gateway_tables_holding(secret) == ["gateway_events.body"], "a dry run emptied events"
            report = erase(a, Target("session", "plans"), remote=remote)
        finally:
            remote.close()
        assert report.gateway.get(EVENTS_EMPTIED) == 2
        assert gateway_tables_holding(secret) == [], "the gateway still holds the erased text"

        for ws, who in ((b, owner), (m, mate)):  # devices that still hold it push again: duplicates, no text
            sync.push(ws.log, store, who, store_name="gw")
        assert gateway_tables_holding(secret) == []
        for name, who in (("c", owner), ("n", mate)):  # new devices pull everything there is
            fresh = _device(tmp_path, name)
            try:
                sync.pull(fresh.log, store, who, store_name="gw")
                fresh.flush()
                assert _hits(fresh.home, secret) == [], f"a new device of {name} pulled the erased text"
                assert "other" in fresh.sessions.index and "plans" not in fresh.sessions.index
            finally:
                fresh.close()
    finally:
        for ws in (a, b, m):
            ws.close()
        store.close()


def test_origin_keys_name_a_local_event_by_its_device_and_a_received_one_by_its_origin(tmp_path):
    from eventlog.replication.store import MemoryEventStore

    store = MemoryEventStore()
    a, b = _device(tmp_path, "a"), _device(tmp_path, "b")
    try:
        a.append([SessionCreated(session_key="s", title="t")])
        device_a = sync.push(a.log, store, "me", store_name="mem").device
        sync.pull(b.log, store, "me", store_name="mem")
        b.append([MessageAppended(session_key="s", message_id="x", role="user", content="hi")])
        device_b = sync.push(b.log, store, "me", store_name="mem").device
        received = next(e.seq for e in b.log.read() if e.type == "session.created")
        own = next(e.seq for e in b.log.read() if e.type == "message.appended")
        assert origin_keys(b, {received, own}) == tuple(sorted([(device_a, 1), (device_b, own)]))
        assert origin_keys(_device(tmp_path, "never-synced"), {1}) == ()
    finally:
        a.close()
        b.close()
