"""``evlog daemon install|uninstall`` (a systemd user unit, a launchd agent) and the daemon's log and heartbeat.

systemd does not run in this container (no /run/systemd/system), so the tests check the files the
generators write and that nothing is started where no service manager runs; a test that starts the
unit with ``systemctl --user`` runs only where systemd does.
"""

from __future__ import annotations

import configparser
import os
import plistlib
import shlex
import subprocess
import sys
import threading

import pytest

from eventlog.app import service
from eventlog.app.workspace import Workspace
from eventlog.errors import ConfigError, LockedError
from processors.daemon import LOG_BACKUPS, LOG_FILE, Heartbeat, close_logger, daemon_logger, run_daemon
from processors.llm import OfflineExtractor


@pytest.fixture(autouse=True)
def user(tmp_path, monkeypatch):
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def _cli(*args: str):  # noqa: ANN202
    from click.testing import CliRunner

    from eventlog.cli import cli

    return CliRunner().invoke(cli, list(args))


def _unit(path: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    with open(path) as f:
        parser.read_string(f.read())
    return parser


def test_systemd_unit_runs_this_evlog_on_the_workspace_and_restarts_it(evlog_home, user):
    r = _cli("--home", str(evlog_home), "daemon", "install", "--platform", "systemd", "--command", "'/opt/ev lib/evlog'")
    assert r.exit_code == 0, r.stderr
    path = user / ".config" / "systemd" / "user" / f"evlog-daemon{service.unit_suffix(str(evlog_home))}.service"
    unit = _unit(str(path))
    argv = shlex.split(unit["Service"]["ExecStart"])  # systemd's quoting of a path with a space reads back the same
    assert argv == ["/opt/ev lib/evlog", "--home", str(evlog_home), "daemon"]
    assert unit["Service"]["Restart"] == "on-failure" and unit["Install"]["WantedBy"] == "default.target"
    assert unit["Service"]["EnvironmentFile"] == "-%h/.config/evlog/env"
    assert "ANTHROPIC_API_KEY=" not in path.read_text().replace("ANTHROPIC_API_KEY=...", "")  # no secret in the unit
    assert (evlog_home / "evlog.json").is_file() and (evlog_home / "logs").is_dir()
    if not service.manager_running("systemd"):
        assert "systemd (as a user service manager) is not running here" in r.stderr
        assert "systemctl --user enable --now evlog-daemon" in r.stderr


def test_install_is_idempotent_and_uninstall_removes_only_its_file(evlog_home, user):
    args = ("--home", str(evlog_home), "daemon", "install", "--platform", "systemd", "--no-start")
    assert _cli(*args).exit_code == 0
    plan = service.plan_service(str(evlog_home), platform="systemd")
    assert plan.installed
    second = _cli(*args)
    assert second.exit_code == 0 and "unchanged:" in second.stderr
    r = _cli("--home", str(evlog_home), "daemon", "uninstall", "--platform", "systemd")
    assert r.exit_code == 0 and "removed" in r.stderr and not os.path.exists(plan.path)
    assert (evlog_home / "evlog.json").is_file()  # the workspace stays
    assert "nothing to remove" in _cli("--home", str(evlog_home), "daemon", "uninstall", "--platform", "systemd").stderr


def test_a_unit_file_evlog_did_not_write_is_never_overwritten_or_removed(evlog_home):
    plan = service.plan_service(str(evlog_home), platform="systemd")
    os.makedirs(os.path.dirname(plan.path))
    with open(plan.path, "w") as f:
        f.write("[Service]\nExecStart=/usr/bin/something-else\n")
    with pytest.raises(ConfigError, match="not written by evlog"):
        service.install(plan)
    with pytest.raises(ConfigError, match="not written by evlog"):
        service.uninstall(plan)
    with open(plan.path) as f:
        assert f.read() == "[Service]\nExecStart=/usr/bin/something-else\n"


def test_launchd_agent_plist(evlog_home, user):
    r = _cli("--home", str(evlog_home), "daemon", "install", "--platform", "launchd", "--command", "/opt/evlog/bin/evlog")
    assert r.exit_code == 0, r.stderr
    (path,) = (user / "Library" / "LaunchAgents").iterdir()
    with open(path, "rb") as f:
        doc = plistlib.load(f)
    assert doc["Label"] == path.stem and doc["Label"].startswith(service.LAUNCHD_LABEL)
    assert doc["ProgramArguments"] == ["/opt/evlog/bin/evlog", "--home", str(evlog_home), "daemon"]
    assert doc["RunAtLoad"] is True and doc["KeepAlive"] == {"SuccessfulExit": False}
    assert doc["StandardErrorPath"] == str(evlog_home / "logs" / "daemon.stderr.log")
    if sys.platform != "darwin":
        assert "launchd is not running here" in r.stderr and "launchctl load -w" in r.stderr
    assert _cli("--home", str(evlog_home), "daemon", "uninstall", "--platform", "launchd").exit_code == 0
    assert not path.exists()


def test_the_default_workspace_gets_the_plain_unit_name(user):
    plan = service.plan_service(str(user / ".evlog"), platform="systemd")
    assert os.path.basename(plan.path) == "evlog-daemon.service"
    other = service.plan_service(str(user / "work-ws"), platform="systemd")
    assert os.path.basename(other.path) != "evlog-daemon.service" and other.path.endswith(".service")


def test_dry_run_prints_the_unit_and_writes_nothing(evlog_home, user):
    r = _cli("--home", str(evlog_home), "daemon", "install", "--platform", "systemd", "--dry-run")
    assert r.exit_code == 0 and "ExecStart=" in r.stdout and "systemctl --user enable --now" in r.stdout
    assert not (user / ".config").exists() and not evlog_home.exists()


@pytest.mark.skipif(not service.manager_running("systemd"), reason="systemd does not run here (a container)")
def test_systemctl_starts_the_installed_unit(evlog_home):  # pragma: no cover - only where systemd runs
    plan = service.plan_service(str(evlog_home), platform="systemd")
    try:
        result = service.install(plan)
        assert result.started, result.notes
        out = subprocess.run(["systemctl", "--user", "is-active", plan.name], capture_output=True, text=True)
        assert out.stdout.strip() in ("active", "activating")
    finally:
        service.uninstall(plan)


# --------------------------------------------------------------------------- the daemon's log and heartbeat


def test_the_daemon_log_file_rotates(workspace, monkeypatch):
    import processors.daemon as d

    monkeypatch.setattr(d, "LOG_MAX_BYTES", 2000)
    logger = daemon_logger(workspace)
    try:
        for i in range(200):
            logger.info(f"line {i:03d} " + "x" * 40)
    finally:
        close_logger(logger)
    path = os.path.join(workspace, LOG_FILE)
    names = sorted(os.listdir(os.path.dirname(path)))
    assert names == ["daemon.log"] + [f"daemon.log.{i}" for i in range(1, LOG_BACKUPS + 1)]
    assert all(os.path.getsize(os.path.join(os.path.dirname(path), n)) <= 2000 for n in names)
    with open(path) as f:
        assert f.read().splitlines()[-1].endswith("line 199 " + "x" * 40)


def test_the_daemon_command_logs_to_the_file_and_leaves_its_heartbeat(workspace):
    evlog = os.path.join(os.path.dirname(sys.executable), "evlog")
    r = subprocess.run([evlog, "--home", workspace, "daemon", "--once"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(workspace, LOG_FILE)) as f:
        logged = f.read()
    assert "daemon started on" in logged and "daemon stopping" in logged and "snapshot: read" in logged
    assert "daemon started on" in r.stderr  # stderr too
    from processors.daemon import read_daemon_state

    state = read_daemon_state(workspace)
    assert state and state["stopped_at"] and state["jobs"]["snapshot"]["last_ok"] is True


def test_a_second_daemon_on_the_same_workspace_is_refused(workspace):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        first = Heartbeat(workspace)
        first.state["pid"] = other.pid  # a live daemon of this workspace: its pid runs, its heartbeat is fresh
        first.beat(force=True)
        with Workspace.open(workspace, writable=True) as ws, pytest.raises(LockedError, match="already runs"):
            run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lambda _m: None, once=True,
                       heartbeat=Heartbeat(workspace))
        from processors.daemon import read_daemon_state

        assert read_daemon_state(workspace)["pid"] == other.pid  # the refused daemon left the file alone
    finally:
        other.kill()
        other.wait()
    with Workspace.open(workspace, writable=True) as ws:  # the other one is gone: this one may start
        run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lambda _m: None, once=True,
                   heartbeat=Heartbeat(workspace))
