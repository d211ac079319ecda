"""Shell completion (click's own) and the documented backup: copy the log and evlog.json, check the copy.

Completion: ``_EVLOG_COMPLETE=bash_source|zsh_source|fish_source evlog`` prints the script a shell
sources, and completing ``evlog cap`` offers ``capture`` (the lazy command table is listed).

Backup: while another process keeps appending, ``log/`` and ``evlog.json`` are copied (the
projections are not: they rebuild); on the copy ``evlog replay`` rebuilds them, ``evlog verify``
finds a clean log and ``evlog replay --check`` finds no drift.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from tests.conftest import REPO

WRITER = """
import sys, time
from eventlog.app.workspace import Workspace
from eventlog.events import MessageAppended
ws = Workspace.open(sys.argv[1], writable=True)
i = 0
while True:
    ws.log.append(MessageAppended(session_key=f"s{i % 3}", message_id=f"m{i}", role="user", content=f"m{i} " + "x" * 300))
    i += 1
    if i == 20:
        open(sys.argv[2], "w").close()  # started
    time.sleep(0.002)
"""


@pytest.mark.parametrize(("shell", "marker"), [("bash", "complete -o nosort -F _evlog_completion evlog"),
                                               ("zsh", "#compdef evlog"),
                                               ("fish", "complete --no-files --command evlog")])
def test_click_prints_a_completion_script_for_each_shell(cli_runner, shell: str, marker: str) -> None:
    r = cli_runner.invoke(cli, [], prog_name="evlog", env={"_EVLOG_COMPLETE": f"{shell}_source"})
    assert r.exit_code == 0 and marker in r.stdout and "_EVLOG_COMPLETE" in r.stdout


def test_completion_offers_the_lazy_commands_and_subcommands(cli_runner) -> None:
    r = cli_runner.invoke(cli, [], prog_name="evlog",
                          env={"_EVLOG_COMPLETE": "bash_complete", "COMP_WORDS": "evlog cap", "COMP_CWORD": "1"})
    assert r.exit_code == 0 and r.stdout.split() == ["plain,capture"]
    r = cli_runner.invoke(cli, [], prog_name="evlog",
                          env={"_EVLOG_COMPLETE": "bash_complete", "COMP_WORDS": "evlog capture pa", "COMP_CWORD": "2"})
    assert r.stdout.split() == ["plain,pause"]


def test_a_copy_of_a_live_workspace_verifies_and_replays_clean(tmp_path, cli_runner) -> None:
    live = str(tmp_path / "live")
    init_workspace(live, segment_bytes=64 * 1024)  # small segments: the copy meets rotations
    started = tmp_path / "started"
    env = {**os.environ, "PYTHONPATH": REPO}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, live, str(started)], env=env, cwd=REPO)
    try:
        deadline = time.time() + 60
        while not started.exists():
            assert writer.poll() is None and time.time() < deadline, "the writer did not start"
            time.sleep(0.05)
        backup = str(tmp_path / "backup")
        os.makedirs(backup)
        shutil.copy2(os.path.join(live, "evlog.json"), backup)  # the documented backup: these two, nothing else
        shutil.copytree(os.path.join(live, "log"), os.path.join(backup, "log"))
    finally:
        writer.kill()
        writer.wait()
    assert len(os.listdir(os.path.join(live, "log"))) > 1
    home = ["--home", backup]
    r = cli_runner.invoke(cli, [*home, "replay"])
    assert r.exit_code == 0, r.stderr
    r = cli_runner.invoke(cli, [*home, "verify"])
    assert r.exit_code == 0 and "log is clean" in r.stderr, r.stdout + r.stderr
    r = cli_runner.invoke(cli, [*home, "replay", "--check"])
    assert r.exit_code == 0 and "every projection file matches" in r.stderr, r.stdout + r.stderr
    with Workspace.open(backup) as ws:
        n = ws.log.last_seq
    assert n >= 20 and os.path.isdir(os.path.join(backup, "sessions"))
