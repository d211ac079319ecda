"""Segment files: names, line scanning, validation and the sparse seq index.

The log is a directory of segment files ``log/<20-digit base seq>.jsonl``. A segment
holds the events from its base seq up to the next segment's base minus one, one
checksummed line each (see ``eventlog.codec``). Only the highest-named segment (the
*active* one) is ever written; the others are *sealed*: they were fsynced before the
next one was created and must never change again.

``scan_segment`` is the one validating pass over a segment: every line's checksum, its
seq (dense from the base), and atomic batches (a batch whose lines are not all there is
invalid as a whole). It reports where the valid bytes end and what the damage after
them looks like; recovery (``eventlog.log``) and ``verify`` decide what to do with it.

The one sanctioned change to a sealed segment is an erasure (``eventlog.erasure``): lines
replaced in place by ``log.erased`` markers with the same seq, each authorised by a later
``log.erasure`` event; the scan collects both kinds of line so ``verify`` can check that.

A sparse index ``<base>.idx`` maps every ~4 KiB of a sealed segment to (seq, byte
position) so reading from a seq does not scan the segment from the start. It is
disposable: stale or missing indexes are rebuilt from the segment bytes, and every
entry is checked against the line it points to before it is trusted.
"""

from __future__ import annotations

import os
import re
import struct
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field

import msgspec
import xxhash

from eventlog.codec import FRAME_DECODER, SUFFIX_LEN, checksum_ok, decode

SEGMENT_SUFFIX = ".jsonl"
INDEX_SUFFIX = ".idx"
INDEX_EVERY = 4096  # bytes between sparse index entries
READ_CHUNK = 1 << 20
_NAME_RE = re.compile(r"^(\d{20})\.jsonl$")
_MORE_MARK = b',"more":'
ERASURE_LINE_PREFIX = b'{"type":"log.eras'  # ``log.erased`` markers and ``log.erasure`` events (eventlog.erasure)
ERASE_JOURNAL = "ERASING"  # an erasure under way (eventlog.erasure)


def segment_name(base: int) -> str:
    """The file name of the segment whose first event has seq ``base``."""
    return f"{base:020d}{SEGMENT_SUFFIX}"


def segment_bases(log_dir: str) -> list[int]:
    """Base seqs of all segment files in ``log_dir``, ascending."""
    try:
        names = os.listdir(log_dir)
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for m in map(_NAME_RE.match, names) if m)


def foreign_files(log_dir: str) -> list[str]:
    """Names in ``log_dir`` that are neither segments, indexes nor the lock/dedup files."""
    known = {"LOCK", "LOCK.wait", "dedup.idx", "quarantine", ERASE_JOURNAL}
    out = []
    for name in sorted(os.listdir(log_dir)):
        if name in known or _NAME_RE.match(name):
            continue
        if name.endswith(INDEX_SUFFIX) and _NAME_RE.match(name[: -len(INDEX_SUFFIX)] + SEGMENT_SUFFIX):
            continue
        out.append(name)
    return out


def batch_more(line: bytes, n: int) -> int:
    """The ``more`` framing member of a checksummed line of length ``n`` (0 if absent)."""
    end = n - SUFFIX_LEN
    c = line[end - 1]
    if c < 48 or c > 57:  # the member is always a number right before the checksum
        return 0
    i = line.rfind(_MORE_MARK, max(0, end - 30), end)
    if i < 0 or not line[i + len(_MORE_MARK) : end].isdigit():
        return 0
    return int(line[i + len(_MORE_MARK) : end])


def iter_lines(path: str, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, bytes]]:
    """Yield ``(position, line)`` for each complete line from ``start``.

    A final piece without a newline is yielded last as-is (it does not end in ``\\n``),
    so callers can tell a torn tail from a complete line. ``stop`` bounds the bytes read.
    """
    with open(path, "rb") as f:
        f.seek(start)
        pos = start
        buf = b""
        remaining = None if stop is None else max(stop - start, 0)
        while True:
            want = READ_CHUNK if remaining is None else min(READ_CHUNK, remaining)
            chunk = f.read(want) if want else b""
            if remaining is not None:
                remaining -= len(chunk)
            if not chunk:
                break
            data = buf + chunk if buf else chunk
            i = 0
            find = data.find
            while True:
                nl = find(b"\n", i)
                if nl < 0:
                    break
                yield pos + i, data[i : nl + 1]
                i = nl + 1
            pos += i
            buf = data[i:]
        if buf:
            yield pos, buf


@dataclass
class Damage:
    """Where and why a segment stops being valid."""

    offset: int
    seq: int
    reason: str
    records_after: int = 0  # intact lines found after the damaged bytes


@dataclass
class ScanResult:
    """What a validating pass over one segment found."""

    base: int
    size: int
    valid_end: int  # bytes of whole valid records (and whole batches)
    next_seq: int  # seq the next record would have
    index: list[tuple[int, int]] = field(default_factory=list)  # (seq, pos) every ~INDEX_EVERY
    dedup: list[tuple[str, int]] = field(default_factory=list)  # (key, seq) of records carrying one
    last_ts: str = ""  # ts of the last valid record
    damage: Damage | None = None
    erasure_lines: list[tuple[int, int, bytes]] = field(default_factory=list)  # (seq, pos, line): erasure lines


def scan_segment(path: str, base: int, *, start: int = 0, start_seq: int | None = None, strict: bool = False,
                 index_from: int | None = None) -> ScanResult:
    """Validate a segment from ``start`` (a line boundary holding ``start_seq``).

    Index entries are taken every ``INDEX_EVERY`` bytes from ``index_from`` (default: ``start``),
    so a writer that continues a segment keeps the spacing. Stops at the first invalid line, a
    line out of seq order, or the torn tail; an incomplete batch is invalid as a whole. Looks
    past the damage only to count intact lines: a torn write (none) or damage in the middle (some).
    ``strict`` also decodes every event fully (as ``verify`` and ``repair`` do).
    """
    size = os.path.getsize(path)
    seq = base if start_seq is None else start_seq
    res = ScanResult(base=base, size=size, valid_end=start, next_seq=seq)
    batch_start_pos = batch_start_seq = -1
    batch_left = 0
    next_index_pos = start if index_from is None else index_from
    lines = iter_lines(path, start)
    ts = ""
    damage = None
    for pos, line in lines:
        n = len(line)
        reason = None
        if line[-1:] != b"\n" or not checksum_ok(line):
            reason = _frame_problem(line)
        else:
            try:
                fr = FRAME_DECODER.decode(line)
                if strict:
                    decode(line)
            except msgspec.DecodeError as e:
                reason = f"not a valid event ({e})"
            else:
                more = batch_more(line, n)
                if fr.seq != seq or (batch_left and more != batch_left - 1):
                    reason = _order_problem(fr.seq, seq, more, batch_left)
        if reason is not None:
            damage = _damage_at(pos, seq, reason, batch_left, batch_start_pos, batch_start_seq)
            break
        if not batch_left and more:
            batch_start_pos, batch_start_seq, batch_left = pos, seq, more + 1
        if pos >= next_index_pos:
            res.index.append((seq, pos))
            next_index_pos = pos + INDEX_EVERY
        keys = fr.all_keys()
        if keys:
            res.dedup.extend((key, seq) for key in keys)
        if line.startswith(ERASURE_LINE_PREFIX):
            res.erasure_lines.append((seq, pos, line))
        ts = fr.ts
        seq += 1
        batch_left -= batch_left > 0  # counts down the lines of a batch still due (0: none)
        if not batch_left:
            res.valid_end = pos + n
            res.next_seq = seq
            res.last_ts = ts
    if damage is None and batch_left:
        damage = Damage(batch_start_pos, batch_start_seq, "incomplete atomic batch (cut off at end of file)")
    if damage is not None:
        _stop_at(res, damage, lines)
    return res


def _frame_problem(line: bytes) -> str:
    """Why a line is no whole checksummed log line: torn, or its checksum fails."""
    if line[-1:] != b"\n":
        return "torn record (no newline at end of file)"
    return "checksum mismatch" if line.rfind(b',"h":"xxh3-64:') > 0 else "not a checksummed log line"


def _order_problem(found: int, seq: int, more: int, batch_left: int) -> str:
    """Why a valid line is out of place: its seq is not ``seq``, or its ``more`` breaks its batch's framing."""
    if found != seq:
        return f"seq {found} where {seq} was expected"
    return f"batch framing broken: 'more' is {more}, {batch_left - 1} expected"


def _damage_at(pos: int, seq: int, reason: str, batch_left: int, batch_pos: int, batch_seq: int) -> Damage:
    """The damage a bad line at ``pos`` makes: there, or at the start of the batch it breaks."""
    if batch_left:
        return Damage(batch_pos, batch_seq, f"incomplete atomic batch ({reason} at byte {pos})")
    return Damage(pos, seq, reason)


def _stop_at(res: ScanResult, damage: Damage, rest: Iterator[tuple[int, bytes]]) -> None:
    """End the scan's findings at ``damage``, counting the intact lines in ``rest`` (the lines after it)."""
    res.index = [(s, p) for s, p in res.index if p < damage.offset]
    res.dedup = [(k, s) for k, s in res.dedup if s < damage.seq]
    res.erasure_lines = [x for x in res.erasure_lines if x[0] < damage.seq]
    damage.records_after = sum(1 for _p, ln in rest if ln[-1:] == b"\n" and checksum_ok(ln))
    res.damage = damage


# --- the sparse index file -----------------------------------------------------------

_IDX_MAGIC = b"EVIX1\n"
_IDX_HEADER = struct.Struct("<6sQQQQ")  # magic, base, segment size, entries, xxh3 of payload


def index_path(log_dir: str, base: int) -> str:
    """Where the sparse index of segment ``base`` lives."""
    return os.path.join(log_dir, f"{base:020d}{INDEX_SUFFIX}")


def encode_index(base: int, segment_size: int, entries: list[tuple[int, int]]) -> bytes:
    """The file form of a sparse index."""
    flat = array("Q", [x for pair in entries for x in pair]).tobytes()
    return _IDX_HEADER.pack(_IDX_MAGIC, base, segment_size, len(entries), xxhash.xxh3_64_intdigest(flat)) + flat


def load_index(log_dir: str, base: int, segment_size: int, *, prefix_ok: bool = False) -> list[tuple[int, int]] | None:
    """The sparse index of a segment, or None when missing, damaged or stale.

    ``prefix_ok`` accepts an index written when the (active) segment was shorter: an
    append-only file keeps its old lines where they were (every entry is still checked
    against its line before use).
    """
    try:
        with open(index_path(log_dir, base), "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < _IDX_HEADER.size:
        return None
    magic, b, size, count, digest = _IDX_HEADER.unpack_from(data)
    flat = memoryview(data)[_IDX_HEADER.size :]
    if magic != _IDX_MAGIC or b != base or len(flat) != 16 * count:
        return None
    if size != segment_size and not (prefix_ok and size < segment_size):
        return None
    if xxhash.xxh3_64_intdigest(flat) != digest:
        return None
    arr = array("Q")
    arr.frombytes(flat)
    return list(zip(arr[0::2], arr[1::2], strict=True))
