"""AutoCompact (issue 5), driven by an injected clock.

The same fake clock stamps the log's events and tells AutoCompact the time, so idle
minutes, failure times and backoff windows are exact.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from datetime import UTC, datetime

import pytest

import processors
from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.events import ConsolidationFailed, MessageAppended, SessionConsolidated, SessionCreated
from processors.autocompact import BASE_BACKOFF_MINUTES, MAX_PER_CYCLE, rank, run_autocompact
from processors.consolidator import consolidate_session
from processors.llm import Completion, LLMCallError, Prompt
from processors.llm.fake import FakeLLM

T0 = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC).timestamp()


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def set(self, minutes: float) -> None:
        """The time ``minutes`` after T0."""
        self.t = T0 + minutes * 60


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def ws(workspace, clock):
    w = Workspace.open(workspace, writable=True, clock=clock)
    yield w
    w.close()


def session(ws: Workspace, key: str, messages: int, idle_minutes: float, *, start: int = 0) -> None:
    """``messages`` messages whose newest is ``idle_minutes`` before T0."""
    when = iso(T0 - idle_minutes * 60)
    evs = [SessionCreated(session_key=key, created_at=when)] if start == 0 else []
    evs += [MessageAppended(session_key=key, message_id=f"{key}-{i}", role="user" if i % 2 == 0 else "assistant",
                            content=f"message {i} of {key}", timestamp=when) for i in range(start, start + messages)]
    ws.append(evs)


def statuses(cands) -> dict[str, str]:  # noqa: ANN001
    return {c.session_key: c.status for c in cands}


def test_candidates_are_ranked_by_idle_minutes_times_messages_and_at_most_3_run(ws, clock):
    session(ws, "a", 20, 60)   # 1200
    session(ws, "b", 10, 200)  # 2000
    session(ws, "c", 40, 40)   # 1600
    session(ws, "d", 12, 90)   # 1080
    session(ws, "e", 30, 5)    # 150, but active
    session(ws, "f", 6, 500)   # nothing old enough to consolidate
    llm = FakeLLM(*["summary"] * 10)
    report = run_autocompact(ws, llm, clock=clock)
    assert [(c.session_key, c.priority, c.status) for c in report.candidates] == [
        ("b", 2000.0, "ready"), ("c", 1600.0, "ready"), ("a", 1200.0, "ready"), ("d", 1080.0, "ready"),
        ("e", 150.0, "active")]
    assert [(c.idle_minutes, c.messages) for c in report.candidates][:2] == [(200.0, 10), (40.0, 40)]
    assert [r.session_key for r in report.ran] == ["b", "c", "a"]
    assert all(r.status == "consolidated" for r in report.ran)
    assert MAX_PER_CYCLE == 3
    # the next cycle takes the one left over; the active one still waits
    report = run_autocompact(ws, llm, clock=clock)
    assert [r.session_key for r in report.ran] == ["d"]
    assert statuses(report.candidates) == {"d": "ready", "e": "active"}
    assert [m.session_key for m in [e for e in ws.log.read() if isinstance(e, SessionConsolidated)]] == \
        ["b", "c", "a", "d"]


def test_an_active_session_is_skipped_until_it_has_been_idle_long_enough(ws, clock):
    session(ws, "busy-chat", 50, 29)
    llm = FakeLLM("summary")
    report = run_autocompact(ws, llm, clock=clock)
    assert statuses(report.candidates) == {"busy-chat": "active"} and report.ran == [] and llm.history == []
    clock.set(1)  # 30 minutes idle now
    report = run_autocompact(ws, llm, clock=clock)
    assert [r.session_key for r in report.ran] == ["busy-chat"]
    assert run_autocompact(ws, llm, clock=clock, idle_minutes=30).candidates == []


def test_the_idle_threshold_is_a_parameter(ws, clock):
    session(ws, "s", 12, 10)
    assert statuses(rank(ws, now=clock(), idle_minutes=30)) == {"s": "active"}
    assert statuses(rank(ws, now=clock(), idle_minutes=5)) == {"s": "ready"}


class BlockingLLM(FakeLLM):
    def __init__(self, *outputs) -> None:  # noqa: ANN002
        super().__init__(*outputs)
        self.entered = threading.Event()
        self.release = threading.Event()

    def complete(self, prompt: Prompt) -> Completion:
        self.entered.set()
        assert self.release.wait(10)
        return super().complete(prompt)


def test_a_session_being_consolidated_is_skipped_as_busy(ws, clock):
    session(ws, "held", 30, 300)
    session(ws, "free", 12, 60)
    slow = BlockingLLM("summary of held")
    t = threading.Thread(target=consolidate_session, args=(ws, slow, "held"))
    t.start()
    try:
        assert slow.entered.wait(5)
        llm = FakeLLM("summary of free")
        report = run_autocompact(ws, llm, clock=clock)
        assert statuses(report.candidates) == {"held": "busy", "free": "ready"}
        assert [r.session_key for r in report.ran] == ["free"]
        assert len(llm.history) == 1
    finally:
        slow.release.set()
        t.join(10)
    held = [e for e in ws.log.read() if isinstance(e, SessionConsolidated) and e.session_key == "held"]
    assert len(held) == 1


def test_sessions_in_backoff_do_not_take_a_slot_of_the_cycle(ws, clock):
    session(ws, "top", 50, 100)
    for k in ("p", "q", "r", "s", "t"):
        session(ws, k, 10, 60)
    report = run_autocompact(ws, FakeLLM(LLMCallError("down", kind="server"), "x", "y"), clock=clock)
    assert [(r.session_key, r.status) for r in report.ran] == [("top", "failed"), ("p", "consolidated"),
                                                              ("q", "consolidated")]
    clock.set(1)
    report = run_autocompact(ws, FakeLLM("1", "2", "3"), clock=clock)
    assert report.candidates[0].session_key == "top" and report.candidates[0].status == "backoff"
    assert [r.session_key for r in report.ran] == ["r", "s", "t"]


def _cycle(ws: Workspace, clock: Clock, minutes: float, answer) -> list[str]:  # noqa: ANN001
    clock.set(minutes)
    llm = FakeLLM(answer) if answer is not None else FakeLLM()
    report = run_autocompact(ws, llm, clock=clock)
    return [r.status for r in report.ran]


def test_a_failing_session_backs_off_5_10_20_minutes_with_exact_boundaries_and_success_resets_it(ws, clock):
    session(ws, "s", 12, 60)
    fail = LLMCallError("overloaded", kind="overloaded")
    assert _cycle(ws, clock, 0, fail) == ["failed"]
    [c] = rank(ws, now=T0 + 60)
    assert (c.status, c.backoff_until) == ("backoff", iso(T0 + 5 * 60))
    assert _cycle(ws, clock, 5 - 1 / 60, None) == []          # 4:59 after the failure: still waiting
    assert _cycle(ws, clock, 5, fail) == ["failed"]           # 5:00: tried again, fails again
    assert rank(ws, now=T0 + 5 * 60)[0].backoff_until == iso(T0 + 15 * 60)
    assert _cycle(ws, clock, 15 - 1 / 60, None) == []         # 10 minutes after the 2nd failure, minus 1 s
    assert _cycle(ws, clock, 15, fail) == ["failed"]
    assert rank(ws, now=T0 + 15 * 60)[0].backoff_until == iso(T0 + 35 * 60)
    assert _cycle(ws, clock, 35 - 1 / 60, None) == []         # 20 minutes after the 3rd, minus 1 s
    assert ws.compaction.streaks["s"].failures == 3
    assert _cycle(ws, clock, 35, "a fine summary") == ["consolidated"]
    assert "s" not in ws.compaction.streaks
    assert BASE_BACKOFF_MINUTES == 5
    # reset: the next failure backs off 5 minutes again, not 40
    session(ws, "s", 4, 60, start=12)
    clock.set(100)
    assert _cycle(ws, clock, 100, fail) == ["failed"]
    assert rank(ws, now=T0 + 100 * 60)[0].backoff_until == iso(T0 + 105 * 60)
    failures = [e for e in ws.log.read() if isinstance(e, ConsolidationFailed)]
    assert [e.ts[:19] for e in failures] == [iso(T0 + m * 60)[:19] for m in (0, 5, 15, 100)]


def test_one_failing_session_does_not_stop_the_others_in_its_cycle(ws, clock):
    session(ws, "bad", 30, 100)
    session(ws, "good", 12, 60)
    report = run_autocompact(ws, FakeLLM(LLMCallError("boom", kind="server"), "summary"), clock=clock)
    assert [(r.session_key, r.status) for r in report.ran] == [("bad", "failed"), ("good", "consolidated")]


def test_backoff_survives_closing_and_reopening_the_workspace(workspace, clock):
    ws = Workspace.open(workspace, writable=True, clock=clock)
    session(ws, "s", 12, 60)
    _cycle(ws, clock, 0, LLMCallError("down", kind="server"))
    _cycle(ws, clock, 5, LLMCallError("down", kind="server"))
    ws.close()
    shutil.rmtree(os.path.join(workspace, "state"))  # the checkpoint is disposable: the log holds the state
    ws = Workspace.open(workspace, writable=True, clock=clock)
    try:
        [c] = rank(ws, now=T0 + 14 * 60)
        assert (c.status, c.backoff_until) == ("backoff", iso(T0 + 15 * 60))
        assert _cycle(ws, clock, 14, None) == []
        assert _cycle(ws, clock, 15, "summary") == ["consolidated"]
    finally:
        ws.close()


def test_autocompact_on_the_command_line_prints_ranked_candidates_and_what_ran(workspace, cli_runner):
    ws = Workspace.open(workspace, writable=True)
    now = time.time()
    old = iso(now - 3 * 3600)
    recent = iso(now - 60)
    evs = []
    for key, when, n in (("old-small", old, 10), ("old-big", old, 20), ("recent", recent, 30)):
        evs += [MessageAppended(session_key=key, message_id=f"{key}{i}", role="user", content=f"I prefer option {i}",
                                timestamp=when) for i in range(n)]
    ws.append(evs)
    ws.close()
    res = cli_runner.invoke(cli, ["run", "autocompact", "--llm", "offline", "--json"])
    assert res.exit_code == 0, res.stderr
    [line] = res.stdout.splitlines()
    report = json.loads(line)
    assert [(c["session_key"], c["status"]) for c in report["candidates"]] == [
        ("old-big", "ready"), ("old-small", "ready"), ("recent", "active")]
    assert [(r["session_key"], r["status"]) for r in report["ran"]] == [
        ("old-big", "consolidated"), ("old-small", "consolidated")]
    res = cli_runner.invoke(cli, ["run", "autocompact", "--llm", "offline"])
    assert res.exit_code == 0 and "recent" in res.stdout


def test_processors_run_autocompact_uses_the_configured_idle_minutes(evlog_home):
    from eventlog.app.workspace import init_workspace

    init_workspace(str(evlog_home), idle_minutes=1.0)
    ws = Workspace.open(str(evlog_home), writable=True)
    try:
        when = iso(time.time() - 5 * 60)
        ws.append([MessageAppended(session_key="k", message_id=str(i), role="user", content=f"m{i}", timestamp=when)
                   for i in range(12)])
        report = processors.run(ws, "autocompact", llm=FakeLLM("summary"))
        assert [r.status for r in report.ran] == ["consolidated"]
    finally:
        ws.close()


HOLD_THE_LOCK = """
import sys
from eventlog.app.workspace import Workspace
from processors.consolidator import lock_name

with Workspace.open(sys.argv[1]) as ws, ws.try_processor_lock(lock_name(sys.argv[2])) as held:
    print("held" if held else "not-held", flush=True)
    sys.stdin.readline()
"""


def test_a_consolidation_running_in_another_process_is_busy_for_autocompact(ws, workspace, clock):
    """The busy state is the session's processor lock, so it is seen across processes
    (a process-global set of running sessions would show "ready" here and run it twice)."""
    import subprocess
    import sys

    session(ws, "held", 30, 300)
    session(ws, "free", 12, 60)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [os.getcwd(), os.environ.get("PYTHONPATH", "")] if p)}
    with subprocess.Popen([sys.executable, "-c", HOLD_THE_LOCK, workspace, "held"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=env) as child:
        assert child.stdin is not None and child.stdout is not None
        try:
            assert child.stdout.readline().strip() == "held"
            report = run_autocompact(ws, FakeLLM("summary of free"), clock=clock)
            assert statuses(report.candidates) == {"held": "busy", "free": "ready"}
            assert [r.session_key for r in report.ran] == ["free"]
            assert consolidate_session(ws, FakeLLM("x"), "held").status == "busy"
        finally:
            child.stdin.write("\n")
            child.stdin.flush()
            child.wait(30)
    assert statuses(rank(ws, now=clock()))["held"] == "ready"


def test_a_session_another_writer_creates_while_ranking_does_not_break_the_cycle(ws, workspace, clock, monkeypatch):
    """The views catch up on access: a session appended by another process between two
    candidates grew the dict rank() was iterating (the chaos run's daemon logged
    'dictionary changed size during iteration')."""
    import processors.autocompact as autocompact

    session(ws, "a", 12, 60)
    session(ws, "b", 12, 90)
    other = Workspace.open(workspace, writable=True, clock=clock)
    real = autocompact.is_consolidating
    calls = []

    def is_consolidating_while_another_writer_works(w, key):  # noqa: ANN001, ANN202
        if not calls:
            session(other, "late", 12, 120)
        calls.append(key)
        return real(w, key)

    monkeypatch.setattr(autocompact, "is_consolidating", is_consolidating_while_another_writer_works)
    try:
        report = run_autocompact(ws, FakeLLM(*["summary"] * 5), clock=clock)
    finally:
        other.close()
    assert statuses(report.candidates) == {"a": "ready", "b": "ready"}  # the late one waits for the next cycle
    assert statuses(rank(ws, now=clock()))["late"] == "ready"
