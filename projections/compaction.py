"""The compaction projection: consecutive consolidation failures per session (AutoCompact's backoff).

Folds ``consolidation.failed`` (one more failure, at this time) and
``session.consolidated`` (success: the streak ends). No files.
"""

from __future__ import annotations

from typing import Any

import msgspec

from eventlog.events import ConsolidationFailed, Event, SessionConsolidated
from projections.base import Projection


class Streak(msgspec.Struct, kw_only=True):
    """A session's current run of failures."""

    failures: int
    last_failure: str  # ts of the newest one
    reason: str = ""


class CompactionProjection(Projection):
    """Failure streaks by session key (see the module docstring)."""

    name = "compaction"
    consumes = frozenset({"consolidation.failed", "session.consolidated"})

    def __init__(self, root: str, fs, *, live: bool = True) -> None:  # noqa: ANN001
        super().__init__(root, fs, live=live)
        self.load(None)

    def load(self, state: Any) -> None:
        self.streaks: dict[str, Streak] = {} if state is None else msgspec.convert(state, dict[str, Streak])

    def state(self) -> Any:
        return self.streaks

    def outputs(self) -> list[str]:
        return []

    def flush(self) -> None:
        pass

    def apply(self, ev: Event) -> None:
        match ev:
            case ConsolidationFailed():
                s = self.streaks.get(ev.session_key)
                self.streaks[ev.session_key] = Streak(failures=(s.failures if s else 0) + 1, last_failure=ev.ts,
                                                      reason=ev.reason)
            case SessionConsolidated():
                self.streaks.pop(ev.session_key, None)
