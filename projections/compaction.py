"""The compaction projection: consecutive consolidation failures per session (AutoCompact's backoff).

Folds ``consolidation.failed`` (one more failure, at this time) and
``session.consolidated`` (success: the streak ends, and the consolidator's position in the
session moves: the seq of the last summarised message and how many messages that is; a mark
from an older evlog has a count only, seq 0). No files.
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


class Position(msgspec.Struct, kw_only=True):
    """Where the consolidator is in one session: after message seq ``seq`` (0: only a count is known)."""

    seq: int
    count: int


class CompactionState(msgspec.Struct, kw_only=True):
    """Everything the projection keeps."""

    streaks: dict[str, Streak] = {}
    positions: dict[str, Position] = {}


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

    @property
    def positions(self) -> dict[str, Position]:
        """session key -> the consolidator's position (its newest ``session.consolidated``)."""
        return self.s.positions

    def apply(self, ev: Event) -> None:
        match ev:
            case ConsolidationFailed():
                s = self.streaks.get(ev.session_key)
                self.streaks[ev.session_key] = Streak(failures=(s.failures if s else 0) + 1, last_failure=ev.ts,
                                                      reason=ev.reason)
            case SessionConsolidated():
                self.streaks.pop(ev.session_key, None)
                self.positions[ev.session_key] = Position(seq=ev.up_to_seq, count=ev.up_to_count)
