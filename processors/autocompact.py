"""AutoCompact: pick idle sessions worth consolidating, a few per cycle, with backoff.

Candidates are sessions idle for at least ``idle_minutes`` with messages old enough to
consolidate (see ``processors.consolidator``) and no consolidation running. Priority is
idle minutes x message count; at most ``MAX_PER_CYCLE`` (3) run per cycle. A session
whose consolidation failed backs off 5, 10, 20, ... minutes after its last failure
(doubling per consecutive failure, reset by a success). The failures are events in the
log (``consolidation.failed``), so the backoff survives restarts. The clock is injected.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eventlog.timeutil import epoch_of, iso_of
from processors.consolidator import ConsolidationResult, consolidate_session, is_consolidating, pending_messages
from processors.llm import LLM

if TYPE_CHECKING:
    from processors.context import Context

MAX_PER_CYCLE = 3
BASE_BACKOFF_MINUTES = 5.0
DEFAULT_IDLE_MINUTES = 30.0


@dataclass
class Candidate:
    """A session AutoCompact looked at."""

    session_key: str
    idle_minutes: float
    messages: int
    priority: float
    status: str  # ready, active, busy, backoff, nothing-to-do
    backoff_until: str = ""


@dataclass
class AutoCompactReport:
    """The ranked candidates and what ran."""

    processor: str = "autocompact"
    candidates: list[Candidate] = field(default_factory=list)
    ran: list[ConsolidationResult] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """False: a failed consolidation is recorded and backed off, never a failure of the cycle."""
        return False

    def summary(self) -> str:
        """One line for the daemon's log."""
        return f"{len(self.ran)} consolidation(s): " + ", ".join(f"{r.session_key} {r.status}" for r in self.ran)


def rank(ws: Context, *, now: float, idle_minutes: float = DEFAULT_IDLE_MINUTES) -> list[Candidate]:
    """Every session with something to consolidate, best first, with why it may not run."""
    streaks = ws.compaction.streaks
    out = []
    # a snapshot: the views catch up on access, so another writer's new session would grow the dict mid-loop
    for key, s in list(ws.sessions.index.items()):
        first, end = pending_messages(ws, key)
        if end <= first:
            continue
        idle = max(0.0, (now - epoch_of(s.updated_at)) / 60)
        cand = Candidate(key, round(idle, 2), s.count, round(idle * s.count, 2), "ready")
        if idle < idle_minutes:
            cand.status = "active"
        elif is_consolidating(ws, key):
            cand.status = "busy"
        elif key in streaks:
            streak = streaks[key]
            until = epoch_of(streak.last_failure) + BASE_BACKOFF_MINUTES * 60 * 2 ** (streak.failures - 1)
            if now < until:
                cand.status, cand.backoff_until = "backoff", iso_of(until)
        out.append(cand)
    out.sort(key=lambda c: (-c.priority, c.session_key))
    return out


def run_autocompact(ws: Context, llm: LLM, *, clock: Callable[[], float] = time.time,
                    idle_minutes: float = DEFAULT_IDLE_MINUTES) -> AutoCompactReport:
    """One AutoCompact cycle (see the module docstring)."""
    report = AutoCompactReport(candidates=rank(ws, now=clock(), idle_minutes=idle_minutes))
    for cand in [c for c in report.candidates if c.status == "ready"][:MAX_PER_CYCLE]:
        report.ran.append(consolidate_session(ws, llm, cand.session_key))
    return report
