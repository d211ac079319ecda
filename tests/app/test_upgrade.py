"""The upgrade path: a workspace written by an older evlog opens, verifies and replays with today's code.

``tests/golden/workspace-v0.2/`` was written by evlog 0.2 (``tools/make_golden_workspace.py`` over the
bundled examples, with a fixed clock): its log, its projection checkpoint and the files a user reads.
Today's code must read that log, find the old projection files consistent with it, and rebuild exactly
the same MEMORY.md, diaries and session files. A release that changes the workspace format adds the
next ``workspace-vX`` (never rewrites an old one) and says in CHANGELOG.md what upgrading takes.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.conftest import REPO

GOLDEN = os.path.join(REPO, "tests", "golden")
VERSIONS = sorted(d.removeprefix("workspace-") for d in os.listdir(GOLDEN) if d.startswith("workspace-"))
USER_FILES = ("sessions", "memory", "diary")


def _files(root: str) -> dict[str, bytes]:
    out = {}
    for sub in USER_FILES:
        for dirpath, _dirs, names in os.walk(os.path.join(root, sub)):
            for n in names:
                p = os.path.join(dirpath, n)
                with open(p, "rb") as f:
                    out[os.path.relpath(p, root)] = f.read()
    return out


@pytest.fixture(params=VERSIONS)
def old_workspace(request, tmp_path):
    src = os.path.join(GOLDEN, f"workspace-{request.param}")
    home = str(tmp_path / "ws")
    shutil.copytree(src, home)
    return src, home


def test_there_is_a_golden_workspace_of_the_last_release():
    assert "v0.2" in VERSIONS


def test_an_old_workspace_verifies_checks_and_replays_to_the_same_files(old_workspace, cli_runner):
    from eventlog.cli import cli

    src, home = old_workspace
    golden = _files(src)
    assert any(k.endswith("MEMORY.md") for k in golden) and any(k.startswith("sessions") for k in golden)
    r = cli_runner.invoke(cli, ["--home", home, "verify"])
    assert r.exit_code == 0, r.output
    r = cli_runner.invoke(cli, ["--home", home, "replay", "--check"])
    assert r.exit_code == 0, r.output  # the old files are what today's replay of the old log gives
    r = cli_runner.invoke(cli, ["--home", home, "replay"])
    assert r.exit_code == 0, r.output
    assert _files(home) == golden


def test_an_old_workspace_takes_new_events_and_reports_its_status(old_workspace, cli_runner):
    import processors
    from eventlog.app.status import workspace_status
    from eventlog.app.workspace import Workspace
    from eventlog.events import MessageAppended

    _src, home = old_workspace
    with Workspace.open(home, writable=True) as ws:
        before = ws.log.last_seq
        ws.append([MessageAppended(session_key="cli:demo", message_id="after-upgrade", role="user",
                                   content="After the upgrade I still prefer pytest.")])
        for job in ("snapshot", "digest", "recall"):
            processors.run(ws, job)
        assert ws.log.last_seq > before
    report = workspace_status(home)
    assert report.initialised and report.index.behind == 0
    from eventlog.cli import cli

    assert cli_runner.invoke(cli, ["--home", home, "replay", "--check"]).exit_code == 0
