"""The log: open, append (single events and atomic batches), read, follow, verify.

A ``Log`` opened with ``writable=True`` is the one writer of its directory (it holds
``log/LOCK``). Opening for write runs recovery on the active segment: a torn or damaged
tail is saved to ``log/quarantine/`` and cut off, and the cut is recorded as a
``log.recovered`` event. Damage that a crash cannot explain (a sealed segment, intact
records after damaged bytes, a missing segment) raises ``CorruptionError`` naming
segment, byte offset and seq; ``repair=True`` cuts at that damage on purpose (and says
so in the log), everything else refuses to guess.

Appends assign ``seq`` (dense from 1) and ``ts`` (UTC, never decreasing) and write each
call's lines with one ``write``. A batch is framed with ``more`` counters so a crash
keeps all of it or none. Durability policies:

* ``fsync`` (default): ``append`` returns after ``fdatasync``; an acknowledged event
  survives process and OS crashes.
* ``group``: events are written at once and fsynced by a background flusher every
  ``group_commit_interval`` seconds (and on close/roll). A process crash loses nothing;
  an OS crash or power loss can lose the events acknowledged in the last interval.
* ``none``: written, never explicitly synced (except when a segment is sealed). A
  process crash loses nothing; an OS crash can lose anything the kernel had not
  written back.

Whatever the policy, an I/O error during an append is not acknowledged and poisons the
writer: it refuses further appends until reopened (no fsync retry; see PostgreSQL's
fsyncgate). Events carrying a ``dedup`` key are written once: appending the same key
again returns the first event's seq and writes nothing.

Readers need no lock. ``read``/``records`` verify every line's checksum and seq as they
go and never return a torn tail or an incomplete batch; ``follow`` waits for new events
and crosses segment rolls.
"""

from __future__ import annotations

import os
import threading
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from eventlog import codec
from eventlog.codec import CHECKSUM_PREFIX, DECODER, SUFFIX_LEN, hash_key, stamp_and_frame
from eventlog.errors import (
    ConflictError,
    CorruptionError,
    DuplicateInBatchError,
    InvalidEventError,
    LogIOError,
    WriterClosedError,
)
from eventlog.events import Event, LogRecovered
from eventlog.fsio import OS_FS, FileSystem, remove_stray_temp_files
from eventlog.hashindex import HashIndex
from eventlog.lock import WriterLock
from eventlog.segments import (
    INDEX_EVERY,
    READ_CHUNK,
    batch_more,
    encode_index,
    foreign_files,
    index_path,
    iter_lines,
    load_index,
    scan_segment,
    segment_bases,
    segment_name,
)

Durability = Literal["fsync", "group", "none"]
DURABILITY_POLICIES: tuple[str, ...] = ("fsync", "group", "none")
DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024
DEFAULT_GROUP_COMMIT_INTERVAL = 0.010
DEDUP_FILE = "dedup.idx"
QUARANTINE_DIR = "quarantine"

_xxh64_hex = codec._xxh64_hex  # noqa: SLF001 - the hot loop wants a local name


@dataclass(frozen=True, slots=True)
class Record:
    """An event with where it lives: segment base, byte range and its checksum."""

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


def _complete_chunks(path: str, pos: int, stop: int | None, seg: str, sealed: bool) -> Iterator[bytes]:
    """Chunks of whole lines from ``pos``, each ending at a batch boundary.

    The live end of the active segment (a torn line, or the lines of a batch whose last
    line is not written yet) is held back; in a sealed segment it is corruption.
    """
    with open(path, "rb") as f:
        f.seek(pos)
        carry = b""
        left = None if stop is None else stop - pos
        while True:
            want = READ_CHUNK if left is None else min(READ_CHUNK, left)
            data = f.read(want) if want > 0 else b""
            if left is not None:
                left -= len(data)
            if not data:
                break
            checked = carry.rfind(b"\n") + 1  # lines of the carry are known to be inside an open batch
            if carry:
                data = carry + data
            cut = _batch_boundary(data, checked)
            carry = data[cut:]
            if cut:
                yield data[:cut]
                pos += cut
    if carry and sealed:
        what = "a torn record" if not carry.endswith(b"\n") else "an incomplete atomic batch"
        raise CorruptionError(f"{seg}: sealed segment ends in {what} at byte {pos}", segment=seg, offset=pos)


def _batch_boundary(data: bytes, checked: int = 0) -> int:
    """Length of the longest prefix of ``data`` made of whole lines and whole batches.

    Lines starting before ``checked`` are already known not to close a batch, so the
    backward walk stops there (a batch larger than a read chunk costs one pass, not one
    pass per chunk).
    """
    end = data.rfind(b"\n") + 1
    while end > checked:
        start = data.rfind(b"\n", 0, end - 1) + 1
        line = data[start:end]
        n = len(line)
        if n <= SUFFIX_LEN or not batch_more(line, n):
            return end  # the last line closes a batch (or is a single event)
        end = start  # inside a batch whose end is not here yet: hold the line back
    return 0


def _verify_chunk(body: bytes, lines: list[bytes], seg: str, pos: int, first_seq: int) -> list[Event]:
    """Check framing, checksums and dense seqs of a chunk of lines; return the events."""
    h = _xxh64_hex
    bad = [k for k, ln in enumerate(lines) if ln[-32:-18] != CHECKSUM_PREFIX or h(ln[:-32]).encode() != ln[-18:-2] or ln[-2:] != b'"}']
    if bad:
        k = bad[0]
        off = pos + sum(len(ln) + 1 for ln in lines[:k])
        raise CorruptionError(f"{seg}: checksum mismatch at byte {off} (seq {first_seq + k}); run 'evlog verify'",
                              segment=seg, offset=off, seq=first_seq + k)
    try:
        evs = DECODER.decode_lines(body)
    except msgspec.MsgspecError:
        for k, ln in enumerate(lines):
            try:
                DECODER.decode(ln)
            except msgspec.MsgspecError as e:
                off = pos + sum(len(x) + 1 for x in lines[:k])
                raise InvalidEventError(f"{seg} byte {off} (seq {first_seq + k}): cannot decode event: {e}") from e
        raise
    if evs[0].seq != first_seq or evs[-1].seq != first_seq + len(evs) - 1 or [e.seq for e in evs] != list(range(first_seq, first_seq + len(evs))):
        k = next(k for k, e in enumerate(evs) if e.seq != first_seq + k)
        off = pos + sum(len(ln) + 1 for ln in lines[:k])
        raise CorruptionError(f"{seg}: seq {evs[k].seq} at byte {off} where {first_seq + k} was expected",
                              segment=seg, offset=off, seq=first_seq + k)
    return evs


class Log:
    """An event log directory; see the module docstring. Create with ``Log.open``."""

    def __init__(self, log_dir: str) -> None:
        self.dir = log_dir
        self.writable = False
        self._lock: WriterLock | None = None
        self._mutex = threading.Lock()
        self._index_cache: dict[int, tuple[int, list[tuple[int, int]]]] = {}

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        log_dir: str,
        *,
        writable: bool = False,
        create: bool = False,
        durability: Durability = "fsync",
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        group_commit_interval: float = DEFAULT_GROUP_COMMIT_INTERVAL,
        lock_timeout: float = 0.0,
        repair: bool = False,
        fs: FileSystem = OS_FS,
        clock: Callable[[], float] = time.time,
    ) -> Log:
        """Open the log in ``log_dir``; ``writable=True`` takes the writer lock and recovers.

        All arguments are validated before anything is created or locked.
        """
        if durability not in DURABILITY_POLICIES:
            raise InvalidEventError(f"unknown durability {durability!r}; choose one of {', '.join(DURABILITY_POLICIES)}")
        if segment_bytes < 1024:
            raise InvalidEventError(f"segment_bytes must be at least 1024, got {segment_bytes}")
        if not os.path.isdir(log_dir):
            if not (create and writable):
                from eventlog.errors import WorkspaceNotFound

                raise WorkspaceNotFound(f"no log at {log_dir} (run 'evlog init' first)")
            os.makedirs(log_dir, exist_ok=True)
        log = cls(log_dir)
        if writable:
            log._open_writer(durability, segment_bytes, group_commit_interval, lock_timeout, repair, fs, clock)
        return log

    def _open_writer(self, durability, segment_bytes, interval, lock_timeout, repair, fs, clock) -> None:  # noqa: ANN001
        self._lock = WriterLock(self.dir, timeout=lock_timeout)
        try:
            self.fs = fs
            self.clock = clock
            self.durability = durability
            self.segment_bytes = segment_bytes
            self._poisoned: str | None = None
            self._unsynced = 0
            self._ts_ms = -1
            self._ts_bytes = b""
            self.last_line = b""  # the newest line this writer wrote (see last_written)
            self.recovered: LogRecovered | None = None
            remove_stray_temp_files(self.dir)
            self._recover(repair)
            self.writable = True
            self._load_dedup()
            if self.recovered is not None:  # recorded durably whatever the policy
                self.recovered = msgspec.structs.replace(self.recovered, seq=self.append(self.recovered))
                self._sync("fsync of the recovery record failed")
        except BaseException:
            self._close_fd()
            self._lock.release()
            self._lock = None
            raise
        self._flusher: threading.Thread | None = None
        self._stop_flusher = threading.Event()
        if durability == "group":
            self._group_interval = interval
            self._flusher = threading.Thread(target=self._flush_loop, name="evlog-group-commit", daemon=True)
            self._flusher.start()

    def _recover(self, repair: bool) -> None:
        if repair:
            self._repair_sealed()
        bases = segment_bases(self.dir)
        if not bases:
            self._create_segment(1)
            self._active_base, self._size, self.next_seq = 1, 0, 1
            self._active_index: list[tuple[int, int]] = []
            self._next_mark = 0
            self._active_dedup: list[tuple[str, int]] = []
            return
        # Sealed segments: names must chain and each must end on a whole record.
        for base, nxt in zip(bases, bases[1:], strict=False):
            last = self._last_record_seq(base)
            if last is None or last != nxt - 1:
                found = "no readable last record" if last is None else f"its last record has seq {last}"
                raise CorruptionError(
                    f"sealed segment {segment_name(base)} does not end right before {segment_name(nxt)} "
                    f"({found}; expected seq {nxt - 1}): a segment is missing or damaged; run 'evlog verify'",
                    segment=segment_name(base),
                    seq=nxt - 1,
                )
        base = bases[-1]
        path = self._seg_path(base)
        res = scan_segment(path, base, strict=repair)
        if res.damage is not None:
            d = res.damage
            if d.records_after and not repair:
                raise CorruptionError(
                    f"{segment_name(base)} is damaged at byte {d.offset} (seq {d.seq}: {d.reason}) and "
                    f"{d.records_after} intact record(s) follow, so this is not a torn write; "
                    "run 'evlog verify' to see it and 'evlog repair' to cut the log there (the cut bytes are kept)",
                    segment=segment_name(base),
                    offset=d.offset,
                    seq=d.seq,
                )
            self._cut(base, res.valid_end, res.size, d.reason, d.records_after)
        self._active_base = base
        self._size = res.valid_end
        self.next_seq = res.next_seq
        self._active_index = res.index
        self._next_mark = res.index[-1][1] + INDEX_EVERY if res.index else 0
        self._active_dedup = res.dedup  # the active segment's dedup keys, read once here for _load_dedup
        self._open_active()

    def _repair_sealed(self) -> None:
        """Find the first damage in any segment; cut there and quarantine every later segment."""
        bases = segment_bases(self.dir)
        expected = bases[0] if bases else 1
        for i, base in enumerate(bases):
            if base != expected:  # a gap or overlap: the previous segment ends the good log
                self._quarantine_segments(bases[i:], f"repair: segment {segment_name(base)} starts at seq {base} where {expected} was expected")
                return
            res = scan_segment(self._seg_path(base), base, strict=True)
            later = bases[i + 1 :]
            if later and res.damage is None and res.next_seq == later[0]:
                expected = res.next_seq
                continue
            if not later:
                return  # the active segment: ordinary recovery (with repair) handles it
            reason = res.damage.reason if res.damage else f"{segment_name(later[0])} does not continue at seq {res.next_seq}"
            moved = self._quarantine_segments(later, "")
            self._cut(base, res.valid_end, res.size, f"repair: {reason}", 0)
            self.recovered = msgspec.structs.replace(self.recovered, segments_quarantined=moved)  # type: ignore[arg-type]
            return

    def _quarantine_segments(self, bases: list[int], reason: str) -> list[str]:
        """Move whole segments into log/quarantine/ (recording it if ``reason`` is given)."""
        qdir = os.path.join(self.dir, QUARANTINE_DIR)
        os.makedirs(qdir, exist_ok=True)
        moved, total = [], 0
        for b in bases:
            total += os.path.getsize(self._seg_path(b))
            self.fs.rename(self._seg_path(b), os.path.join(qdir, segment_name(b)))
            moved.append(segment_name(b))
            for stale in (index_path(self.dir, b),):
                if os.path.exists(stale):
                    os.unlink(stale)
        self.fs.fsync_dir(self.dir)
        if reason:
            remaining = segment_bases(self.dir)
            prev = remaining[-1] if remaining else bases[0]
            if os.path.exists(index_path(self.dir, prev)):
                os.unlink(index_path(self.dir, prev))  # it becomes the active segment again
            self.recovered = LogRecovered(
                segment=segment_name(prev),
                offset=os.path.getsize(self._seg_path(prev)) if remaining else 0,
                bytes_truncated=total,
                reason=reason,
                quarantine=QUARANTINE_DIR,
                segments_quarantined=moved,
            )
        return moved

    def _cut(self, base: int, valid_end: int, size: int, reason: str, records_after: int) -> None:
        path = self._seg_path(base)
        with open(path, "rb") as f:
            f.seek(valid_end)
            cut = f.read()
        qdir = os.path.join(self.dir, QUARANTINE_DIR)
        os.makedirs(qdir, exist_ok=True)
        qname = f"{segment_name(base)}.{valid_end}.{int(self.clock())}.bad"
        self.fs.atomic_write(os.path.join(qdir, qname), cut)
        fd = self.fs.open_append(path)
        try:
            self.fs.truncate(fd, valid_end)
            self.fs.fsync(fd)
        finally:
            self.fs.close(fd)
        if os.path.exists(index_path(self.dir, base)):
            os.unlink(index_path(self.dir, base))  # it may describe the bytes just cut
        self.recovered = LogRecovered(
            segment=segment_name(base),
            offset=valid_end,
            bytes_truncated=size - valid_end,
            reason=reason,
            quarantine=f"{QUARANTINE_DIR}/{qname}",
            records_after_damage=records_after,
        )

    def _open_active(self) -> None:
        self._fd: int | None = self.fs.open_append(self._seg_path(self._active_base))

    def _create_segment(self, base: int) -> None:
        path = self._seg_path(base)
        fd = self.fs.open_append(path)
        self.fs.close(fd)
        self.fs.fsync_dir(self.dir)
        self._fd = self.fs.open_append(path)

    # ------------------------------------------------------------------ dedup keys

    def _load_dedup(self) -> None:
        """Load the dedup checkpoint if it matches the log, else rebuild; then catch up."""
        self._dedup = HashIndex()
        start = self.log_start
        path = os.path.join(self.dir, DEDUP_FILE)
        try:
            with open(path, "rb") as f:
                data = f.read()
            head, _, body = data.partition(b"\n")
            meta = msgspec.json.decode(head)
            seq, fp = int(meta["seq"]), str(meta["fingerprint"])
            if seq == 0 or (seq < self.next_seq and self._fingerprint_at(seq) == fp):
                self._dedup = HashIndex.from_bytes(body)
                start = seq + 1
        except (OSError, ValueError, KeyError, TypeError, msgspec.DecodeError):
            pass
        for base, pos in self._positions_from(start):
            if base == self._active_base:  # recovery just scanned it: use what it found
                for key, seq in self._active_dedup:
                    if seq >= start:
                        self._dedup.add(hash_key(key), seq)
                continue
            for _p, line in iter_lines(self._seg_path(base), pos):
                fr = codec.FRAME_DECODER.decode(line)
                if fr.dedup:
                    self._dedup.add(hash_key(fr.dedup), fr.seq)
        self._active_dedup = []

    def _positions_from(self, seq: int) -> list[tuple[int, int]]:
        """(segment base, byte position) pairs to scan to read every record from ``seq`` on."""
        if seq >= self.next_seq:
            return []
        bases = segment_bases(self.dir)
        i = max(bisect_right(bases, seq) - 1, 0)
        base = bases[i]
        pos, _at = self._locate(base, seq)
        return [(base, pos)] + [(b, 0) for b in bases[i + 1 :]]

    def _save_dedup(self) -> None:
        last = self.next_seq - 1
        head = msgspec.json.encode({"seq": last, "fingerprint": self._fingerprint_at(last) if last else ""})
        self.fs.atomic_write(os.path.join(self.dir, DEDUP_FILE), head + b"\n" + self._dedup.to_bytes(), sync=False)

    def lookup_dedup(self, key: str) -> int | None:
        """The seq of the event that carries dedup key ``key``, or None (writer only)."""
        return self._dedup.get(hash_key(key))

    def lookup_dedup_int(self, key: int) -> int | None:
        """``lookup_dedup`` for a key already hashed to its 128-bit integer (see ``codec.hash_key``)."""
        return self._dedup.get(key)

    # ------------------------------------------------------------------ appending

    def append(self, event: Event, *, expected: int | None = None) -> int:
        """Append one event; returns its seq (the first one's seq if its dedup key is known)."""
        with self._mutex:
            if expected is not None or self._poisoned or not self.writable:
                self._check_writable(expected)
            key = event.dedup
            if key:
                h = hash_key(key)
                first = self._dedup.get(h)
                if first is not None:
                    return first
            seq = self.next_seq
            ms = int(self.clock() * 1000)
            line = stamp_and_frame(event, seq, self._ts_bytes if ms == self._ts_ms else self._stamp(ms))
            self.last_line = line
            pos = self._size
            if pos + len(line) > self.segment_bytes or pos >= self._next_mark:
                self._write(line, None)  # the general path: roll, index mark
            else:
                try:
                    self.fs.write(self._fd, line)  # type: ignore[arg-type]
                except OSError as e:
                    self._poison(f"write failed: {e}")
                    raise LogIOError(f"append not acknowledged: writing {segment_name(self._active_base)} failed: {e}") from e
                self._size = pos + len(line)
                self.next_seq = seq + 1
                if self.durability == "fsync":
                    self._sync("fsync failed")
                else:
                    self._unsynced += 1
            if key:
                self._dedup.add(h, seq)
            return seq

    def append_batch(self, events: Iterable[Event], *, expected: int | None = None) -> list[int]:
        """Append events atomically: after any crash all of them are in the log or none.

        Returns each event's seq. ``expected`` is the last seq the caller saw; if the log
        has moved on, nothing is written and ``ConflictError`` is raised. Events whose
        dedup key the log already holds are not written again (their first seq is
        returned). A batch that repeats a dedup key writes nothing and raises
        ``DuplicateInBatchError``.
        """
        events = list(events)
        with self._mutex:
            self._check_writable(expected)
            seqs: list[int] = [0] * len(events)
            todo: list[int] = []
            keys: dict[int, int] = {}  # hashed dedup key -> batch index
            for i, ev in enumerate(events):
                if not isinstance(ev, Event) or type(ev) is Event:
                    raise InvalidEventError(f"batch item {i} is not an event: {ev!r}")
                if ev.dedup:
                    k = hash_key(ev.dedup)
                    if k in keys:
                        raise DuplicateInBatchError(f"batch items {keys[k]} and {i} share dedup key {ev.dedup!r}; nothing was written")
                    keys[k] = i
                    first = self._dedup.get(k)
                    if first is not None:
                        seqs[i] = first
                        continue
                todo.append(i)
            if not todo:
                return seqs
            ts = self._stamp()
            seq = self.next_seq
            n = len(todo)
            lines = [stamp_and_frame(events[i], seq + j, ts, n - 1 - j) for j, i in enumerate(todo)]
            self.last_line = lines[-1]
            self._write(b"".join(lines), lines)
            for j, i in enumerate(todo):
                seqs[i] = seq + j
            add = self._dedup.add
            for k, i in keys.items():
                if seqs[i] >= seq:  # written now (not a known duplicate)
                    add(k, seqs[i])
            return seqs

    def last_written(self) -> tuple[str, str]:
        """(ts, fingerprint) of the newest line this writer wrote: the stamp every event of that append got."""
        return self._ts_bytes.decode(), codec.fingerprint(self.last_line)  # every append is stamped _ts_bytes

    def _check_writable(self, expected: int | None) -> None:
        if not self.writable:
            raise WriterClosedError("this log was opened read-only" if self._lock is None else "the log is closed")
        if self._poisoned:
            raise WriterClosedError(f"the writer refuses appends after an I/O error ({self._poisoned}); reopen the log")
        if expected is not None and expected != self.next_seq - 1:
            raise ConflictError(f"expected the log to end at seq {expected}, but it ends at seq {self.next_seq - 1}")

    def _stamp(self, ms: int | None = None) -> bytes:
        """The ``ts`` of the next append: UTC, millisecond precision, never going backwards."""
        if ms is None:
            ms = int(self.clock() * 1000)
        if ms != self._ts_ms:
            if ms < self._ts_ms:
                return self._ts_bytes
            self._ts_ms = ms
            self._ts_bytes = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)).encode()
        return self._ts_bytes

    def _write(self, data: bytes, lines: list[bytes] | None) -> None:
        """Write one append's bytes (``lines``: a batch's lines, None for one event), then sync."""
        pos = self._size
        if pos and pos + len(data) > self.segment_bytes:
            self._roll()
            pos = 0
        try:
            self.fs.write(self._fd, data)  # type: ignore[arg-type]
        except OSError as e:
            self._poison(f"write failed: {e}")
            raise LogIOError(f"append not acknowledged: writing {segment_name(self._active_base)} failed: {e}") from e
        seq = self.next_seq
        count = 1 if lines is None else len(lines)
        self._size = pos + len(data)
        self.next_seq = seq + count
        if pos >= self._next_mark:
            for line in lines or (data,):
                if pos >= self._next_mark:
                    self._active_index.append((seq, pos))
                    self._next_mark = pos + INDEX_EVERY
                pos += len(line)
                seq += 1
        if self.durability == "fsync":
            self._sync("fsync failed")
        else:
            self._unsynced += count

    def _sync(self, what: str) -> None:
        try:
            self.fs.fsync(self._fd)  # type: ignore[arg-type]
        except OSError as e:
            self._poison(f"{what}: {e}")
            raise LogIOError(f"append not acknowledged: {what} on {segment_name(self._active_base)}: {e}") from e
        self._unsynced = 0

    def _poison(self, why: str) -> None:
        self._poisoned = why

    def _roll(self) -> None:
        """Seal the active segment (fsync, write its index) and start the next one."""
        self._sync("fsync before sealing failed")
        try:
            self.fs.atomic_write(
                index_path(self.dir, self._active_base),
                encode_index(self._active_base, self._size, self._active_index),
                sync=False,
            )
            self.fs.close(self._fd)  # type: ignore[arg-type]
            self._fd = None
            self._create_segment(self.next_seq)
        except OSError as e:
            self._poison(f"segment roll failed: {e}")
            raise LogIOError(f"append not acknowledged: rolling to {segment_name(self.next_seq)} failed: {e}") from e
        self._active_base = self.next_seq
        self._size = 0
        self._active_index = []
        self._next_mark = 0
        self._save_dedup_quietly()

    def _save_active_index_quietly(self) -> None:
        """Leave the active segment's sparse index for readers (disposable, checked on use)."""
        try:
            self.fs.atomic_write(index_path(self.dir, self._active_base),
                                 encode_index(self._active_base, self._size, self._active_index), sync=False)
        except OSError:
            pass

    def _save_dedup_quietly(self) -> None:
        try:
            self._save_dedup()
        except OSError:
            pass  # disposable: rebuilt from the log on next open

    def sync(self) -> None:
        """fsync now whatever was written (under ``group``/``none`` durability)."""
        with self._mutex:
            if self.writable and not self._poisoned and self._unsynced:
                self._sync("fsync failed")

    def _flush_loop(self) -> None:
        while not self._stop_flusher.wait(self._group_interval):
            with self._mutex:
                if self.writable and not self._poisoned and self._unsynced:
                    try:
                        self._sync("group commit fsync failed")
                    except LogIOError:
                        pass  # poisoned; the next append reports it

    def close(self) -> None:
        """Sync, save the dedup checkpoint and release the lock; idempotent."""
        if self._lock is None:
            return
        if getattr(self, "_flusher", None) is not None:
            self._stop_flusher.set()
            self._flusher.join()  # type: ignore[union-attr]
        with self._mutex:
            try:
                if self.writable and not self._poisoned:
                    if self._unsynced:
                        self._sync("fsync on close failed")
                    self._save_dedup_quietly()
                    self._save_active_index_quietly()
            finally:
                self.writable = False
                self._close_fd()
                self._lock.release()
                self._lock = None

    def _close_fd(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                self.fs.close(fd)
            except OSError:
                pass
            self._fd = None

    def __enter__(self) -> Log:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading

    def _seg_path(self, base: int) -> str:
        return os.path.join(self.dir, segment_name(base))

    @property
    def log_start(self) -> int:
        """Seq of the first event the log holds (1 unless old segments were removed)."""
        bases = segment_bases(self.dir)
        return bases[0] if bases else 1

    @property
    def last_seq(self) -> int:
        """Seq of the newest complete event (0 for an empty log)."""
        if self.writable:
            return self.next_seq - 1
        bases = segment_bases(self.dir)
        if not bases:
            return 0
        for base in reversed(bases):
            res = scan_segment(self._seg_path(base), base, **self._scan_start(base))
            if res.next_seq > base:
                return res.next_seq - 1
        return bases[0] - 1

    def _scan_start(self, base: int) -> dict[str, int]:
        idx = self._index(base)
        if not idx:
            return {}
        seq, pos = idx[-1]
        return {"start": pos, "start_seq": seq}

    def _index(self, base: int) -> list[tuple[int, int]]:
        """The sparse index of a segment: in memory, from its file, or rebuilt by a scan."""
        if self.writable and base == self._active_base:
            return self._active_index
        path = self._seg_path(base)
        try:
            size = os.path.getsize(path)
        except FileNotFoundError:
            return []
        cached = self._index_cache.get(base)
        if cached and cached[0] == size:
            return cached[1]
        bases = segment_bases(self.dir)
        entries = load_index(self.dir, base, size, prefix_ok=bool(bases) and base == bases[-1])
        if entries is None:
            res = scan_segment(path, base)
            entries = res.index
            if self.writable and base != self._active_base and res.damage is None:
                try:
                    self.fs.atomic_write(index_path(self.dir, base), encode_index(base, size, entries), sync=False)
                except OSError:
                    pass
        self._index_cache[base] = (size, entries)
        return entries

    def _locate(self, base: int, seq: int) -> tuple[int, int]:
        """(byte position, seq there) of a line of segment ``base`` at or before ``seq``."""
        idx = self._index(base)
        i = bisect_right(idx, (seq, 1 << 62)) - 1
        while i >= 0:
            s, pos = idx[i]
            if self._seq_at(base, pos) == s:
                return pos, s
            self._index_cache.pop(base, None)  # a stale entry: distrust the cached copy
            i -= 1
        return 0, base

    def _seq_at(self, base: int, pos: int) -> int | None:
        for _p, line in iter_lines(self._seg_path(base), pos, pos + (1 << 16)):
            if line[-1:] == b"\n" and codec.checksum_ok(line):
                return codec.FRAME_DECODER.decode(line).seq
            return None
        return None

    def _last_record_seq(self, base: int) -> int | None:
        """Seq of the last whole record of a sealed segment (reads backwards from the end)."""
        path = self._seg_path(base)
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
        return codec.FRAME_DECODER.decode(line).seq

    def _fingerprint_at(self, seq: int) -> str | None:
        rec = self.find(seq)
        return rec.fingerprint if rec else None

    def find(self, seq: int) -> Record | None:
        """The record with ``seq``, or None if the log does not hold it."""
        for rec in self.records(seq, until_seq=seq):
            return rec
        return None

    def read(self, from_seq: int = 1, *, until_seq: int | None = None) -> Iterator[Event]:
        """Events from ``from_seq`` to ``until_seq`` (inclusive) or the current end, verified."""
        return self._scan(from_seq, until_seq, records=False)  # type: ignore[return-value]

    def records(self, from_seq: int = 1, *, until_seq: int | None = None) -> Iterator[Record]:
        """Like ``read`` but each event comes with its segment, byte range and fingerprint."""
        return self._scan(from_seq, until_seq, records=True)  # type: ignore[return-value]

    def _scan(
        self, from_seq: int, until_seq: int | None, *, records: bool, cursor: list[int] | None = None
    ) -> Iterator[Event | Record]:
        """The one verifying read loop.

        Reads whole chunks, checks every line's framing and checksum, decodes the chunk
        with one ``decode_lines`` call and checks that seqs are dense. ``cursor`` is
        ``[segment base, byte position, seq there]``; it always points after the last
        yielded record (or whole batch) so ``follow`` can resume from it. Lines of a batch
        whose end is not written yet are held back; a torn tail is not returned.
        """
        bases = segment_bases(self.dir)
        if not bases:
            return
        if cursor is None:
            from_seq = max(from_seq, bases[0])
            i = max(bisect_right(bases, from_seq) - 1, 0)
            pos, at = self._locate(bases[i], from_seq)
            cursor = [bases[i], pos, at]
        elif cursor[0] in bases:
            i = bases.index(cursor[0])
        else:
            seg = segment_name(cursor[0])
            raise CorruptionError(f"segment {seg} disappeared while being read", segment=seg)
        until = until_seq if until_seq is not None else 1 << 62
        while True:
            base, pos, expected = cursor
            sealed = i + 1 < len(bases)
            stop = self._size if self.writable and base == self._active_base else None
            for body in _complete_chunks(self._seg_path(base), pos, stop, segment_name(base), sealed):
                lines = body.split(b"\n")
                lines.pop()
                evs = _verify_chunk(body, lines, segment_name(base), pos, expected)
                n = len(evs)
                lo = from_seq - expected if from_seq > expected else 0
                hi = until - expected + 1 if until < expected + n else n
                if records:
                    out: list = []
                    p = pos
                    for k, line in enumerate(lines):
                        e = p + len(line) + 1
                        if lo <= k < hi:
                            out.append(Record(expected + k, base, p, e, "xxh3-64:" + line[-18:-2].decode(), evs[k]))
                        p = e
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
                raise CorruptionError(
                    f"{segment_name(nxt)} starts at seq {nxt} but seq {expected} was expected "
                    f"(events {min(expected, nxt)}..{max(expected, nxt) - 1} are missing or doubled; run 'evlog verify')",
                    segment=segment_name(nxt), offset=0, seq=expected,
                )
            i += 1
            cursor[0], cursor[1], cursor[2] = nxt, 0, nxt

    def follow(
        self,
        from_seq: int = 1,
        *,
        poll_interval: float = 0.2,
        stop: Callable[[], bool] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> Iterator[Record]:
        """Yield records from ``from_seq`` on, then wait for new ones (across rolls) until ``stop()``.

        If the file under the reader shrinks or is replaced (recovery cut a tail, a file
        was restored), the position is found again by seq and ``on_notice`` is told; a
        record is never returned twice or from the middle of its bytes.
        """
        notice = on_notice or (lambda _msg: None)
        cursor: list[int] | None = None
        inode = -1
        next_seq = max(from_seq, 1)
        while True:
            if cursor is not None and not self._cursor_holds(cursor, inode):
                notice(f"log changed under the reader at {segment_name(cursor[0])} byte {cursor[1]}; resuming at seq {next_seq}")
                cursor = None
            if cursor is None:
                bases = segment_bases(self.dir)
                if bases:
                    start = max(next_seq, bases[0])
                    if start != next_seq:
                        notice(f"seq {next_seq} is no longer in the log; resuming at seq {start}")
                    i = max(bisect_right(bases, start) - 1, 0)
                    cursor = [bases[i], *self._locate(bases[i], start)]
                    next_seq = start
            if cursor is not None:
                inode = self._inode(cursor[0])
                for rec in self._scan(next_seq, None, records=True, cursor=cursor):
                    if rec.segment != cursor[0] or inode < 0:  # type: ignore[union-attr]
                        inode = self._inode(rec.segment)  # type: ignore[union-attr]
                    next_seq = rec.seq + 1  # type: ignore[union-attr]
                    yield rec  # type: ignore[misc]
                    if stop is not None and stop():
                        return
            if stop is not None and stop():
                return
            time.sleep(poll_interval)

    def _inode(self, base: int) -> int:
        try:
            return os.stat(self._seg_path(base)).st_ino
        except FileNotFoundError:
            return -1

    def _cursor_holds(self, cursor: list[int], inode: int) -> bool:
        """The file under the cursor is the one we read and still reaches the cursor."""
        try:
            st = os.stat(self._seg_path(cursor[0]))
        except FileNotFoundError:
            return False
        return st.st_ino == inode and st.st_size >= cursor[1]

    # ------------------------------------------------------------------ checking

    def verify(self) -> list[Problem]:
        """Check every byte of every segment; return all problems found (empty when clean)."""
        problems: list[Problem] = []
        for name in foreign_files(self.dir):
            stray = name.endswith(".tmp")
            problems.append(Problem(name, -1, -1, "stray-file" if stray else "foreign-file",
                                    "temporary file left by a crash (removed on next open for write)" if stray else "not a log file",
                                    damaged=False))
        bases = segment_bases(self.dir)
        expected = bases[0] if bases else 1
        for i, base in enumerate(bases):
            seg = segment_name(base)
            last = i == len(bases) - 1
            if base != expected:
                kind = "gap" if base > expected else "overlap"
                problems.append(Problem(seg, 0, expected, kind,
                                        f"segment starts at seq {base} but seq {expected} was expected"
                                        + (f" (events {expected}..{base - 1} are missing)" if base > expected else "")))
            res = scan_segment(self._seg_path(base), base)
            for pos, line in iter_lines(self._seg_path(base), 0, res.valid_end):
                try:
                    DECODER.decode(line)
                except msgspec.MsgspecError as e:
                    fr = codec.FRAME_DECODER.decode(line)
                    problems.append(Problem(seg, pos, fr.seq, "undecodable", f"checksum is fine but the event does not decode: {e}"))
            if res.damage is not None:
                d = res.damage
                torn = last and not d.records_after
                what = "torn tail" if torn else "damaged"
                tail = f"; {res.size - d.offset} bytes from here" + (
                    " will be cut when the log is next opened for write" if torn else f", {d.records_after} intact record(s) after it; 'evlog repair' cuts here"
                )
                if not last:
                    tail = "; sealed segments must never change (restore it from a backup, or 'evlog repair' cuts the log here)"
                problems.append(Problem(seg, d.offset, d.seq, what, d.reason + tail))
            elif not last and res.valid_end != res.size:
                problems.append(Problem(seg, res.valid_end, res.next_seq, "damaged", "trailing bytes in a sealed segment"))
            # after damage in a sealed segment, trust the next name so one problem is reported once
            expected = bases[i + 1] if res.damage is not None and not last else res.next_seq
        return problems

    def stats(self) -> Stats:
        """Count segments, events and bytes, and events by type (one full read)."""
        st = Stats()
        bases = segment_bases(self.dir)
        st.segments = len(bases)
        counts: Counter[str] = Counter()
        dec = _TYPE_DECODER.decode
        for base in bases:
            path = self._seg_path(base)
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
