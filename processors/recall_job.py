"""The recall job: catch the search index (``projections.recall``) up with the log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from processors.context import Context


@dataclass
class RecallReport:
    """What catching the recall index up did."""

    processor: str = "recall"
    seq: int = 0

    @property
    def failed(self) -> bool:
        """Never: an index that cannot be caught up raises."""
        return False

    def summary(self) -> str:
        """One line for the daemon's log."""
        return f"index at seq {self.seq}"


def run_recall(ctx: Context) -> RecallReport:
    """Bring the recall index up to the log's end."""
    from projections.recall.workspace import update

    report = RecallReport()
    ix = update(ctx.home, ws=ctx)
    try:
        report.seq = ix.seq
    finally:
        ix.close()
    return report
