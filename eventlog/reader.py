"""Reading the log: verified reads from any seq, follow, find, verify, stats. Readers never lock.

A reader looks only at bytes on disk, so any number of processes can read while writers
append. Every line it returns was checked: framing and checksum (``codec.line_ok``),
dense seqs, and batch completeness. The live end of the newest segment is held back
until it is whole: a line still being written, or the lines of an atomic batch whose
last line is not there yet (``complete_end`` finds where the last whole batch ends by
walking back from the end of the file, so a batch of any size costs one pass and memory
for one read chunk, not for the batch). In a sealed segment such a tail is corruption.

``follow`` waits for new events (like ``tail -F``): it crosses segment rolls, and if the
file under it is cut or replaced it finds its place again by seq, never returning a record
twice or from the middle of its bytes.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec

from eventlog import codec
from eventlog.codec import DECODER, FRAME_DECODER, SUFFIX_LEN, line_ok, lines_ok
from eventlog.errors import CorruptionError, InvalidEventError
from eventlog.events import Event
from eventlog.segments import (
    ERASE_JOURNAL,
    INDEX_EVERY,
    READ_CHUNK,
    batch_more,
    foreign_files,
    iter_lines,
    load_index,
    scan_segment,
    segment_bases,
    segment_name,
)


class Record(msgspec.Struct, frozen=True, gc=False):
    """An event with where it lives: segment base, byte range and its checksum.

    A frozen Struct (equality, hash and ``repr`` as the frozen dataclass it was): every verified
    ``records`` read builds one per event, in 0.1 us where the dataclass's ``__init__`` took 1.1 us.
    """

    seq: int
    segment: int
    pos: int
    end: int
    fingerprint: str
    event: Event


@dataclass
class Problem:
    """One thing ``verify`` found wrong: where (segment file, byte offset, seq) and what."""

    segment: str
    offset: int
    seq: int
    kind: str
    message: str
    damaged: bool = True


@dataclass
class Stats:
    """Size and content of a log."""

    segments: int = 0
    events: int = 0
    bytes: int = 0
    first_seq: int = 0
    last_seq: int = 0
    by_type: dict[str, int] = field(default_factory=dict)


class _TypeOnly(msgspec.Struct):
    type: str = ""


_TYPE_DECODER = msgspec.json.Decoder(_TypeOnly)


def complete_end(path: str, start: int, stop: int | None = None) -> int:
    """Byte position in ``[start, stop)`` where the last whole batch (or single event) ends.

    Walks back from the end over complete lines: the first line without a ``more``
    member (or with a broken one) closes a batch, so everything up to it is whole.
    Lines after it belong to a batch still being written (or torn) and are held back.
    """
    with open(path, "rb") as f:
        end = os.fstat(f.fileno()).st_size if stop is None else stop
        if end <= start:
            return start
        tail = b""
        pos = end  # file position of tail[0] once read
        while pos > start:
            step = min(READ_CHUNK, pos - start)
            pos -= step
            f.seek(pos)
            tail = f.read(step) + tail
            last_nl = tail.rfind(b"\n")
            while last_nl >= 0:
                line_start = tail.rfind(b"\n", 0, last_nl) + 1
                if line_start == 0 and pos > start:
                    break  # the line may begin before what we have read: read further back
                line = tail[line_start : last_nl + 1]
                n = len(line)
                if n <= SUFFIX_LEN or not batch_more(line, n):
                    return pos + last_nl + 1
                last_nl = line_start - 1
            tail = tail[: last_nl + 1]  # only what is left to look at (never the whole batch)
        return start


def _extend_index(path: str, base: int, entries: list[tuple[int, int]], size: int) -> list[tuple[int, int]] | None:
    """``entries`` (a segment's sparse index when it was shorter) carried on to ``size`` by scanning
    only from the last entry; None if that entry no longer starts the record it names (the file
    was rewritten, not appended to): the caller then scans the whole segment."""
    seq, pos = entries[-1]
    if size - pos <= INDEX_EVERY:
        return entries
    res = scan_segment(path, base, start=pos, start_seq=seq)
    if not res.index or res.index[0] != (seq, pos):
        return None
    return entries[:-1] + res.index


def _chunks(path: str, pos: int, end: int) -> Iterator[bytes]:
    """Whole lines of ``[pos, end)`` (``end`` is a line boundary), about a read chunk at a time."""
    with open(path, "rb") as f:
        f.seek(pos)
        carry = b""
        while pos < end:
            data = f.read(min(READ_CHUNK, end - pos))
            if not data:
                break
            pos += len(data)
            if carry:
                data = carry + data  # only a partial line is ever carried
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut:
                yield data[:cut]


def _verify_chunk(body: bytes, lines: list[bytes], seg: str, pos: int, first_seq: int) -> list[Event]:
    """Check framing, checksums and dense seqs of a chunk of lines (without newlines); return the events."""
    if not lines_ok(lines):  # then find the first bad line
        k = next(k for k, ln in enumerate(lines) if not line_ok(ln))
        off = pos + sum(len(x) + 1 for x in lines[:k])
        raise CorruptionError(f"{seg}: checksum mismatch at byte {off} (seq {first_seq + k}); run 'evlog verify'",
                              segment=seg, offset=off, seq=first_seq + k)
    try:
        evs = DECODER.decode_lines(body)
    except msgspec.MsgspecError:
        evs = []
        for k, ln in enumerate(lines):
            try:
                evs.append(codec.decode(ln))  # with the upcasts of lines an older evlog wrote
            except msgspec.MsgspecError as e:
                off = pos + sum(len(x) + 1 for x in lines[:k])
                raise InvalidEventError(f"{seg} byte {off} (seq {first_seq + k}): cannot decode event: {e}") from e
    n = len(evs)
    if evs[0].seq != first_seq or evs[-1].seq != first_seq + n - 1 or [e.seq for e in evs] != list(range(first_seq, first_seq + n)):
        k = next(k for k, e in enumerate(evs) if e.seq != first_seq + k)
        off = pos + sum(len(ln) + 1 for ln in lines[:k])
        raise CorruptionError(f"{seg}: seq {evs[k].seq} at byte {off} where {first_seq + k} was expected",
                              segment=seg, offset=off, seq=first_seq + k)
    return evs


class LogReader:
    """Reads a log directory; see the module docstring."""

    def __init__(self, log_dir: str) -> None:
        self.dir = log_dir
        self._index_cache: dict[int, tuple[int, list[tuple[int, int]]]] = {}
        self._end_cache: tuple[int, int, int] = (0, -1, 0)  # (newest base, its size, last seq there)

    def seg_path(self, base: int) -> str:
        """Path of the segment whose first seq is ``base``."""
        return os.path.join(self.dir, segment_name(base))

    # ------------------------------------------------------------------ positions

    @property
    def log_start(self) -> int:
        """Seq of the first event the log holds (1 unless old segments were removed)."""
        bases = segment_bases(self.dir)
        return bases[0] if bases else 1

    @property
    def last_seq(self) -> int:
        """Seq of the newest complete event on disk (0 for an empty log)."""
        bases = segment_bases(self.dir)
        if not bases:
            return 0
        for base in reversed(bases):
            try:
                size = os.path.getsize(self.seg_path(base))
            except FileNotFoundError:
                continue
            cached_base, cached_size, cached_last = self._end_cache
            if (cached_base, cached_size) == (base, size):
                return cached_last
            idx = self.index(base)
            start, start_seq = (idx[-1][1], idx[-1][0]) if idx else (0, base)
            res = scan_segment(self.seg_path(base), base, start=start, start_seq=start_seq)
            if res.next_seq > base:
                self._end_cache = (base, size, res.next_seq - 1)
                return res.next_seq - 1
        return bases[0] - 1

    def index(self, base: int) -> list[tuple[int, int]]:
        """The sparse (seq, position) index of a segment: cached, from its file, or rebuilt by a scan."""
        path = self.seg_path(base)
        try:
            size = os.path.getsize(path)
        except FileNotFoundError:
            return []
        cached = self._index_cache.get(base)
        if cached and cached[0] == size:
            return cached[1]
        entries = None
        if cached and cached[0] < size and cached[1]:
            entries = _extend_index(path, base, cached[1], size)  # the active segment grew: index only the new bytes
        if not entries:
            bases = segment_bases(self.dir)
            entries = load_index(self.dir, base, size, prefix_ok=bool(bases) and base == bases[-1])
            if entries:
                entries = _extend_index(path, base, entries, size)  # an index file written when it was shorter
            if not entries:  # none, or one written while the segment was empty (it indexes nothing)
                entries = scan_segment(path, base).index if size else []
        self._index_cache[base] = (size, entries)
        return entries

    def forget_index(self, base: int) -> None:
        """Drop the cached index of segment ``base`` (a writer cut it: the cache must not outlive the cut)."""
        self._index_cache.pop(base, None)

    def locate(self, base: int, seq: int) -> tuple[int, int]:
        """(byte position, seq there) of a line of segment ``base`` at or before ``seq``."""
        if seq <= base:
            return 0, base  # the segment's start: no index needed
        idx = self.index(base)
        i = bisect_right(idx, (seq, 1 << 62)) - 1
        while i >= 0:
            s, pos = idx[i]
            if self._seq_at(base, pos) == s:
                return pos, s
            self._index_cache.pop(base, None)  # a stale entry: distrust the cached copy
            i -= 1
        return 0, base

    def _seq_at(self, base: int, pos: int) -> int | None:
        for _p, line in iter_lines(self.seg_path(base), pos, pos + (1 << 16)):
            if line[-1:] == b"\n" and codec.checksum_ok(line):
                return FRAME_DECODER.decode(line).seq
            return None
        return None

    def last_record_seq(self, base: int) -> int | None:
        """Seq of the last whole record of a sealed segment (reads backwards from the end)."""
        path = self.seg_path(base)
        size = os.path.getsize(path)
        if size == 0:
            return base - 1
        with open(path, "rb") as f:
            f.seek(size - 1)
            if f.read(1) != b"\n":
                return None
            step = 4096
            start = size - 1
            while True:
                start = max(start - step, 0)
                f.seek(start)
                chunk = f.read(size - start)
                nl = chunk.rfind(b"\n", 0, len(chunk) - 1)
                if nl >= 0 or start == 0:
                    line = chunk[nl + 1 :]
                    break
                step *= 2
        if not codec.checksum_ok(line):
            return None
        return FRAME_DECODER.decode(line).seq

    # ------------------------------------------------------------------ reading

    def find(self, seq: int) -> Record | None:
        """The record with ``seq``, or None if the log does not hold it."""
        for rec in self.records(seq, until_seq=seq):
            return rec
        return None

    def read(self, from_seq: int = 1, *, until_seq: int | None = None) -> Iterator[Event]:
        """Events from ``from_seq`` to ``until_seq`` (inclusive) or the current end, verified."""
        return cast(Iterator[Event], self._scan(from_seq, until_seq, records=False))

    def records(self, from_seq: int = 1, *, until_seq: int | None = None) -> Iterator[Record]:
        """Like ``read`` but each event comes with its segment, byte range and fingerprint."""
        return cast(Iterator[Record], self._scan(from_seq, until_seq, records=True))

    def _scan(
        self, from_seq: int, until_seq: int | None, *, records: bool, cursor: list[int] | None = None
    ) -> Iterator[Event | Record]:
        """The one verifying read loop.

        Reads whole lines a chunk at a time up to the end of the last whole batch, checks
        every line's framing and checksum, decodes the chunk with one ``decode_lines`` call
        and checks that seqs are dense. ``cursor`` is ``[segment base, byte position, seq
        there]``; it always points after the last yielded record so ``follow`` can resume.
        """
        bases = segment_bases(self.dir)
        if not bases:
            return
        if cursor is None:
            from_seq = max(from_seq, bases[0])
            cursor = self._cursor_at(bases, from_seq)
        elif cursor[0] not in bases:
            seg = segment_name(cursor[0])
            raise CorruptionError(f"segment {seg} disappeared while being read", segment=seg)
        i = bases.index(cursor[0])
        until = until_seq if until_seq is not None else 1 << 62
        while True:
            base, pos, expected = cursor
            seg = segment_name(base)
            path = self.seg_path(base)
            sealed = i + 1 < len(bases)
            end = complete_end(path, pos)
            if sealed and end != os.path.getsize(path):
                what = "a torn record" if not _ends_in_newline(path) else "an incomplete atomic batch"
                raise CorruptionError(f"{seg}: sealed segment ends in {what} at byte {end}", segment=seg, offset=end)
            for body in _chunks(path, pos, end):
                lines = body.split(b"\n")
                lines.pop()
                evs = _verify_chunk(body, lines, seg, pos, expected)
                n = len(evs)
                lo = from_seq - expected if from_seq > expected else 0
                hi = until - expected + 1 if until < expected + n else n
                if records:
                    out: list[Any] = _records(lines, evs, base, pos, expected, lo, hi)
                else:
                    out = evs[lo:hi] if (lo or hi < n) else evs
                pos += len(body)
                expected += n
                cursor[0], cursor[1], cursor[2] = base, pos, expected
                yield from out
                if expected > until:
                    return
            if not sealed:
                return
            nxt = bases[i + 1]
            if nxt != expected:
                raise _gap(nxt, expected)
            i += 1
            cursor[0], cursor[1], cursor[2] = nxt, 0, nxt

    def follow(
        self,
        from_seq: int = 1,
        *,
        poll_interval: float = 0.01,
        stop: Callable[[], bool] | None = None,
        on_notice: Callable[[str], None] | None = None,
        on_idle: Callable[[], None] | None = None,
    ) -> Iterator[Record]:
        """Yield records from ``from_seq`` on, then wait for new ones (across rolls) until ``stop()``.

        ``on_idle`` is called each time the reader has caught up and is about to wait (the
        end of a batch: a consumer may flush its output and save its position then).

        If the file under the reader shrinks or is replaced (recovery cut a tail, a file
        was restored), the position is found again by seq and ``on_notice`` is told; a
        record is never returned twice or from the middle of its bytes. A segment that is
        sealed while the reader waits on it is just a roll: the reader moves on silently.
        """
        notice = on_notice or (lambda _msg: None)
        cursor: list[int] | None = None
        inode, inode_base = -1, -1  # the inode of the segment the cursor is in, when we reached it
        next_seq = max(from_seq, 1)
        full_check = 0.0  # monotonic time of the last full look (segment list, file identity)
        while True:
            if cursor is not None and self._idle(cursor) and time.monotonic() - full_check < 1.0:
                if stop is not None and stop():
                    return
                if on_idle is not None:
                    on_idle()
                time.sleep(poll_interval)  # nothing new in the active segment: one stat a poll
                continue
            full_check = time.monotonic()
            if cursor is not None and not self._cursor_holds(cursor, inode):
                notice(f"log changed under the reader at {segment_name(cursor[0])} byte {cursor[1]}; resuming at seq {next_seq}")
                cursor = None
            if cursor is None:
                cursor, next_seq = self._resume(next_seq, notice)
                if cursor is not None:
                    inode, inode_base = self._inode(cursor[0]), cursor[0]
            if cursor is not None:
                for rec in cast(Iterator[Record], self._scan(next_seq, None, records=True, cursor=cursor)):
                    if cursor[0] != inode_base:  # the scan crossed a roll into the next segment
                        inode, inode_base = self._inode(cursor[0]), cursor[0]
                    next_seq = rec.seq + 1
                    yield rec
                    if stop is not None and stop():
                        return
                if cursor[0] != inode_base:
                    inode, inode_base = self._inode(cursor[0]), cursor[0]
            if stop is not None and stop():
                return
            if on_idle is not None:
                on_idle()
            time.sleep(poll_interval)

    def _cursor_at(self, bases: list[int], seq: int) -> list[int]:
        """``[segment base, byte position, seq there]`` of a line at or before ``seq``."""
        i = max(bisect_right(bases, seq) - 1, 0)
        pos, at = self.locate(bases[i], seq)
        return [bases[i], pos, at]

    def _resume(self, next_seq: int, notice: Callable[[str], None]) -> tuple[list[int] | None, int]:
        """Where ``follow`` (re)starts: a cursor at ``next_seq`` or the log's start if that is gone (None: no log)."""
        bases = segment_bases(self.dir)
        if not bases:
            return None, next_seq
        start = max(next_seq, bases[0])
        if start != next_seq:
            notice(f"seq {next_seq} is no longer in the log; resuming at seq {start}")
        return self._cursor_at(bases, start), start

    def _idle(self, cursor: list[int]) -> bool:
        """True when the cursor sits at the end of a segment that is still being written."""
        try:
            st = os.stat(self.seg_path(cursor[0]))
        except FileNotFoundError:
            return False
        return st.st_size == cursor[1] and bool(st.st_mode & 0o200)  # sealed segments are read-only

    def _inode(self, base: int) -> int:
        try:
            return os.stat(self.seg_path(base)).st_ino
        except FileNotFoundError:
            return -1

    def _cursor_holds(self, cursor: list[int], inode: int) -> bool:
        """The file under the cursor is the one we read and still reaches the cursor."""
        try:
            st = os.stat(self.seg_path(cursor[0]))
        except FileNotFoundError:
            return False
        return st.st_ino == inode and st.st_size >= cursor[1]

    # ------------------------------------------------------------------ checking

    def verify(self) -> list[Problem]:
        """Check every byte of every segment; return all problems found (empty when clean).

        One pass per segment: the validating scan decodes every event fully (``strict``),
        so a checksummed line that is not a valid event is reported where it is. Erased lines
        (``log.erased``) are fine only where a later ``log.erasure`` authorises exactly them
        (``eventlog.erasure.unauthorised``); an erasure still under way is reported, not damage.
        """
        problems: list[Problem] = []
        for name in foreign_files(self.dir):
            stray = name.endswith(".tmp")
            problems.append(Problem(name, -1, -1, "stray-file" if stray else "foreign-file",
                                    "temporary file left by a crash (removed on next open for write)" if stray else "not a log file",
                                    damaged=False))
        bases = segment_bases(self.dir)
        expected = bases[0] if bases else 1
        erasure_lines: list[tuple[str, int, int, bytes]] = []
        for i, base in enumerate(bases):
            seg = segment_name(base)
            last = i == len(bases) - 1
            if base != expected:
                kind = "gap" if base > expected else "overlap"
                problems.append(Problem(seg, 0, expected, kind,
                                        f"segment starts at seq {base} but seq {expected} was expected"
                                        + (f" (events {expected}..{base - 1} are missing)" if base > expected else "")))
            res = scan_segment(self.seg_path(base), base, strict=True)
            if res.damage is not None:
                d = res.damage
                if d.reason.startswith("not a valid event"):
                    problems.append(Problem(seg, d.offset, d.seq, "undecodable", f"checksum is fine but the event does not decode: {d.reason}"))
                else:
                    torn = last and not d.records_after
                    what = "torn tail" if torn else "damaged"
                    tail = f"; {res.size - d.offset} bytes from here" + (
                        " will be cut when the log is next written" if torn else f", {d.records_after} intact record(s) after it; 'evlog repair' cuts here"
                    )
                    if not last:
                        tail = "; sealed segments must never change (restore it from a backup, or 'evlog repair' cuts the log here)"
                    problems.append(Problem(seg, d.offset, d.seq, what, d.reason + tail))
            elif not last and res.valid_end != res.size:
                problems.append(Problem(seg, res.valid_end, res.next_seq, "damaged", "trailing bytes in a sealed segment"))
            erasure_lines += [(seg, pos, seq, line) for seq, pos, line in res.erasure_lines]
            # after damage in a sealed segment, trust the next name so one problem is reported once
            expected = bases[i + 1] if res.damage is not None and not last else res.next_seq
        problems += _erasure_problems(self.dir, erasure_lines)
        return problems

    def stats(self) -> Stats:
        """Count segments, events and bytes, and events by type (one full read)."""
        st = Stats()
        bases = segment_bases(self.dir)
        st.segments = len(bases)
        counts: Counter[str] = Counter()
        dec = _TYPE_DECODER.decode
        for base in bases:
            path = self.seg_path(base)
            st.bytes += os.path.getsize(path)
            for pos, line in iter_lines(path):
                if line[-1:] != b"\n":
                    continue  # the live end: a write in flight or a torn tail
                try:
                    if not codec.checksum_ok(line):
                        raise msgspec.DecodeError("checksum mismatch")
                    counts[dec(line).type] += 1
                except msgspec.MsgspecError as e:
                    seg = segment_name(base)
                    raise CorruptionError(f"{seg}: damaged record at byte {pos} ({e}); run 'evlog verify'", segment=seg, offset=pos) from e
        st.events = sum(counts.values())
        st.first_seq = bases[0] if bases and st.events else 0
        st.last_seq = st.first_seq + st.events - 1 if st.events else 0
        st.by_type = dict(sorted(counts.items()))
        return st


def _erasure_problems(log_dir: str, erasure_lines: list[tuple[str, int, int, bytes]]) -> list[Problem]:
    """Unauthorised ``log.erased`` lines (damage) and an erasure still under way (not damage)."""
    from eventlog import erasure  # the erasure module builds on this one

    out = [Problem(seg, off, seq, "unauthorised-erasure", why) for seg, off, seq, why in erasure.unauthorised(erasure_lines)]
    if erasure.pending(log_dir):
        out.append(Problem(ERASE_JOURNAL, -1, -1, "erasure-pending",
                           "an erasure was interrupted; the next 'evlog erase' or writable open completes it", damaged=False))
    return out


def _ends_in_newline(path: str) -> bool:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if not size:
            return True
        f.seek(size - 1)
        return f.read(1) == b"\n"


def _records(lines: list[bytes], evs: list[Event], base: int, pos: int, expected: int, lo: int, hi: int) -> list[Record]:
    """The records of one verified chunk's lines ``lo`` to ``hi`` (the chunk starts at byte ``pos``, seq ``expected``)."""
    out = []
    p = pos
    for k, line in enumerate(lines):
        e = p + len(line) + 1
        if lo <= k < hi:
            out.append(Record(expected + k, base, p, e, "xxh3-64:" + line[-18:-2].decode(), evs[k]))
        p = e
    return out


def _gap(nxt: int, expected: int) -> CorruptionError:
    """The error of a segment that does not continue where the one before it ended."""
    return CorruptionError(
        f"{segment_name(nxt)} starts at seq {nxt} but seq {expected} was expected "
        f"(events {min(expected, nxt)}..{max(expected, nxt) - 1} are missing or doubled; run 'evlog verify')",
        segment=segment_name(nxt), offset=0, seq=expected,
    )
