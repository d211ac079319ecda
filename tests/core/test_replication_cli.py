"""``evlog sync push/pull --events``, ``evlog sync share/unshare`` and a teammate's fact in ``audit why``.

The gateway's store classes are syncgw's; here the CLI's store resolver is pointed at one
``MemoryEventStore`` (the contract's definition) so the commands run end to end.
"""

from __future__ import annotations

import json
import os

import pytest

from eventlog.app import event_stores as stores
from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.errors import ConfigError
from eventlog.events import MemoryAppended, SessionCreated
from tests.sync_cli_helpers import DSN
from tests.sync_cli_helpers import home as _home


def _evlog(runner, home: str, *args: str):
    result = runner.invoke(cli, ["--home", home, *args])
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def test_push_and_pull_events_carry_a_teammates_fact_with_its_author(tmp_path, sync_store, cli_runner):
    project = tmp_path / "shop"
    project.mkdir()
    mine, theirs = _home(tmp_path, "mine"), _home(tmp_path, "theirs")
    with Workspace.open(mine, writable=True) as ws:
        ws.append([SessionCreated(session_key="s1", project=str(project))])
    _evlog(cli_runner, mine, "sync", "share", str(project), "Bob@Example.com", "--dsn", DSN, "--user", "me@example.com")
    assert [(s.project, s.member) for s in sync_store.shares("me@example.com")] == [(str(project), "bob@example.com")]
    with Workspace.open(theirs, writable=True) as ws:
        ws.append([MemoryAppended(fact_id="f-bob", scope="project", project=str(project), section="Project Context",
                                  text="The shop deploys on Fridays", by="user")])
    pushed = _evlog(cli_runner, theirs, "sync", "push", "--events", "--json", "--dsn", DSN, "--user", "bob@example.com")
    assert json.loads(pushed.output)["stored"] == 1
    pulled = _evlog(cli_runner, mine, "sync", "pull", "--events", "--json", "--dsn", DSN, "--user", "me@example.com")
    assert json.loads(pulled.output)["received"] == 1
    why = _evlog(cli_runner, mine, "audit", "why", "Fridays")
    assert "written by bob@example.com" in why.output
    why_json = _evlog(cli_runner, mine, "audit", "why", "Fridays", "--json")
    assert json.loads(why_json.output)["author"] == "bob@example.com"
    gone = _evlog(cli_runner, mine, "sync", "unshare", str(project), "bob@example.com", "--dsn", DSN,
                  "--user", "me@example.com")
    assert "no longer shared" in gone.output and sync_store.shares("me@example.com") == []


def test_an_unshared_project_does_not_reach_a_teammate(tmp_path, sync_store, cli_runner):
    mine, theirs = _home(tmp_path, "mine"), _home(tmp_path, "theirs")
    with Workspace.open(mine, writable=True) as ws:
        ws.append([MemoryAppended(fact_id="f-private", scope="user", section="Preferences", text="likes tea", by="user")])
    _evlog(cli_runner, mine, "sync", "push", "--events", "--dsn", DSN, "--user", "me@example.com")
    pulled = _evlog(cli_runner, theirs, "sync", "pull", "--events", "--json", "--dsn", DSN, "--user", "bob@example.com")
    assert json.loads(pulled.output)["received"] == 0


def test_a_missing_store_class_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no event store eventlog.nowhere.Store"):
        stores._store_class(("eventlog.nowhere", "Store"))
    with pytest.raises(ConfigError, match="--dsn needs --user"):
        stores.open_store(str(tmp_path), dsn=DSN)
    assert not os.path.exists(tmp_path / "state")


def test_an_erasure_travels_through_push_and_pull_events(tmp_path, sync_store, cli_runner):
    from eventlog.app.erase import Target, erase
    from eventlog.events import MessageAppended

    secret = "my door code is 5521-9087 and nobody else knows it"
    mine, laptop = _home(tmp_path, "mine"), _home(tmp_path, "laptop")
    with Workspace.open(mine, writable=True) as ws:
        ws.append([SessionCreated(session_key="s1"),
                   MessageAppended(session_key="s1", message_id="m1", role="user", content=secret)])
    args = ("--json", "--dsn", DSN, "--user", "me@example.com")
    _evlog(cli_runner, mine, "sync", "push", "--events", *args)
    _evlog(cli_runner, laptop, "sync", "pull", "--events", *args)
    with Workspace.open(mine, writable=True) as ws:
        erase(ws, Target("text", secret))
    _evlog(cli_runner, mine, "sync", "push", "--events", *args)
    pulled = _evlog(cli_runner, laptop, "sync", "pull", "--events", *args)
    assert json.loads(pulled.output)["erased"] == 1
    for root, _dirs, files in os.walk(laptop):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                assert secret.encode() not in f.read(), os.path.join(root, name)
