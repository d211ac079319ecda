"""``evlog sync push/pull`` sync events by default; ``--rows`` keeps the deprecated row sync reachable.

The CLI's store resolver is pointed at one ``MemoryEventStore`` (the contract's definition),
so the commands run end to end without a database; a log that never synced gets its device
id (and every event it wrote an origin) on its first push.
"""

from __future__ import annotations

import json

import pytest

from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.events import MessageAppended, SessionCreated
from tests.sync_cli_helpers import DSN
from tests.sync_cli_helpers import home as _home


def test_push_and_pull_without_a_flag_sync_events_and_an_old_log_gets_its_origins(tmp_path, sync_store, cli_runner):
    laptop, desk = _home(tmp_path, "laptop"), _home(tmp_path, "desk")
    with Workspace.open(laptop, writable=True) as ws:  # a log written before any sync: no device id yet
        ws.append([SessionCreated(session_key="s1", title="plans"),
                   MessageAppended(session_key="s1", message_id="m1", role="user", content="ship on Friday")])
    pushed = cli_runner.invoke(cli, ["--home", laptop, "sync", "push", "--json", "--dsn", DSN, "--user", "me@x.org"])
    assert pushed.exit_code == 0, pushed.output
    assert json.loads(pushed.stdout)["stored"] == 2
    page = sync_store.pull("me@x.org", 0, 100)
    origins = {(e.origin, e.origin_seq) for e in page.events}
    assert len({o for o, _ in origins}) == 1 and all(o.startswith("dev-") for o, _ in origins)
    pulled = cli_runner.invoke(cli, ["--home", desk, "sync", "pull", "--json", "--dsn", DSN, "--user", "me@x.org"])
    assert pulled.exit_code == 0, pulled.output
    assert json.loads(pulled.stdout)["received"] == 2
    with Workspace.open(desk) as ws:
        assert [m.content for m in _contents(ws, "s1")] == ["ship on Friday"]


def _contents(ws, key: str) -> list:
    from eventlog.app.session_store import LocalSessionStore

    return LocalSessionStore(ws).history(key)


@pytest.mark.parametrize("option", ["--all", "--retry-rejected", "--as-another-user"])
def test_a_row_only_option_without_rows_is_a_usage_error_naming_it(tmp_path, sync_store, cli_runner, option):
    home = _home(tmp_path, "h")
    command = "pull" if option == "--as-another-user" else "push"
    res = cli_runner.invoke(cli, ["--home", home, "sync", command, option, "--dsn", DSN, "--user", "me@x.org"])
    assert res.exit_code == 2
    assert option in res.stderr and "--rows" in res.stderr
    assert sync_store.pull("me@x.org", 0, 100).events == []


def test_rows_says_it_is_deprecated(tmp_path, cli_runner):
    home = _home(tmp_path, "h")
    res = cli_runner.invoke(cli, ["--home", home, "sync", "push", "--rows", "--dsn", "mysql://root@127.0.0.1:1/x",
                                  "--user", "me@x.org", "--connect-timeout", "0.5"])
    assert "--rows is deprecated" in res.stderr
