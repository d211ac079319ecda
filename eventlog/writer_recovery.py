"""Recovery: what a writer must cut or quarantine, planned from what is on disk, then applied.

The first turn of a writer recovers the log: a torn or damaged tail of the active segment
(a writer that died mid-append; the lock is free, so nobody is writing it) is saved to
``log/quarantine/`` and cut off, and the cut is recorded as a ``log.recovered`` event.
Damage that a crash cannot explain (a sealed segment, intact records after damaged
bytes, a missing segment) raises ``CorruptionError`` naming segment, byte offset and seq;
``repair=True`` cuts there on purpose and says so in the log. A later turn that finds a
torn tail (another writer died during its turn) recovers it the same way.

The ``plan_*`` functions only read: they return what to do (``OpenPlan``, ``RepairPlan``,
``TailCut``) or raise. ``Recovery`` applies a plan (moves, cuts, unseals) and returns the
``log.recovered`` event that describes it; the writer appends that event.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from eventlog.errors import CorruptionError
from eventlog.events import LogRecovered
from eventlog.fsio import FileSystem
from eventlog.reader import LogReader
from eventlog.segments import ScanResult, index_path, scan_segment, segment_bases, segment_name

QUARANTINE_DIR = "quarantine"


@dataclass(frozen=True)
class TailCut:
    """Cut segment ``base`` at ``valid_end`` (of ``size`` bytes), keeping the cut bytes in quarantine."""

    base: int
    valid_end: int
    size: int
    reason: str
    records_after: int = 0


@dataclass(frozen=True)
class OpenPlan:
    """How a writer takes up the log: its active segment and what to do to it before appending."""

    base: int  # the active segment's base seq (0: the log is empty, create segment 1)
    scan: ScanResult | None = None  # what a scan of the active segment found
    unseal: bool = False  # the active segment is read-only: a roll died before the next segment existed
    last_ts: str = ""  # the newest ts the log holds (of the active segment, or of the one before it)
    cut: TailCut | None = None  # a torn tail to cut


@dataclass(frozen=True)
class RepairPlan:
    """What ``repair`` does to sealed segments: quarantine ``quarantine`` (whole), and maybe cut one."""

    quarantine: list[int] = field(default_factory=list)  # bases of the segments to move into quarantine
    reason: str = ""  # set when the quarantine itself is the recovery (a gap): recorded as such
    cut: TailCut | None = None  # a sealed segment to cut (then it becomes the active one)


def tail_cut(res: ScanResult, *, strict: bool = True) -> TailCut:
    """The cut of a scanned segment's damaged tail; ``strict``: refuse what is no torn write (intact records after it)."""
    d = res.damage
    assert d is not None
    if d.records_after and strict:
        raise CorruptionError(
            f"{segment_name(res.base)} is damaged at byte {d.offset} (seq {d.seq}: {d.reason}) and "
            f"{d.records_after} intact record(s) follow, so this is not a torn write; "
            "run 'evlog verify' to see it and 'evlog repair' to cut the log there (the cut bytes are kept)",
            segment=segment_name(res.base), offset=d.offset, seq=d.seq,
        )
    return TailCut(res.base, res.valid_end, res.size, d.reason, d.records_after)


def check_sealed_chain(reader: LogReader, bases: list[int]) -> None:
    """Raise ``CorruptionError`` unless every sealed segment ends right before the next one starts."""
    for base, nxt in zip(bases, bases[1:], strict=False):
        last = reader.last_record_seq(base)
        if last is None or last != nxt - 1:
            found = "no readable last record" if last is None else f"its last record has seq {last}"
            raise CorruptionError(
                f"sealed segment {segment_name(base)} does not end right before {segment_name(nxt)} "
                f"({found}; expected seq {nxt - 1}): a segment is missing or damaged; run 'evlog verify'",
                segment=segment_name(base), seq=nxt - 1,
            )


def plan_open(reader: LogReader, *, repair: bool = False) -> OpenPlan:
    """What opening the log for writing finds (reads only; raises ``CorruptionError`` on unexplained damage)."""
    bases = segment_bases(reader.dir)
    if not bases:
        return OpenPlan(0)
    check_sealed_chain(reader, bases)
    base = bases[-1]
    path = reader.seg_path(base)
    unseal = not os.stat(path).st_mode & 0o200
    res = scan_segment(path, base, strict=repair)
    last_ts = res.last_ts
    if not last_ts and base > 1:
        prev = reader.find(base - 1)
        if prev is not None:
            last_ts = prev.event.ts
    cut = tail_cut(res, strict=not repair) if res.damage is not None else None
    return OpenPlan(base, res, unseal, last_ts, cut)


def plan_repair(reader: LogReader) -> RepairPlan | None:
    """Where ``repair`` cuts: the first damage in any sealed segment, and every later segment (reads only)."""
    bases = segment_bases(reader.dir)
    expected = bases[0] if bases else 1
    for i, base in enumerate(bases):
        if base != expected:  # a gap or overlap: the previous segment ends the good log
            return RepairPlan(bases[i:], f"repair: segment {segment_name(base)} starts at seq {base} "
                                         f"where {expected} was expected")
        res = scan_segment(reader.seg_path(base), base, strict=True)
        later = bases[i + 1 :]
        if later and res.damage is None and res.next_seq == later[0]:
            expected = res.next_seq
            continue
        if not later:
            return None  # the active segment: ordinary recovery (with repair) handles it
        reason = res.damage.reason if res.damage else f"{segment_name(later[0])} does not continue at seq {res.next_seq}"
        return RepairPlan(later, "", TailCut(base, res.valid_end, res.size, f"repair: {reason}"))
    return None


class Recovery:
    """Applies recovery plans to a log directory; each method returns the ``log.recovered`` event to record."""

    def __init__(self, reader: LogReader, fs: FileSystem, clock: Callable[[], float]) -> None:
        self.reader = reader
        self.fs = fs
        self.clock = clock
        self.dir = reader.dir

    def repair(self, plan: RepairPlan) -> LogRecovered | None:
        """Quarantine the plan's segments and cut the one it names."""
        moved = self.quarantine(plan.quarantine)
        if plan.reason:
            return self._record_quarantine(plan.quarantine, moved, plan.reason)
        if plan.cut is None:
            return None
        self.fs.unseal(self.reader.seg_path(plan.cut.base))
        rec = self.cut(plan.cut)
        return msgspec.structs.replace(rec, segments_quarantined=moved)

    def quarantine(self, bases: list[int]) -> list[str]:
        """Move whole segments (and their indexes) into log/quarantine/; returns their names."""
        qdir = os.path.join(self.dir, QUARANTINE_DIR)
        os.makedirs(qdir, exist_ok=True)
        moved = []
        for b in bases:
            self.fs.rename(self.reader.seg_path(b), os.path.join(qdir, segment_name(b)))
            moved.append(segment_name(b))
            if os.path.exists(index_path(self.dir, b)):
                os.unlink(index_path(self.dir, b))
        self.fs.fsync_dir(self.dir)
        return moved

    def _record_quarantine(self, bases: list[int], moved: list[str], reason: str) -> LogRecovered:
        """The segment before the quarantined ones becomes the active one again: unsealed, its index dropped."""
        total = sum(os.path.getsize(os.path.join(self.dir, QUARANTINE_DIR, name)) for name in moved)
        remaining = segment_bases(self.dir)
        prev = remaining[-1] if remaining else bases[0]
        if os.path.exists(index_path(self.dir, prev)):
            os.unlink(index_path(self.dir, prev))
        if remaining:
            self.fs.unseal(self.reader.seg_path(prev))
        return LogRecovered(
            segment=segment_name(prev),
            offset=os.path.getsize(self.reader.seg_path(prev)) if remaining else 0,
            bytes_truncated=total, reason=reason, quarantine=QUARANTINE_DIR, segments_quarantined=moved,
        )

    def cut(self, cut: TailCut) -> LogRecovered:
        """Save the bytes after ``valid_end`` in quarantine, truncate the segment there durably, drop its index."""
        path = self.reader.seg_path(cut.base)
        with open(path, "rb") as f:
            f.seek(cut.valid_end)
            data = f.read()
        qdir = os.path.join(self.dir, QUARANTINE_DIR)
        os.makedirs(qdir, exist_ok=True)
        qname = f"{segment_name(cut.base)}.{cut.valid_end}.{int(self.clock())}.bad"
        self.fs.atomic_write(os.path.join(qdir, qname), data)
        fd = self.fs.open_append(path)
        try:
            self.fs.truncate(fd, cut.valid_end)
            self.fs.fsync(fd)
        finally:
            self.fs.close(fd)
        if os.path.exists(index_path(self.dir, cut.base)):
            os.unlink(index_path(self.dir, cut.base))  # it may describe the bytes just cut
        self.reader.forget_index(cut.base)  # the cache must not outlive the cut
        return LogRecovered(
            segment=segment_name(cut.base), offset=cut.valid_end, bytes_truncated=cut.size - cut.valid_end,
            reason=cut.reason, quarantine=f"{QUARANTINE_DIR}/{qname}", records_after_damage=cut.records_after,
        )
