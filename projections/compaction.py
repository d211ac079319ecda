"""The compaction projection: consecutive consolidation failures per session (AutoCompact's backoff).

Folds ``consolidation.failed`` (one more failure, at this time) and
``session.consolidated`` (success: the streak ends). No files.
"""

from __future__ import annotations

import msgspec

from eventlog.events import ConsolidationFailed, Event, SessionConsolidated
from projections.base import StateProjection


class Streak(msgspec.Struct, kw_only=True):
    """A session's current run of failures."""

    failures: int
    last_failure: str  # ts of the newest one
    reason: str = ""


class CompactionState(msgspec.Struct, kw_only=True):
    """Everything the projection keeps."""

    streaks: dict[str, Streak] = {}


class CompactionProjection(StateProjection):
    """Failure streaks by session key (see the module docstring)."""

    name = "compaction"
    consumes = frozenset({"consolidation.failed", "session.consolidated"})
    state_type = CompactionState
    s: CompactionState

    @property
    def streaks(self) -> dict[str, Streak]:
        """session key -> its current run of failures."""
        return self.s.streaks

    def apply(self, ev: Event) -> None:
        match ev:
            case ConsolidationFailed():
                s = self.streaks.get(ev.session_key)
                self.streaks[ev.session_key] = Streak(failures=(s.failures if s else 0) + 1, last_failure=ev.ts,
                                                      reason=ev.reason)
            case SessionConsolidated():
                self.streaks.pop(ev.session_key, None)
