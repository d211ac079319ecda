"""``evlog status`` tells the truth (issue 24): nothing installed, daemon down, daemon up, a job failing, the
recall index behind; and ``evlog offsets`` lists each processor once, with a lag that counts pending work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

import processors
from eventlog.app.status import workspace_status
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended, SessionCreated
from processors.daemon import DAEMON_STATE, Heartbeat, run_daemon
from processors.llm import OfflineExtractor
from tests.conftest import REPO


@pytest.fixture(autouse=True)
def user_home(tmp_path, monkeypatch):
    """A user with no Claude Code, Codex or service files, in a project folder of its own."""
    user = tmp_path / "user"
    (user / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(user / "project")
    return user


def _problems(report) -> list[str]:  # noqa: ANN001
    return [f"{p.what} -> {p.fix}" for p in report.problems]


def _workspace_with_messages(home: str, n: int = 6) -> None:
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key="cli:s", created_at="2026-11-01T09:00:00Z")]
                  + [MessageAppended(session_key="cli:s", message_id=str(i), role="user" if i % 2 == 0 else "assistant",
                                     content=f"I prefer tabs over spaces ({i}).", timestamp="2026-11-01T09:00:01Z")
                     for i in range(n)])


def test_offsets_lists_each_processor_once_and_its_lag_is_the_pending_input(workspace):
    _workspace_with_messages(workspace)
    with Workspace.open(workspace, writable=True) as ws:
        for job in ("snapshot", "digest", "dream", "recall"):
            processors.run(ws, job)
        rows = processors.offsets(ws)
    names = [r.processor for r in rows]
    assert len(names) == len(set(names)), f"listed twice: {names}"
    for r in rows:
        assert r.lag == 0, f"{r.processor}: lag {r.lag} with nothing pending ({r.detail})"
    assert {"snapshot", "digest", "dream"} <= set(names)


def _tree(home: str) -> dict[str, tuple[int, float]]:
    out = {}
    for root, _dirs, files in os.walk(home):
        for f in files:
            p = os.path.join(root, f)
            st = os.stat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


def test_nothing_installed_says_so_and_what_to_run(evlog_home):
    report = workspace_status(str(evlog_home))
    assert not report.initialised and not report.daemon.running
    assert [p.fix for p in report.problems][:1] == ["evlog init"]
    init_workspace(str(evlog_home))
    report = workspace_status(str(evlog_home))
    assert report.initialised and not report.daemon.running and report.daemon.since == ""
    text = "\n".join(_problems(report))
    assert "the daemon is not running (it never ran here) -> evlog daemon install" in text
    assert "no agent is connected" in text and "evlog setup claude-code" in text
    assert not any(a.hooks or a.mcp for a in report.agents)
    assert all(j.last_run == "" and j.next_run == "" for j in report.jobs)


def test_status_reads_only(workspace):
    _workspace_with_messages(workspace)
    with Workspace.open(workspace, writable=True) as ws:
        processors.run(ws, "recall")
    before = _tree(workspace)
    workspace_status(workspace)
    after = _tree(workspace)
    # SQLite's reader files of the recall index (a WAL database's readers share them) are the only new files
    assert {p: v for p, v in after.items() if not p.endswith(("-wal", "-shm"))} == before


def _run_daemon_thread(home: str, **kw):  # noqa: ANN003, ANN202
    stop = threading.Event()
    ws = Workspace.open(home, writable=True)
    lines: list[str] = []
    t = threading.Thread(target=run_daemon, args=(ws, OfflineExtractor()),
                         kwargs={"stop": stop, "log": lines.append, "heartbeat": Heartbeat(home), **kw})
    t.start()
    return stop, t, ws, lines


def _wait_for(predicate, timeout: float = 10.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_daemon_up_then_down_since_when(workspace):
    _workspace_with_messages(workspace)
    stop, t, ws, _lines = _run_daemon_thread(workspace, schedule={"snapshot": 60, "recall": 60})
    try:
        _wait_for(lambda: all(j.last_run for j in workspace_status(workspace).jobs
                              if j.job in ("snapshot", "recall")))
        report = workspace_status(workspace)
        d = report.daemon
        assert d.running and d.pid == os.getpid() and d.since and d.heartbeat_age is not None and d.heartbeat_age < 5
        snap = next(j for j in report.jobs if j.job == "snapshot")
        assert snap.last_ok is True and snap.next_run > snap.last_run and snap.lag == 0
        assert not any("daemon" in p.what or "recall index" in p.what for p in report.problems), _problems(report)
        from eventlog.app.status import StatusReport

        assert isinstance(report, StatusReport)
    finally:
        stop.set()
        t.join(10)
        ws.close()
    report = workspace_status(workspace)
    with open(os.path.join(workspace, DAEMON_STATE)) as f:
        state = json.load(f)
    assert not report.daemon.running and report.daemon.since == state["stopped_at"] != ""
    assert any(p.what.startswith("the daemon is not running (down since") for p in report.problems)


def test_a_killed_daemon_is_down_though_its_file_says_it_runs(workspace):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    hb = Heartbeat(workspace)
    hb.state["pid"] = dead.pid
    hb.beat(force=True)  # a fresh heartbeat, no stopped_at: only the pid tells
    report = workspace_status(workspace)
    assert not report.daemon.running and report.daemon.pid == dead.pid
    hb.state["pid"] = os.getpid()
    hb.state["heartbeat_ts"] = time.time() - 3600  # alive pid, heartbeat an hour old: a hung or foreign process
    hb._write()
    assert not workspace_status(workspace).daemon.running


def test_a_failing_job_is_a_problem_with_its_error_and_the_fix(workspace):
    def broken(_ws):  # noqa: ANN001, ANN202
        raise RuntimeError("the watched folder is unreadable")

    with Workspace.open(workspace, writable=True) as ws:
        run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lambda _m: None, once=True,
                   schedule={"watch": 30, "snapshot": 30}, jobs={"watch": broken}, heartbeat=Heartbeat(workspace))
    report = workspace_status(workspace)
    watch = next(j for j in report.jobs if j.job == "watch")
    assert watch.last_ok is False and watch.failures == 1 and "unreadable" in watch.last_error
    assert next(j for j in report.jobs if j.job == "snapshot").last_ok is True
    (problem,) = [p for p in report.problems if p.what.startswith("job ")]
    assert problem.what == "job watch failed 1 time(s) in a row: RuntimeError: the watched folder is unreadable"
    assert "logs/daemon.log" in problem.fix and "evlog watch --once" in problem.fix


def test_the_recall_index_behind_is_a_problem_until_it_catches_up(workspace):
    report = workspace_status(workspace)
    assert not report.index.exists and "there is no recall index yet -> evlog run recall" in _problems(report)
    with Workspace.open(workspace, writable=True) as ws:
        processors.run(ws, "recall")
    assert workspace_status(workspace).index.behind == 0
    _workspace_with_messages(workspace)
    report = workspace_status(workspace)
    assert report.index.exists and report.index.behind == 7 == next(j for j in report.jobs if j.job == "recall").lag
    assert "the recall index is 7 event(s) behind the log -> evlog run recall" in _problems(report)
    with Workspace.open(workspace, writable=True) as ws:
        processors.run(ws, "recall")
    report = workspace_status(workspace)
    assert report.index.behind == 0 and not any("recall index" in p for p in _problems(report))


def test_agents_show_where_evlog_is_connected(workspace, user_home, cli_runner):
    from eventlog.cli import cli

    assert cli_runner.invoke(cli, ["--home", workspace, "setup", "claude-code", "--command", "evlog"]).exit_code == 0
    report = workspace_status(workspace)
    claude = next(a for a in report.agents if a.agent == "claude-code")
    assert claude.hooks and claude.mcp and str(user_home / ".claude" / "settings.json") in claude.where
    assert not any("agent" in p.what for p in report.problems)
    settings = user_home / ".claude" / "settings.json"
    doc = json.loads(settings.read_text())
    doc["enabledPlugins"] = {"evlog@evlog": True}
    settings.write_text(json.dumps(doc))
    report = workspace_status(workspace)
    assert next(a for a in report.agents if a.agent == "claude-code-plugin").hooks
    assert any("each runs twice" in p.what and "--uninstall" in p.fix for p in report.problems)
    assert cli_runner.invoke(cli, ["--home", workspace, "setup", "codex", "--command", "evlog"]).exit_code == 0
    codex = next(a for a in workspace_status(workspace).agents if a.agent == "codex")
    assert codex.hooks and codex.mcp and len(codex.where) == 2


def test_the_status_command_prints_a_table_or_one_json_object(workspace, cli_runner):
    from eventlog.cli import cli

    r = cli_runner.invoke(cli, ["--home", workspace, "status"])
    assert r.exit_code == 0 and "daemon      down (never ran here)" in r.stdout and "fix: evlog daemon install" in r.stdout
    r = cli_runner.invoke(cli, ["--home", workspace, "status", "--json"])
    (line,) = r.stdout.splitlines()
    doc = json.loads(line)
    assert doc["ok"] is False and doc["daemon"]["running"] is False and doc["index"]["behind"] == doc["log_seq"]
    assert {p["fix"] for p in doc["problems"]} >= {"evlog daemon install", "evlog run recall"}
    assert cli_runner.invoke(cli, ["--home", workspace, "status", "--check"]).exit_code == 1


def test_the_processors_page_lists_each_processor_once_with_no_lag_badge_when_nothing_is_pending(workspace):
    import re

    from starlette.testclient import TestClient

    from eventlog.app.web.app import local_app

    _workspace_with_messages(workspace)
    with Workspace.open(workspace, writable=True) as ws:
        for job in ("snapshot", "digest", "dream", "recall"):
            processors.run(ws, job)
    token = "status-token-" + "x" * 32
    app = local_app(workspace, 8766, token=token)
    try:
        with TestClient(app, base_url="http://127.0.0.1:8766", follow_redirects=False) as c:
            c.get(f"/?token={token}")
            body = c.get("/processors").text
    finally:
        app.state.web.source.close()
    names = re.findall(r"<td><b>([a-z_.]+)</b></td>", body)
    assert names and len(names) == len(set(names)), names
    assert 'class="badge lag"' not in body


def test_offsets_counts_dreams_inputs_as_dream_does():
    import processors.dream as dream
    from eventlog.events import HistoryAppended

    sys.path.insert(0, os.path.join(REPO, "tools"))
    from make_golden_log import SAMPLES  # one event of every type

    samples = [*SAMPLES, HistoryAppended(text="a note", source=dream.NOTE_SOURCE),
               HistoryAppended(text="a summary", source="consolidator")]
    assert processors.DREAM_NOTE_SOURCE == dream.NOTE_SOURCE
    assert processors.DREAM_SCAN_RECORDS == dream.SCAN_RECORDS
    for ev in samples:
        assert processors.is_dream_input(ev) == dream._is_input(ev), ev
    assert any(processors.is_dream_input(ev) for ev in samples) and not all(map(processors.is_dream_input, samples))


def test_a_daemon_busy_with_a_long_job_is_up_and_says_which_job(workspace, monkeypatch):
    import processors.daemon as d

    monkeypatch.setattr(d, "HEARTBEAT_SECONDS", 0.05)
    monkeypatch.setattr(d, "STALE_AFTER_SECONDS", 0.5)  # the job below runs 4x longer than a heartbeat may be old
    started, release = threading.Event(), threading.Event()

    def long_job(_ws):  # noqa: ANN001, ANN202 - a Dream call that takes minutes, in small
        started.set()
        release.wait(10)
        return []

    stop, t, ws, _lines = _run_daemon_thread(workspace, schedule={"watch": 60}, jobs={"watch": long_job})
    try:
        assert started.wait(10)
        time.sleep(2.0)
        report = workspace_status(workspace)
        assert report.daemon.running, "a daemon busy with a long job looked dead"
        assert report.daemon.current_job.startswith("watch since ")
    finally:
        release.set()
        stop.set()
        t.join(10)
        ws.close()
    assert workspace_status(workspace).daemon.current_job == ""
