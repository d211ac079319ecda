"""Memory within minutes (issue 21, item 6): with only the daemon running on its default schedule,
what a session said is a fact within 3 minutes of its capture (SessionEnd -> next SessionStart).

The daemon runs with a simulated clock: its waits move the clock instead of sleeping, so the
test takes seconds, and the messages are appended by another writer (what a hook does) while
the daemon runs.
"""

from __future__ import annotations

import threading

from eventlog.app.workspace import Workspace, load_config
from eventlog.events import MessageAppended, SessionCreated
from processors.daemon import run_daemon
from processors.llm import OfflineExtractor

CAPTURED_AT = 45.0  # simulated seconds after the daemon started: a session ends and its hook captures it
LIMIT = 180.0


def test_a_captured_session_is_a_fact_within_three_minutes_on_the_default_schedule(workspace):
    assert load_config(workspace).schedule["dream"] <= 120, "the default schedule runs Dream every 2 minutes"
    now = [0.0]
    stop = threading.Event()
    learned_at: list[float] = []
    ws = Workspace.open(workspace, writable=True)

    def capture() -> None:  # the SessionEnd hook: another writer appends the session
        with Workspace.open(workspace, writable=True) as hook:
            hook.append([SessionCreated(session_key="cli:me"),
                         MessageAppended(session_key="cli:me", message_id="1", role="user",
                                         content="I prefer pytest over unittest.", timestamp="2026-11-01T10:00:00Z")])

    def wait(seconds: float) -> None:
        before = now[0]
        now[0] += seconds
        if before < CAPTURED_AT <= now[0]:
            capture()
        if not learned_at and any("pytest" in f.text for f in ws.memory.facts("")):
            learned_at.append(now[0])
        if learned_at or now[0] > 3 * LIMIT:
            stop.set()

    try:
        run_daemon(ws, OfflineExtractor(), stop=stop, log=lambda _line: None, clock=lambda: now[0], wait=wait)
    finally:
        ws.close()
    assert learned_at, "Dream never learned the fact on the default schedule"
    assert learned_at[0] - CAPTURED_AT <= LIMIT, f"the fact came {learned_at[0] - CAPTURED_AT:.0f} s after capture"


def test_on_the_old_daily_schedule_it_would_not(workspace):
    """The same run with Dream once a day: no fact within the limit (the test above would fail)."""
    now = [0.0]
    stop = threading.Event()
    seen: list[bool] = []
    ws = Workspace.open(workspace, writable=True)

    def wait(seconds: float) -> None:
        before = now[0]
        now[0] += seconds
        if before < CAPTURED_AT <= now[0]:
            ws.append([SessionCreated(session_key="cli:me"),
                       MessageAppended(session_key="cli:me", message_id="1", role="user",
                                       content="I prefer pytest over unittest.", timestamp="2026-11-01T10:00:00Z")])
        if now[0] > CAPTURED_AT + LIMIT:
            seen.append(any("pytest" in f.text for f in ws.memory.facts("")))
            stop.set()

    try:
        schedule = {**ws.config.schedule, "dream": 86400.0}
        run_daemon(ws, OfflineExtractor(), stop=stop, log=lambda _line: None, clock=lambda: now[0], wait=wait,
                   schedule=schedule)
    finally:
        ws.close()
    assert seen == [False]
