"""The daemon (issue 5): every processor on a schedule, robust to failing jobs, stops and
crashes that leave the log consistent.

The in-process tests call ``run_daemon`` directly (once, and in a thread with a stop
event); the subprocess tests start the real ``evlog daemon`` and SIGKILL / SIGTERM it.
"""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

import processors
from eventlog.app import replay
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.errors import ConfigError
from eventlog.events import (
    CursorAdvanced,
    DiaryAppended,
    DiaryLines,
    HistoryAppended,
    MemoryAppended,
    MessageAppended,
    SessionCreated,
)
from eventlog.log import Log
from processors import registry
from processors.daemon import DAEMON_STATE, EXTERNAL_JOBS, JOBS, run_daemon
from processors.extract.text import fact_key
from processors.llm import OfflineExtractor
from projections.diary import diary_items

FAST = {job: 0.05 for job in JOBS if job not in EXTERNAL_JOBS}

PREFS = [
    "I prefer tabs over spaces.",
    "我习惯早上写代码，不要在晚上十点以后给我发提醒",
    "In this project we use pytest for every test.",
    "I always run the linter before I commit.",
    "我喜欢简洁的回答",
    "Don't add emojis to commit messages.",
]


def messages(session: str, n: int, start: int = 0, *, day: str = "2025-02-03") -> list:
    evs = [SessionCreated(session_key=session, created_at=f"{day}T08:00:00Z")] if start == 0 else []
    for i in range(start, start + n):
        if i % 2:
            content, role = f"ok, noted ({session} {i})", "assistant"
        else:
            content, role = f"{PREFS[(i // 2) % len(PREFS)]} (said in {session} at {i})", "user"
        evs.append(MessageAppended(session_key=session, message_id=f"{session}-{i}", role=role, content=content,
                                   timestamp=f"{day}T{9 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"))
    return evs


def check_consistent(home: str) -> None:
    """What must hold after any stop or crash, once every processor ran again."""
    log = Log.open(os.path.join(home, "log"))
    try:
        damaged = [p for p in log.verify() if p.damaged]
        assert damaged == [], damaged
        evs = list(log.read())
    finally:
        log.close()
    by_seq = {e.seq: e for e in evs}
    # every unique message reached the diary exactly once
    canon = lambda m: (m.session_key, m.message_id, m.role, m.content, m.timestamp)  # noqa: E731
    unique = {canon(e) for e in evs if isinstance(e, MessageAppended)}
    in_diary = Counter(canon(by_seq[item.source_seq]) for e in evs if isinstance(e, DiaryAppended | DiaryLines)
                       for item in diary_items(e))
    assert [m for m, n in in_diary.items() if n > 1] == [], "a message reached the diary twice"
    assert set(in_diary) == unique, f"{len(unique - set(in_diary))} message(s) never reached the diary"
    # every message and note was claimed by Dream exactly once (retries do not claim)
    inputs = [e.seq for e in evs if isinstance(e, MessageAppended)
              or (isinstance(e, HistoryAppended) and e.source == "remember")]
    claims = Counter(c for e in evs if isinstance(e, CursorAdvanced) for c in e.cursors)
    assert [c for c, n in claims.items() if n > 1] == [], "a message was fed to Dream twice"
    assert set(claims) == set(inputs)
    # no message was consolidated twice
    marks: dict[str, int] = {}
    for e in evs:
        if isinstance(e, HistoryAppended) and e.source == "consolidator":
            assert e.refs["from_count"] >= marks.get(e.session_key, 0), f"{e.session_key} consolidated twice"
            marks[e.session_key] = e.refs["to_count"]
    # no fact twice in one file
    facts = Counter((e.scope, e.project, fact_key(e.text)) for e in evs if isinstance(e, MemoryAppended))
    assert [f for f, n in facts.items() if n > 1] == []


def run_everything_once(home: str) -> None:
    ws = Workspace.open(home, writable=True)
    try:
        llm = OfflineExtractor()
        for name in ("snapshot", "digest", "consolidate", "autocompact", "dream", "archive"):
            processors.run(ws, name, llm=llm)
        processors.run(ws, "dream", llm=llm, retry_failed=True)
        assert replay.check(ws).clean
    finally:
        ws.close()


# -- in process ----------------------------------------------------------------------------


def test_run_daemon_once_runs_every_job_in_order_and_logs_each(workspace):
    ws = Workspace.open(workspace, writable=True)
    try:
        ws.append(messages("s1", 14))
        lines: list[str] = []
        counts = run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lines.append, schedule=FAST,
                            once=True)
        assert counts == {job: 1 for job in FAST}
        assert lines[0].startswith("daemon started on ") and "offline" in lines[0]
        jobs = [ln.split(":", 1)[0] for ln in lines[1:-1]]
        assert jobs == ["snapshot", "digest", "autocompact", "dream", "archive", "recall", "embed"]
        assert lines[-1].startswith("daemon stopping")
        assert not any("failed" in ln for ln in lines)
        assert ws.memory.facts(""), "the pipeline learned something"
    finally:
        ws.close()
    check_consistent(workspace)


def test_external_jobs_run_when_supplied_and_are_skipped_with_a_note_when_not(workspace):
    ws = Workspace.open(workspace, writable=True)
    try:
        lines: list[str] = []
        seen: list[object] = []
        counts = run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lines.append,
                            schedule={"watch": 0.05}, once=True, jobs={"watch": lambda w: seen.append(w) or []})
        assert counts == {"watch": 1} and seen == [ws]
        assert "watch: 0 file(s) read, 0 event(s) appended" in lines
        lines.clear()
        assert run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lines.append,
                          schedule={"watch": 0.05}, once=True) == {}
        assert "watch: scheduled but not available here; skipped" in lines
    finally:
        ws.close()


def _replace_job(monkeypatch, name, run):  # noqa: ANN001, ANN202
    """Swap a registered job's run function for this test (undone after it)."""
    registry.jobs()  # the built-ins are registered
    monkeypatch.setitem(registry._JOBS, name, dataclasses.replace(registry.get(name), run=run))  # noqa: SLF001


def test_a_job_that_raises_is_logged_and_does_not_stop_the_others(workspace, monkeypatch):
    def broken(ws, options):  # noqa: ANN001, ANN202
        raise RuntimeError("digest exploded")

    _replace_job(monkeypatch, "digest", broken)
    ws = Workspace.open(workspace, writable=True)
    try:
        ws.append(messages("s1", 14))
        lines: list[str] = []
        counts = run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lines.append, schedule=FAST,
                            once=True)
        assert counts == {job: 1 for job in FAST}
        assert any(ln.startswith("digest: failed: RuntimeError: digest exploded") for ln in lines)
        after = [ln.split(":", 1)[0] for ln in lines[lines.index(next(ln for ln in lines if "exploded" in ln)):]]
        for job in ("autocompact", "dream", "archive"):
            assert job in after, f"{job} did not run after the failing digest"
        assert ws.sessions.index["s1"].last_consolidated == 6  # autocompact still worked
    finally:
        ws.close()


def test_a_job_failing_every_time_is_retried_at_its_next_turn(workspace, monkeypatch):
    calls = []

    def broken(ws, options):  # noqa: ANN001, ANN202
        calls.append(time.monotonic())
        raise ValueError("always")

    _replace_job(monkeypatch, "archive", broken)
    ws = Workspace.open(workspace, writable=True)
    stop = threading.Event()
    lines: list[str] = []
    t = threading.Thread(target=run_daemon, args=(ws, OfflineExtractor()),
                         kwargs={"stop": stop, "log": lines.append, "schedule": FAST})
    t.start()
    try:
        deadline = time.monotonic() + 5
        while len(calls) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        t.join(5)
        ws.close()
    assert not t.is_alive() and len(calls) >= 3
    assert sum(ln.startswith("snapshot:") for ln in lines) >= 3


def test_a_long_dream_is_sliced_so_the_other_jobs_run_between_its_turns(workspace, monkeypatch):
    """A first round over a big log is hundreds of Dream calls: the daemon runs a few a turn, the rest next turn."""
    from processors import daemon, dream

    monkeypatch.setattr(dream, "OFFLINE_BATCH", 4)
    monkeypatch.setattr(daemon, "DREAM_CALLS_PER_TURN", 2)
    ws = Workspace.open(workspace, writable=True)
    now = [0.0]
    stop = threading.Event()
    lines: list[str] = []

    def wait(seconds: float) -> None:
        now[0] += seconds
        if dream._pending(ws) == 0 or now[0] > 250:  # drained (or stuck: well before Dream's next 300 s turn)
            stop.set()

    try:
        ws.append(messages("s1", 60))
        counts = run_daemon(ws, OfflineExtractor(), stop=stop, log=lines.append, clock=lambda: now[0], wait=wait,
                            schedule={"snapshot": 0.05, "dream": 300})
        jobs = [ln.split(":", 1)[0] for ln in lines[1:-1]]
        snapshots = [i for i, j in enumerate(jobs) if j == "snapshot"]
        dreams = [i for i, j in enumerate(jobs) if j == "dream"]
        assert len(dreams) >= 3 and counts["dream"] == len(dreams)
        assert snapshots[1] < dreams[-1]  # snapshot ran between Dream's turns, not after all of them
        assert dream._pending(ws) == 0 and now[0] < 250  # and Dream drained everything long before its interval
    finally:
        ws.close()


def test_a_once_round_still_drains_dream(workspace, monkeypatch):
    from processors import daemon, dream

    monkeypatch.setattr(dream, "OFFLINE_BATCH", 4)
    monkeypatch.setattr(daemon, "DREAM_CALLS_PER_TURN", 2)
    ws = Workspace.open(workspace, writable=True)
    try:
        ws.append(messages("s1", 60))
        counts = run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lambda _m: None,
                            schedule={"dream": 300}, once=True)
        assert counts == {"dream": 1} and dream._pending(ws) == 0
    finally:
        ws.close()


def test_an_unknown_job_in_the_schedule_is_a_config_error(workspace):
    ws = Workspace.open(workspace, writable=True)
    try:
        with pytest.raises(ConfigError, match="dreem"):
            run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lambda _m: None,
                       schedule={"dreem": 1.0}, once=True)
    finally:
        ws.close()


def test_a_job_with_no_interval_does_not_run(workspace):
    ws = Workspace.open(workspace, writable=True)
    try:
        ws.append(messages("s1", 4))
        counts = run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lambda _m: None,
                            schedule={"snapshot": 1.0}, once=True)
        assert counts == {"snapshot": 1}
        assert ws.history.entries == []
    finally:
        ws.close()


def test_a_daemon_thread_stopped_while_messages_keep_arriving_leaves_the_log_consistent(workspace):
    ws = Workspace.open(workspace, writable=True)
    stop = threading.Event()
    lines: list[str] = []
    counts: dict[str, int] = {}
    t = threading.Thread(target=lambda: counts.update(run_daemon(ws, OfflineExtractor(), stop=stop,
                                                                 log=lines.append, schedule=FAST)))
    t.start()
    try:
        for round_ in range(12):
            ws.append(messages(f"chat{round_ % 3}", 5, start=5 * (round_ // 3)))
            time.sleep(0.06)
    finally:
        stop.set()
        stopped = time.monotonic()
        t.join(10)
    assert not t.is_alive() and time.monotonic() - stopped < 5
    assert all(counts[job] >= 2 for job in FAST), counts
    assert not any("failed" in ln for ln in lines), [ln for ln in lines if "failed" in ln]
    runs = ws.dream_runs.runs()
    assert not [r.run_id for r in runs if r.failed], "stopping between jobs never interrupts a Dream run"
    assert replay.check(ws).clean
    ws.close()
    run_everything_once(workspace)
    check_consistent(workspace)


# -- the real command, killed --------------------------------------------------------------


def evlog_exe() -> str:
    exe = os.path.join(os.path.dirname(sys.executable), "evlog")
    assert os.path.exists(exe), f"no console script at {exe}"
    return exe


def start_daemon(home: str) -> subprocess.Popen:
    return subprocess.Popen([evlog_exe(), "--home", home, "daemon", "--llm", "offline"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_until_started(home: str, child: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until the daemon ``child`` has written its pid to ``state/daemon.json`` (its loop is about to start).

    On a loaded machine the interpreter's start alone can take longer than the kill delays of a test;
    counting from here, a kill lands in the daemon's work, not in its imports.
    """
    import json

    path = os.path.join(home, DAEMON_STATE)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and child.poll() is None:
        try:
            with open(path, encoding="utf-8") as f:
                if json.load(f).get("pid") == child.pid:
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    raise AssertionError(f"the daemon did not start within {timeout} s (exit code {child.poll()})")


@pytest.mark.slow
def test_sigkilled_daemon_restarted_many_times_loses_and_duplicates_nothing(evlog_home):
    home = str(evlog_home)
    init_workspace(home, schedule={job: 0.2 for job in JOBS if job not in EXTERNAL_JOBS})
    ws = Workspace.open(home, writable=True)
    ws.append(messages("alpha", 20) + messages("beta", 14))
    ws.close()
    rng = random.Random(20261205)
    rounds = int(os.environ.get("EVLOG_DAEMON_KILL_ROUNDS", "8"))
    next_msg = {"alpha": 20, "beta": 14, "gamma": 0}
    killed_running = 0
    for r in range(rounds):
        child = start_daemon(home)
        wait_until_started(home, child)
        time.sleep(rng.uniform(0.25, 1.6))
        alive = child.poll() is None
        child.send_signal(signal.SIGKILL)
        _out, err = child.communicate(timeout=10)
        assert alive, f"round {r}: the daemon exited on its own: {err.decode()[-2000:]}"
        assert child.returncode == -signal.SIGKILL
        killed_running += b"snapshot:" in err
        # more messages arrive while it is down, plus a re-import of some old ones
        ws = Workspace.open(home, writable=True, lock_timeout=5)
        try:
            for key in rng.sample(sorted(next_msg), 2):
                n = rng.randrange(5, 40)
                ws.append(messages(key, n, start=next_msg[key]))
                next_msg[key] += n
            olds = [e for e in ws.log.read() if isinstance(e, MessageAppended)]
            ws.append([MessageAppended(session_key=e.session_key, message_id=f"re-{r}-{e.message_id}", role=e.role,
                                       content=e.content, timestamp=e.timestamp) for e in rng.sample(olds, 3)])
        finally:
            ws.close()
    assert killed_running >= rounds // 2, "most kills should hit a daemon that was doing work"
    run_everything_once(home)
    check_consistent(home)
    res = subprocess.run([evlog_exe(), "--home", home, "verify"], capture_output=True, timeout=60)
    assert res.returncode == 0, res.stderr.decode()
    res = subprocess.run([evlog_exe(), "--home", home, "replay", "--check"], capture_output=True, timeout=60)
    assert res.returncode == 0, res.stdout.decode() + res.stderr.decode()


def test_sigterm_makes_the_daemon_exit_0_promptly_with_offsets_committed(evlog_home):
    home = str(evlog_home)
    init_workspace(home, schedule={job: 0.2 for job in JOBS if job not in EXTERNAL_JOBS})
    ws = Workspace.open(home, writable=True)
    ws.append(messages("alpha", 20))
    ws.close()
    child = start_daemon(home)
    try:
        deadline = time.monotonic() + 15
        # wait until it has done real work: the dream ran and wrote MEMORY.md
        while time.monotonic() < deadline and not os.path.exists(os.path.join(home, "memory", "MEMORY.md")):
            time.sleep(0.05)
        assert child.poll() is None
        sent = time.monotonic()
        child.send_signal(signal.SIGTERM)
        _out, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0, err.decode()[-2000:]
    assert time.monotonic() - sent < 6
    text = err.decode()
    assert "daemon started" in text and "daemon stopping" in text and "snapshot:" in text
    # nothing is left for the processors: every offset was committed
    ws = Workspace.open(home, writable=True)
    try:
        before = ws.log.last_seq
        assert processors.run(ws, "snapshot").entries_written == 0
        assert processors.run(ws, "digest").entries_written == 0
        assert processors.run(ws, "dream", llm=OfflineExtractor()).runs == []
        assert ws.log.last_seq == before
        assert replay.check(ws).clean
    finally:
        ws.close()
    check_consistent(home)


def test_sigint_stops_the_daemon_cleanly_too(evlog_home):
    home = str(evlog_home)
    init_workspace(home, schedule={job: 0.2 for job in JOBS if job not in EXTERNAL_JOBS})
    child = start_daemon(home)
    try:
        # the signal is for a running daemon, not one still importing (a loaded machine takes seconds):
        # wait for its first heartbeat, then give it a moment in its loop
        heartbeat = os.path.join(home, "state", "daemon.json")
        deadline = time.monotonic() + 30
        while not os.path.exists(heartbeat) and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        _out, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0, err.decode()[-2000:]
    assert "daemon stopping" in err.decode()
