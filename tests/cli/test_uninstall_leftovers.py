"""Every uninstall says what it leaves behind (the workspace and its memory, backups it made) and how to remove it."""

from __future__ import annotations

import os

import pytest

from eventlog.app.leftovers import left_behind, render_leftovers
from eventlog.app.workspace import Workspace
from eventlog.cli import cli


@pytest.fixture
def user(tmp_path, monkeypatch):  # noqa: ANN001, ANN201
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    return home


def test_setup_claude_code_uninstall_names_the_workspace_and_the_backups(user, tmp_path, cli_runner) -> None:
    ws = str(tmp_path / "ws")
    assert cli_runner.invoke(cli, ["--home", ws, "setup", "claude-code", "--command", "evlog"]).exit_code == 0
    r = cli_runner.invoke(cli, ["--home", ws, "setup", "claude-code", "--uninstall"])
    assert r.exit_code == 0, r.stderr
    assert "left behind" in r.stderr
    assert f"{ws}: the workspace" in r.stderr and f"remove: rm -rf {ws}" in r.stderr
    assert "evlog export" in r.stderr  # keep the facts before deleting
    bak = str(user / ".claude" / "settings.json.evlog.bak")
    assert os.path.isfile(bak) and f"remove: rm {bak}" in r.stderr


def test_setup_codex_uninstall_names_what_stays(user, tmp_path, cli_runner) -> None:
    ws = str(tmp_path / "ws")
    assert cli_runner.invoke(cli, ["--home", ws, "setup", "codex", "--command", "evlog"]).exit_code == 0
    r = cli_runner.invoke(cli, ["--home", ws, "setup", "codex", "--uninstall"])
    assert r.exit_code == 0, r.stderr
    assert f"remove: rm -rf {ws}" in r.stderr
    baks = [os.path.join(user / ".codex", n) for n in os.listdir(user / ".codex") if n.endswith(".evlog.bak")]
    assert baks and all(f"remove: rm {b}" in r.stderr for b in baks)


def test_daemon_uninstall_names_the_workspace_and_the_env_file(user, tmp_path, cli_runner) -> None:
    ws = str(tmp_path / "ws")
    args = ["--home", ws, "daemon"]
    assert cli_runner.invoke(cli, [*args, "install", "--platform", "systemd", "--no-start"]).exit_code == 0
    env = user / ".config" / "evlog" / "env"
    env.parent.mkdir(parents=True, exist_ok=True)
    env.write_text("ANTHROPIC_API_KEY=x\n")
    r = cli_runner.invoke(cli, [*args, "uninstall", "--platform", "systemd"])
    assert r.exit_code == 0, r.stderr
    assert f"remove: rm -rf {ws}" in r.stderr and f"remove: rm {env}" in r.stderr and "API key" in r.stderr


def test_left_behind_lists_project_memory_files(tmp_path, workspace) -> None:
    project = tmp_path / "proj"
    (project / "memory").mkdir(parents=True)
    (project / "memory" / "MEMORY.md").write_text("# Memory\n")
    with Workspace.open(workspace, writable=True) as ws:
        ws.register_project(str(project))
    items = left_behind(workspace, backups=[str(tmp_path / "missing.bak")])
    assert [i.path for i in items] == [workspace, str(project / "memory" / "MEMORY.md")]
    assert render_leftovers([]) == ["nothing of evlog is left here"]
