"""Archive: short-term -> long-term memory. Promote what is used, drop what is stale.

A short-term entry is *used* when a caller chose to use it (``memory.recalled``) or a fact
in MEMORY.md cites one of its messages (see ``projections.memory_entries``). Used entries are promoted
(``memory.ltm.promoted``); entries unused for ``stale_after_days`` are dropped
(``memory.stm.dropped``; the log keeps them); the rest wait. An entry whose sessions were all
deleted is dropped, never promoted (an erased one is no longer in the log at all). One atomic append per run;
running it again without new use or time passing changes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from eventlog.events import Event, LtmPromoted, StmDropped
from eventlog.timeutil import epoch_of
from processors.runner import RunReport

if TYPE_CHECKING:
    from processors.context import Context


def run_archive(ws: Context, *, clock: Callable[[], float] = time.time) -> RunReport:
    """Promote used short-term entries and drop stale ones (see the module docstring)."""
    report = RunReport("archive")
    with ws.lock:
        entries = ws.memory_entries
        now = clock()
        out: list[Event] = []
        live = ws.sessions.index
        for e in entries.entries("stm"):
            report.events_read += 1
            if e.session_keys and not any(k in live for k in e.session_keys):
                out.append(StmDropped(entry_id=e.entry_id, reason="its session was deleted"))
            elif e.recalled or e.cited_by:
                why = f"recalled {e.recalled} time(s)" if e.recalled else f"cited by fact {', '.join(e.cited_by[:3])}"
                out.append(LtmPromoted(entry_id=e.entry_id, reason=why))
            elif (now - epoch_of(e.last_used or e.created_at)) / 86400 > ws.config.stale_after_days:
                out.append(StmDropped(entry_id=e.entry_id, reason=f"unused for more than {ws.config.stale_after_days:g} days"))
        if out:
            ws.append(out)
        report.count(out)
        report.entries_written = len(out)
    return report
