"""The offsets projection: where every processor is, and what it lost on the way.

Folds ``offset.committed`` (a processor's position in the log), ``diary.digested`` (the
digest's position in each day's diary), ``offset.reset`` (a position that did not hold
and was moved, with the bytes that were skipped) and ``diary.trimmed`` (bytes a trim
dropped before the digest read them). No files: ``evlog offsets`` renders this state.
"""

from __future__ import annotations

import msgspec

from eventlog.events import DiaryDigested, DiaryTrimmed, Event, OffsetCommitted, OffsetReset
from projections.base import StateProjection


class Position(msgspec.Struct, kw_only=True):
    """A processor's last committed position in the log."""

    seq: int = 0
    segment: str = ""
    position: int = 0
    fingerprint: str = ""
    committed_at: str = ""
    resets: int = 0
    lost_bytes: int = 0  # bytes it was never able to read (trimmed before it got there)
    lost_records: int = 0


class OffsetsState(msgspec.Struct, kw_only=True):
    """Everything the projection keeps."""

    processors: dict[str, Position] = {}
    digest: dict[str, int] = {}  # date -> logical diary offset read up to (logs from before the digest followed events)
    last_digested_seq: int = 0  # seq of the newest diary.digested event (where the event-following digest starts)


class OffsetsProjection(StateProjection):
    """Processor positions and recorded losses (see the module docstring)."""

    name = "offsets"
    consumes = frozenset({"offset.committed", "offset.reset", "diary.digested", "diary.trimmed"})
    state_type = OffsetsState

    def position(self, processor: str) -> Position:
        """A processor's position (a fresh one if it never committed)."""
        return self.s.processors.get(processor) or Position()

    def apply(self, ev: Event) -> None:
        match ev:
            case OffsetCommitted():
                p = self.s.processors.setdefault(ev.processor, Position())
                p.seq, p.segment, p.position, p.fingerprint, p.committed_at = ev.record_seq, ev.segment, ev.position, ev.fingerprint, ev.ts
            case DiaryDigested():
                if ev.end > self.s.digest.get(ev.date, 0):
                    self.s.digest[ev.date] = ev.end
                self.s.last_digested_seq = ev.seq
                self.s.processors.setdefault("digest", Position()).committed_at = ev.ts
            case OffsetReset():
                p = self.s.processors.setdefault(ev.processor, Position())
                p.resets += 1
                p.lost_bytes += ev.lost_bytes
                if ev.date:
                    self.s.digest[ev.date] = ev.to_offset
                elif ev.to_seq > ev.from_seq + 1:
                    p.lost_records += ev.to_seq - ev.from_seq - 1
            case DiaryTrimmed():
                if ev.undigested_bytes:
                    self.s.processors.setdefault("digest", Position()).lost_bytes += ev.undigested_bytes
