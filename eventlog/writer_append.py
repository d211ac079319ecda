"""Appending: one event or an atomic batch, framed, stamped and written to the active segment.

Appends are redacted first (``eventlog.redact``: the secrets door every event passes,
INVARIANTS I24), then validated (``eventlog.validate``: ``validate_event`` and the type
check that decodes the framed line back; a plain message skips both, see
``validate.plain_message``), then get ``seq`` (dense from 1) and ``ts`` (UTC, ms, never
decreasing) and each append's lines are written with one ``write``; a batch is framed with
``more`` counters so a crash keeps all of it or none (``writer_batch``). Durability policies:
``fsync`` (an append returns after ``fdatasync``), ``group`` and ``none`` (synced later, see
``writer_group``). Events carrying a ``dedup`` key are written once: appending a known key
returns the first event's seq and writes nothing.

``Appender`` runs inside the writer's turn (the caller holds the lock and the mutex).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from eventlog.codec import hash_key, stamp_and_frame
from eventlog.errors import ConflictError, WriterClosedError
from eventlog.events import Event
from eventlog.fsio import FileSystem
from eventlog.redact import redact_event
from eventlog.validate import UNWRITABLE, check_types, plain_message, unwritable, validate_event
from eventlog.writer_batch import claim_keys, prepare_batch
from eventlog.writer_state import WriterState


class Appender:
    """Writes appends into the writer's state; remembers the newest line and append it wrote."""

    def __init__(self, state: WriterState, fs: FileSystem, clock: Callable[[], float], *, fsync: bool) -> None:
        self.state = state
        self.fs = fs
        self.clock = clock
        self.fsync = fsync  # the fsync durability: every append returns after fdatasync
        self.last_line = b""  # the newest line this writer wrote (see LogWriter.last_written)
        self.last_append = (0, 0)  # first and last seq of this writer's newest append (0, 0: none)

    def check_writable(self, expected: int | None) -> None:
        """Raise unless appends may go on: the writer is open, not poisoned, and the log ends at ``expected``."""
        state = self.state
        if state.closed:
            raise WriterClosedError("the log is closed")
        if state.seg.poisoned:
            raise WriterClosedError(f"the writer refuses appends after an I/O error ({state.seg.poisoned}); "
                                    "reopen the log")
        last = state.next_seq - 1
        if expected is not None and expected != last:
            raise ConflictError(f"expected the log to end at seq {expected}, but it ends at seq {last}")

    def one(self, event: Event, expected: int | None) -> int:
        """Append one event; its seq (the first one's seq if its dedup key is known)."""
        state = self.state
        seg = state.seg
        if expected is not None or seg.poisoned or state.closed:
            self.check_writable(expected)
        event = redact_event(event)  # the secrets door (I24): before the line, its checksum and its dedup entry
        plain = plain_message(event)
        if not plain:
            validate_event(event)
        key = event.dedup
        if key:
            h = hash_key(key)
            first = state.dedup.get(h)
            if first is not None:
                return first
        claimed: dict[int, int] | None = None  # the further keys it claims (``events``: ``dedup_keys``)
        if not plain and getattr(event, "dedup_keys", None):
            claimed = {h: 0} if key else {}  # its own key first: claiming it again is refused
            claim_keys(event, 0, state.dedup.get, claimed)
        seq = state.next_seq
        ms = int(self.clock() * 1000)
        stamp = state.stamp
        try:  # validate.frame_checked, inline
            line = stamp_and_frame(event, seq, stamp.text if ms <= stamp.ms else stamp.at(ms))
        except UNWRITABLE as e:
            raise unwritable(event, e) from None
        if not plain:
            check_types([line], [event])
        self.last_line = line
        pos = seg.size
        end = pos + len(line)
        if end > seg.limit or pos >= seg.next_mark:
            self.write(line, None)  # the general path: roll, index mark
        else:
            try:
                self.fs.write(seg.fd, line)
            except OSError as e:
                raise seg.failed("write failed", e) from e
            seg.size = end
            state.next_seq = seq + 1
            if self.fsync:
                seg.sync()
            else:
                seg.unsynced += 1
        if key:
            state.dedup.add(h, seq)
        if claimed:
            for k in claimed:
                state.dedup.add(k, seq)
        self.last_append = (seq, seq)
        return seq

    def batch(self, events: list[Event], expected: int | None, sync: bool = True) -> list[int]:
        """Append events atomically (see ``LogWriter.append_batch``); each one's seq."""
        self.check_writable(expected)
        state = self.state
        seq = state.next_seq
        b = prepare_batch(events, state.dedup.get, seq, lambda: state.stamp.at(int(self.clock() * 1000)))
        if not b.lines:
            return b.seqs
        self.last_line = b.lines[-1]
        self.write(b"".join(b.lines), b.lines, sync)
        for k, i in b.keys.items():
            if b.seqs[i] >= seq:  # written now (not a known duplicate)
                state.dedup.add(k, b.seqs[i])
        self.last_append = (seq, seq + len(b.lines) - 1)
        return b.seqs

    def write(self, data: bytes, lines: list[bytes] | None, sync: bool = True) -> None:
        """Write one append's bytes (``lines``: a batch's lines, None for one event), rolling first if they
        would not fit, then sync (``sync=False``: a batch whose fdatasync a later ``sync()`` does)."""
        state = self.state
        seg = state.seg
        if seg.size and seg.size + len(data) > seg.limit:
            state.roll()
        seg.write(data, state.next_seq, lines)
        count = 1 if lines is None else len(lines)
        state.next_seq += count
        if self.fsync and sync:
            seg.sync()
        else:
            seg.unsynced += count

    def record_recovery(self) -> None:
        """Append the pending ``log.recovered`` event, durably whatever the policy."""
        state = self.state
        rec = state.recovered
        assert rec is not None
        seq = self.one(rec, None)
        state.recovered = msgspec.structs.replace(rec, seq=seq)
        state.seg.sync("fsync of the recovery record failed")
