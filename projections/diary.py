"""The diary projection: ``diary/YYYY-MM-DD.md``, one line per ``diary.appended`` event.

A ``diary.lines`` event (what snapshots write now: many lines in one event) folds exactly
as one ``diary.appended`` per line, in order, so a log holding either shape or both
projects the same files.

Each day's file holds whole lines, oldest first, within the byte budget the snapshot
processor enforces with ``diary.trimmed`` events. A diary has a *logical* byte range
``[start, end)``: ``start`` grows by the bytes each trim drops, so a byte offset into the
diary keeps meaning the same byte after a trim (file position = logical offset - start).
That is what lets the digest validate its position instead of re-reading or skipping.

The in-memory state per day is ``start`` and the byte length of every line, enough to
plan a trim without reading the file; lines appended since the last flush wait in
``pending`` (a trim drops pending lines at once, so a long run holds at most about a
budget's worth). ``flush`` reads a dirty day's file once, checks its hash, drops and
appends lines and writes it back atomically.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import msgspec
import xxhash

from eventlog.events import DiaryAppended, DiaryLines, DiaryTrimmed, Event
from eventlog.fsio import FileSystem
from eventlog.validate import valid_date
from projections.base import Projection, ProjectionDrift
from projections.naming import safe_name

DIARY_DIR = "diary"


class DiaryDay(msgspec.Struct, kw_only=True):
    """What the projection knows about one day's diary."""

    date: str
    start: int = 0  # logical offset of the file's first byte
    lengths: list[int] = []  # byte length of each line in the file (with its newline)
    sources: list[int] = []  # seq of the message event each line came from (for audits)
    size: int = 0  # sum(lengths): file size
    file_hash: str = ""  # xxh3-64 of the file as last written; "" = never written

    @property
    def end(self) -> int:
        """Logical offset just past the last byte."""
        return self.start + self.size


class DiaryItem(NamedTuple):
    """One line a diary event adds, with what it came from."""

    line: str
    session_key: str
    message_id: str
    source_seq: int
    role: str
    dedup: str  # its message's dedup key


def diary_items(ev: DiaryAppended | DiaryLines) -> list[DiaryItem]:
    """The lines ``ev`` adds to its day's diary, in order, whichever of the two shapes it has."""
    if isinstance(ev, DiaryLines):
        return [DiaryItem(*item) for item in zip(ev.lines, ev.session_keys, ev.message_ids, ev.source_seqs, ev.roles,
                                                 ev.dedup_keys, strict=False)]
    return [DiaryItem(ev.line, ev.session_key, ev.message_id, ev.source_seq, ev.role, ev.dedup)]


def diary_file(date: str) -> str:
    """The relative path of a day's diary (a date that is not a real one, from an old log, gets a safe name)."""
    if valid_date(date):
        return os.path.join(DIARY_DIR, f"{date}.md")
    return os.path.join(DIARY_DIR, "invalid-dates", safe_name(date, ".md"))


def _hash(data: bytes) -> str:
    return "xxh3-64:" + xxhash.xxh3_64_hexdigest(data)


class _DiaryState(msgspec.Struct, kw_only=True):
    days: list[DiaryDay] = []
    legacy_horizon: int = 0


class DiaryProjection(Projection):
    """Daily diaries with logical offsets (see the module docstring)."""

    name = "diary"
    consumes = frozenset({"diary.appended", "diary.lines", "diary.trimmed"})

    def __init__(self, root: str, fs: FileSystem, *, live: bool = True) -> None:
        super().__init__(root, fs, live=live)
        self.load(None)

    def load(self, state: Any) -> None:
        self.days: dict[str, DiaryDay] = {}
        #: Highest message seq a line keyed the version 1 way came from (see processors.snapshot).
        self.legacy_horizon = 0
        if state is not None:
            saved = msgspec.convert(state, _DiaryState)
            for d in saved.days:
                self.days[d.date] = d
            self.legacy_horizon = saved.legacy_horizon
        self.pending: dict[str, list[bytes]] = {}
        self.to_drop: dict[str, int] = {}
        self.dirty: set[str] = set()

    def state(self) -> Any:
        return _DiaryState(days=list(self.days.values()), legacy_horizon=self.legacy_horizon)

    def outputs(self) -> list[str]:
        return [diary_file(d) for d in self.days]

    def owned_dirs(self) -> list[str]:
        return [DIARY_DIR]

    def apply(self, ev: Event) -> None:
        match ev:
            case DiaryAppended():
                if ev.key_version < 2 and ev.source_seq > self.legacy_horizon:
                    self.legacy_horizon = ev.source_seq
                self._add_lines(ev.date, [ev.line], [ev.source_seq])
            case DiaryLines():  # key version 2 always: the legacy horizon stays
                self._add_lines(ev.date, ev.lines, ev.source_seqs)
            case DiaryTrimmed():
                day = self.days.get(ev.date)
                if day is None:
                    return
                n = max(0, min(ev.dropped_lines, len(day.lengths)))  # an old log's odd count cannot break the fold
                dropped = day.lengths[:n]
                # The oldest lines go first: those still in the file, then pending ones, which are
                # dropped here and now (a long run trims far more than the budget it keeps).
                pend = self.pending.get(ev.date)
                from_pending = max(0, n - (len(day.lengths) - len(pend))) if pend else 0
                if pend and from_pending:
                    del pend[:from_pending]
                day.lengths = day.lengths[n:]
                day.sources = day.sources[n:]
                day.size -= sum(dropped)
                day.start = ev.start_after
                if n > from_pending:
                    self.to_drop[ev.date] = self.to_drop.get(ev.date, 0) + n - from_pending
                self.dirty.add(ev.date)

    def _add_lines(self, date: str, lines: list[str], sources: list[int]) -> None:
        day = self.days.get(date)
        if day is None:
            day = self.days[date] = DiaryDay(date=date)
        data = [line.encode() + b"\n" for line in lines]
        lengths = [len(b) for b in data]
        if len(sources) != len(lines):  # only a log written around validation: one source per line all the same
            sources = (list(sources) + [0] * len(lines))[: len(lines)]
        day.lengths.extend(lengths)
        day.sources.extend(sources)
        day.size += sum(lengths)
        self.pending.setdefault(date, []).extend(data)
        self.dirty.add(date)

    def sources_between(self, date: str, start: int, end: int) -> list[int]:
        """Message seqs of the lines in the logical byte range [start, end) of a day's diary."""
        day = self.days.get(date)
        if day is None:
            return []
        out, pos = [], day.start
        for length, seq in zip(day.lengths, day.sources, strict=False):
            if pos >= end:
                break
            if pos >= start:
                out.append(seq)
            pos += length
        return out

    def file_lines(self, day: DiaryDay) -> list[bytes]:
        """The lines of a day's file as last flushed (checked against the saved hash)."""
        if not day.file_hash:
            return []
        try:
            with open(self.path(diary_file(day.date)), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise ProjectionDrift(f"diary {day.date} is missing") from None
        if _hash(data) != day.file_hash:
            raise ProjectionDrift(f"diary {day.date} does not match its saved state")
        return data.splitlines(keepends=True)

    def flush(self) -> None:
        for date in sorted(self.dirty):
            day = self.days[date]
            lines = self.file_lines(day) + self.pending.pop(date, [])
            lines = lines[self.to_drop.pop(date, 0) :]
            data = b"".join(lines)
            if len(data) != day.size:
                raise ProjectionDrift(f"diary {date}: {len(data)} bytes where {day.size} were expected")
            self.write_file(diary_file(date), data)
            day.file_hash = _hash(data)
        self.dirty.clear()
