"""Writing the log: appends from any number of processes, taking turns; recovery; rolls; dedup.

**Taking turns.** Any number of processes (the daemon, an agent's session store, ingest,
the CLI, an MCP server) may hold a ``LogWriter`` on one log at once. The write lock
(``log/LOCK``, see ``eventlog.lock``) is held only for one append or atomic batch and
its bookkeeping, as SQLite's WAL holds its write lock; ``turn()`` holds it across
several appends on purpose (bulk writers). Each turn starts by catching up with what
other writers appended since this writer's last turn: one ``fstat`` of the active
segment tells whether anything changed (size, or the read-only mark a roll sets);
if so, the new bytes are scanned once for their seqs, dedup keys, index positions and
last ``ts``. So seqs stay dense, dedup holds across processes, an expected-version
check sees the true end, and ``ts`` never goes backwards across writers.

**Leases.** Under ``group`` and ``none`` durability an append costs a few microseconds, and
taking a turn (``flock``, ``fstat``, unlock) would nearly double it. So such a writer keeps
its turn after an append on a lease: the appends that follow need no system call for the
lock. Every ``lease_seconds`` (1 ms) the next append renews the lease unless another
process waits (a waiter announces itself on ``LOCK.wait``, see ``eventlog.lock``); then the
writer hands the lock over: it releases it and stays away for ``HANDOVER_SECONDS``, longer
than a waiter sleeps between two looks, then waits for its own turn like anyone. A keeper
thread ends the lease when the writer was idle for a lease period (it looks less often
during a long burst, up to ``KEEPER_MAX_SECONDS`` apart: the idle lock can stay held that
long after a burst). tests/test_lease.py measures a waiter next to a writer appending flat
out, with and without leases.
Under ``fsync`` an append costs an ``fdatasync`` (far more than a turn): no lease.

**Recovery.** The first turn of a writer recovers the log: a torn or damaged tail of
the active segment (a writer that died mid-append; the lock is free, so nobody is
writing it) is saved to ``log/quarantine/`` and cut off, and the cut is recorded as a
``log.recovered`` event. Damage that a crash cannot explain (a sealed segment, intact
records after damaged bytes, a missing segment) raises ``CorruptionError`` naming
segment, byte offset and seq; ``repair=True`` cuts there on purpose and says so in the
log. A later turn that finds a torn tail (another writer died during its turn) recovers
it the same way.

**Appends** are redacted first (``eventlog.redact``: the secrets door every event passes,
INVARIANTS I24), then validated (``eventlog.validate``: ``validate_event`` and the type
check that decodes the framed line back; a plain message skips both, see
``validate.plain_message``), then assign ``seq`` (dense from 1) and ``ts`` (UTC, ms, never decreasing) and write
each append's lines with one ``write``; a batch is framed with ``more`` counters so a
crash keeps all of it or none. A segment is sealed when the next append would not fit:
fsync, mark read-only, write its sparse index, create the next one. Durability policies:
``fsync`` (``append`` returns after ``fdatasync``), ``group`` (a background thread fsyncs
every ``group_commit_interval``; an OS crash can lose the last interval), ``none``.
The group commit's fsync runs outside the writer's mutex (on a duplicate descriptor), so
appends are not held up by it. Whatever the policy, an I/O error during an append is not acknowledged and poisons the
writer: it refuses further appends until reopened (no fsync retry; PostgreSQL's
fsyncgate). Events carrying a ``dedup`` key are written once: appending a known key
returns the first event's seq and writes nothing.
"""

from __future__ import annotations

import calendar
import fcntl
import os
import threading
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Literal

import msgspec

from eventlog import codec
from eventlog.codec import DECODER, hash_key, stamp_and_frame
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
from eventlog.lock import LOCK_NAME, MAX_POLL_SECONDS, FileLock
from eventlog.reader import LogReader
from eventlog.redact import redact_event
from eventlog.segments import (
    INDEX_EVERY,
    encode_index,
    index_path,
    iter_lines,
    scan_segment,
    segment_bases,
    segment_name,
)
from eventlog.validate import plain_message, validate_event

Durability = Literal["fsync", "group", "none"]
DURABILITY_POLICIES: tuple[str, ...] = ("fsync", "group", "none")
DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024
DEFAULT_GROUP_COMMIT_INTERVAL = 0.010
DEFAULT_LOCK_TIMEOUT = 10.0
DEFAULT_LEASE_SECONDS = 0.001  # see "Leases" in the module docstring
HANDOVER_SECONDS = 2 * MAX_POLL_SECONDS  # a writer handing its lock to a waiter stays away this long
KEEPER_MAX_SECONDS = 0.008  # the keeper looks for idleness at most this far apart during a long burst
DEDUP_FILE = "dedup.idx"
DEDUP_SAVE_INTERVAL = 30.0  # seconds between dedup checkpoints written at segment rolls
DEDUP_STALE_OK = 10_000  # a close leaves the dedup checkpoint this many records behind (the next open scans them)
QUARANTINE_DIR = "quarantine"


def _ts_ms(ts: str) -> int:
    """Milliseconds since the epoch of a log ``ts`` (``YYYY-MM-DDTHH:MM:SS.fffZ``); -1 if unreadable."""
    try:
        return calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")) * 1000 + int(ts[20:23])
    except (ValueError, OverflowError):
        return -1


def _frame(event: Event, seq: int, ts: bytes, more: int = 0) -> bytes:
    """``stamp_and_frame``, refusing what JSON cannot hold (lone surrogates, cycles, unknown types)."""
    try:
        return stamp_and_frame(event, seq, ts, more)
    except (UnicodeEncodeError, RecursionError, TypeError, OverflowError, ValueError) as e:
        raise InvalidEventError(f"{event.type}: cannot be written as JSON: {e}") from None


def _check_types(lines: list[bytes], events: list[Event]) -> None:
    """Decode framed lines back into their types: a field of the wrong shape is refused before writing."""
    if len(lines) > 1:
        try:
            DECODER.decode_lines(b"".join(lines))
            return
        except msgspec.MsgspecError:
            pass
    for line, ev in zip(lines, events, strict=True):
        try:
            DECODER.decode(line)
        except msgspec.MsgspecError as e:
            text = str(e)
            field = text.rsplit("$.", 1)[-1].rstrip("`") if "$." in text else ""
            raise InvalidEventError(f"{ev.type}: {text}; nothing was written", field=field) from None


class LogWriter:
    """Appends to a log directory, taking turns with other writers; see the module docstring."""

    def __init__(self, reader: LogReader, *, durability: Durability, segment_bytes: int, group_commit_interval: float,
                 lock_timeout: float, fs: FileSystem, clock: Callable[[], float], lease_seconds: float = 0.0) -> None:
        self.reader = reader
        self.dir = reader.dir
        self.fs = fs
        self.clock = clock
        self.durability = durability
        self.segment_bytes = segment_bytes
        self.lock_timeout = lock_timeout
        self._lock = FileLock(os.path.join(self.dir, LOCK_NAME), what=f"the log {self.dir}", announce=True)
        self._mutex = threading.RLock()
        self._depth = 0  # > 0 while this writer holds its turn
        self._fd: int | None = None
        self._poisoned: str | None = None
        self.closed = False
        self._unsynced = 0
        self._ts_ms = -1
        self._ts_bytes = b""
        self.last_line = b""  # the newest line this writer wrote (see last_written)
        self.last_append = (0, 0)  # first and last seq of this writer's newest append (0, 0: none)
        self.recovered: LogRecovered | None = None
        self.lock_waits: list[float] = []  # seconds each turn that had to wait for the lock waited (the newest 1000)
        self.free_turns = 0  # turns that found the lock free
        self._dedup = HashIndex()
        self._dedup_saved = 0.0
        self._dedup_file_seq = -1  # the seq the dedup checkpoint on disk covers, as far as we know (-1: none)
        self._active_base = 0
        self._size = 0
        self.next_seq = 1
        self._active_index: list[tuple[int, int]] = []
        self._next_mark = 0
        self._flusher: threading.Thread | None = None
        self._stop_flusher = threading.Event()
        self._group_interval = group_commit_interval
        self._syncing = False  # the group commit's fsync is under way (outside the mutex)
        self.lease_seconds = lease_seconds if durability != "fsync" else 0.0
        self._leased = False  # holding the lock on a lease (between turns)
        self._lease_busy = False  # appended since the keeper last looked
        self._keeper: threading.Thread | None = None
        self._keeper_wake = threading.Event()
        self._stop_keeper = False
        self._lease_until = 0.0  # monotonic time the current lease period ends (then: renew unless others wait)

    @classmethod
    def open(cls, reader: LogReader, *, durability: Durability = "fsync", segment_bytes: int = DEFAULT_SEGMENT_BYTES,
             group_commit_interval: float = DEFAULT_GROUP_COMMIT_INTERVAL, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
             repair: bool = False, fs: FileSystem = OS_FS, clock: Callable[[], float] = time.time,
             lease_seconds: float = DEFAULT_LEASE_SECONDS) -> LogWriter:
        """A writer of ``reader``'s directory; its first turn recovers the log (``repair``: cut damage on purpose).

        ``lease_seconds`` (``group``/``none`` durability only; 0: none) is how long the lock is
        kept after an append for the next ones (see "Leases" in the module docstring).
        """
        w = cls(reader, durability=durability, segment_bytes=segment_bytes, group_commit_interval=group_commit_interval,
                lock_timeout=lock_timeout, fs=fs, clock=clock, lease_seconds=lease_seconds)
        with w._mutex:
            try:
                w._acquire()
            except OSError as e:
                raise LogIOError(f"cannot open the log in {w.dir} for writing: {e.strerror or e}; "
                                 "readers (tail, sessions, recall, replay --check) still work") from e
            try:
                remove_stray_temp_files(w.dir)
                w._load(repair)
            except OSError as e:
                w._close_fd()
                w._lock.close()
                raise LogIOError(f"cannot open the log in {w.dir} for writing: {e.strerror or e}"
                                 + (f" ({e.filename})" if e.filename else "")
                                 + "; readers (tail, sessions, recall, replay --check) still work") from e
            except BaseException:
                w._close_fd()
                w._lock.close()
                raise
            finally:
                w._lock.release()
        if durability == "group":
            w._flusher = threading.Thread(target=w._flush_loop, name="evlog-group-commit", daemon=True)
            w._flusher.start()
        return w

    # ------------------------------------------------------------------ turns

    def _acquire(self) -> None:
        waited = self._lock.acquire(self.lock_timeout)
        if waited:
            if len(self.lock_waits) >= 1000:
                del self.lock_waits[:500]
            self.lock_waits.append(waited)
        else:
            self.free_turns += 1

    def _begin_turn(self) -> None:
        """Take the lock and catch up with other writers. The common case (lock free, nobody wrote) is
        two system calls: a non-blocking ``flock`` and an ``fstat`` of the active segment."""
        if self._poisoned or self.closed:
            self._check_writable(None)
        fd, lock = self._fd, self._lock
        if fd is not None and lock.held is False and lock._fd is not None:  # noqa: SLF001 - the fast path
            try:
                fcntl.flock(lock._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # noqa: SLF001
            except BlockingIOError:
                pass
            else:
                lock.held = True
                self.free_turns += 1
                try:
                    st = os.fstat(fd)
                    if st.st_size != self._size or not st.st_mode & 0o200:
                        self._follow_others()
                except BaseException:
                    lock.release()
                    raise
                return
        self._acquire()
        try:
            self._catch_up()
        except BaseException:
            self._lock.release()
            raise

    @contextmanager
    def turn(self) -> Iterator[LogWriter]:
        """Hold the write lock across several appends (other writers wait); nests."""
        with self._mutex:
            if self._depth:
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            self._take_turn()
            self._depth = 1
            try:
                yield self
            finally:
                self._depth = 0
                self._end_turn(ok=False)  # a turn taken on purpose ends on purpose: no lease after it

    def _take_turn(self) -> None:
        """Start a turn: nothing to do while a lease holds (renewed unless others wait), else take the lock."""
        if not (self._leased and (time.monotonic() < self._lease_until or self._renew_lease())):
            self._begin_turn()

    def _end_turn(self, ok: bool = True) -> None:
        """End a turn: keep the lock on a lease (see the module docstring) or release it."""
        if ok and self.lease_seconds and not self._poisoned and not self.closed:
            if self._leased:
                self._lease_busy = True
                return
            self._leased = True
            self._lease_busy = False
            self._lease_until = time.monotonic() + self.lease_seconds
            if self._keeper is None:
                self._keeper = threading.Thread(target=self._keep_lease, name="evlog-lease", daemon=True)
                self._keeper.start()
            self._keeper_wake.set()
            return
        self._leased = False
        self._lock.release()

    def _renew_lease(self) -> bool:
        """At the end of a lease period: renew it (True) unless another process waits. Then hand the
        lock over: release it and stay away for ``HANDOVER_SECONDS``, longer than a waiter sleeps
        between two looks, so the waiter takes it; the caller then waits for its own turn."""
        if not self._lock.others_waiting():
            self._lease_until = time.monotonic() + self.lease_seconds
            return True
        self._end_turn(ok=False)
        time.sleep(HANDOVER_SECONDS)
        return False

    def _keep_lease(self) -> None:
        """The keeper thread: ends a lease when the writer was idle for a lease period.

        While the writer is busy it only reads and clears a mark (no mutex, no system call;
        losing that race ends a lease early, which costs one turn); it takes the mutex only
        to end the lease. Waiters are noticed by the appends themselves (``_renew_lease``).
        """
        wake = self._keeper_wake
        period = self.lease_seconds
        while True:
            if not wake.is_set():
                period = self.lease_seconds  # a new lease: look again after one period
            wake.wait()
            if self._stop_keeper:
                return
            time.sleep(period)
            if self._lease_busy:
                self._lease_busy = False
                period = min(period * 2, KEEPER_MAX_SECONDS)  # a long burst: look less often (each look costs the writer a GIL switch)
                continue
            with self._mutex:
                if self._stop_keeper:
                    return
                if self._depth:
                    continue  # inside turn(): its end renews the lease
                if self._leased:
                    self._end_turn(ok=False)
                wake.clear()

    def stop_keeper(self) -> None:
        """Stop the lease keeper thread (``close`` does; so does a test that abandons a writer).

        The stop mark and the wake-up are set under the mutex, under which the keeper clears
        its wake-up: set outside, a keeper ending a lease at that moment could clear the
        wake-up after it was set and sleep forever.
        """
        keeper = self._keeper
        if keeper is None:
            return
        with self._mutex:
            self._stop_keeper = True
            self._keeper_wake.set()
        keeper.join(timeout=5.0)  # (a caller holding the mutex would make it wait; it is a daemon thread)
        self._keeper = None

    def _catch_up(self) -> None:
        """Bring this writer's view up to the log on disk (called at the start of every turn)."""
        if self._fd is None:
            self._load(False)
            return
        st = os.fstat(self._fd)
        if st.st_size == self._size and st.st_mode & 0o200:
            return  # nobody appended or rolled since our last turn
        self._follow_others()

    def _follow_others(self) -> None:
        """Read what other writers appended since our last turn: seqs, dedup keys, index, ts."""
        bases = segment_bases(self.dir)
        path = self.reader.seg_path(self._active_base)
        if self._active_base not in bases or os.path.getsize(path) < self._size or self._file_replaced(path):
            self._close_fd()
            self._load(False)  # the log changed in a way appends cannot explain (a repair, a restore, an erasure)
            return
        newer = bases[bases.index(self._active_base) :]
        for k, base in enumerate(newer):
            last = k == len(newer) - 1
            if base == self._active_base:
                res = scan_segment(path, base, start=self._size, start_seq=self.next_seq, index_from=self._next_mark)
                self._active_index.extend(res.index)
            else:
                if base != self.next_seq:
                    raise CorruptionError(f"segment {segment_name(base)} starts at seq {base} but seq {self.next_seq} "
                                          "was expected: a segment is missing; run 'evlog verify'",
                                          segment=segment_name(base), seq=self.next_seq)
                self._close_fd()
                self._active_base = base
                res = scan_segment(self.reader.seg_path(base), base)
                self._active_index = res.index
            if not last and (res.damage is not None or res.valid_end != res.size):
                seg = segment_name(base)
                raise CorruptionError(f"sealed segment {seg} is damaged at byte {res.valid_end}; run 'evlog verify'",
                                      segment=seg, offset=res.valid_end, seq=res.next_seq)
            for key, seq in res.dedup:
                self._dedup.add(hash_key(key), seq)
            self._size = res.valid_end
            self.next_seq = res.next_seq
            self._next_mark = self._active_index[-1][1] + INDEX_EVERY if self._active_index else 0
            if res.last_ts:
                self._see_ts(res.last_ts)
            if last and res.damage is not None:
                self._recover_tail(base, res)
        if self._fd is None:
            self._open_active()

    def _file_replaced(self, path: str) -> bool:
        """True when ``path`` is no longer the file our descriptor is open on (an erasure rewrote it)."""
        if self._fd is None:
            return False
        try:
            return os.stat(path).st_ino != os.fstat(self._fd).st_ino
        except FileNotFoundError:
            return True

    def _see_ts(self, ts: str) -> None:
        ms = _ts_ms(ts)
        if ms > self._ts_ms:
            self._ts_ms = ms
            self._ts_bytes = ts.encode()

    # ------------------------------------------------------------------ recovery

    def _load(self, repair: bool) -> None:
        """Recover the log from disk (see the module docstring) and load the dedup keys."""
        self._dedup = HashIndex()
        self.recovered = None
        if repair:
            self._repair_sealed()
        bases = segment_bases(self.dir)
        if not bases:
            self._create_segment(1)
            self._active_base, self._size, self.next_seq = 1, 0, 1
            self._active_index, self._next_mark = [], 0
            self._load_dedup([])
            return
        for base, nxt in zip(bases, bases[1:], strict=False):
            last = self.reader.last_record_seq(base)
            if last is None or last != nxt - 1:
                found = "no readable last record" if last is None else f"its last record has seq {last}"
                raise CorruptionError(
                    f"sealed segment {segment_name(base)} does not end right before {segment_name(nxt)} "
                    f"({found}; expected seq {nxt - 1}): a segment is missing or damaged; run 'evlog verify'",
                    segment=segment_name(base), seq=nxt - 1,
                )
        base = bases[-1]
        path = self.reader.seg_path(base)
        if not os.stat(path).st_mode & 0o200:
            self.fs.unseal(path)  # sealed by a roll that died before the next segment existed: it is the active one
        res = scan_segment(path, base, strict=repair)
        self._active_base = base
        self._size = res.valid_end
        self.next_seq = res.next_seq
        self._active_index = res.index
        self._next_mark = res.index[-1][1] + INDEX_EVERY if res.index else 0
        if res.last_ts:
            self._see_ts(res.last_ts)
        elif base > 1:
            prev = self.reader.find(base - 1)
            if prev is not None:
                self._see_ts(prev.event.ts)
        if res.damage is not None:  # cut first: reads (the dedup checkpoint's check) must not meet the damage
            self._cut_tail(base, res, strict=not repair)
        if self._fd is None:
            self._open_active()
        self._load_dedup(res.dedup)  # before anything is appended (a roll saves the dedup checkpoint)
        if self.recovered is not None:  # a cut tail, or sealed segments a repair quarantined
            self._record_recovery()

    def _recover_tail(self, base: int, res) -> None:  # noqa: ANN001
        """Cut the damaged tail of the active segment (a writer died during its turn) and record the cut."""
        self._cut_tail(base, res)
        self._open_active()
        self._record_recovery()

    def _cut_tail(self, base: int, res, *, strict: bool = True) -> None:  # noqa: ANN001
        """Cut the damaged tail of the active segment (``strict``: only if it looks like a torn write)."""
        d = res.damage
        if d.records_after and strict:
            raise CorruptionError(
                f"{segment_name(base)} is damaged at byte {d.offset} (seq {d.seq}: {d.reason}) and "
                f"{d.records_after} intact record(s) follow, so this is not a torn write; "
                "run 'evlog verify' to see it and 'evlog repair' to cut the log there (the cut bytes are kept)",
                segment=segment_name(base), offset=d.offset, seq=d.seq,
            )
        self._close_fd()
        self._cut(base, res.valid_end, res.size, d.reason, d.records_after)

    def _record_recovery(self) -> None:
        """Append the pending ``log.recovered`` event, durably whatever the policy."""
        rec = self.recovered
        assert rec is not None
        seq = self._append_one(rec, None)
        self.recovered = msgspec.structs.replace(rec, seq=seq)
        self._sync("fsync of the recovery record failed")

    def _repair_sealed(self) -> None:
        """Find the first damage in any segment; cut there and quarantine every later segment."""
        bases = segment_bases(self.dir)
        expected = bases[0] if bases else 1
        for i, base in enumerate(bases):
            if base != expected:  # a gap or overlap: the previous segment ends the good log
                self._quarantine_segments(bases[i:], f"repair: segment {segment_name(base)} starts at seq {base} where {expected} was expected")
                return
            res = scan_segment(self.reader.seg_path(base), base, strict=True)
            later = bases[i + 1 :]
            if later and res.damage is None and res.next_seq == later[0]:
                expected = res.next_seq
                continue
            if not later:
                return  # the active segment: ordinary recovery (with repair) handles it
            reason = res.damage.reason if res.damage else f"{segment_name(later[0])} does not continue at seq {res.next_seq}"
            moved = self._quarantine_segments(later, "")
            self.fs.unseal(self.reader.seg_path(base))
            self._cut(base, res.valid_end, res.size, f"repair: {reason}", 0)
            assert self.recovered is not None  # _cut recorded the cut
            self.recovered = msgspec.structs.replace(self.recovered, segments_quarantined=moved)
            return

    def _quarantine_segments(self, bases: list[int], reason: str) -> list[str]:
        """Move whole segments into log/quarantine/ (recording it if ``reason`` is given)."""
        qdir = os.path.join(self.dir, QUARANTINE_DIR)
        os.makedirs(qdir, exist_ok=True)
        moved, total = [], 0
        for b in bases:
            total += os.path.getsize(self.reader.seg_path(b))
            self.fs.rename(self.reader.seg_path(b), os.path.join(qdir, segment_name(b)))
            moved.append(segment_name(b))
            if os.path.exists(index_path(self.dir, b)):
                os.unlink(index_path(self.dir, b))
        self.fs.fsync_dir(self.dir)
        if reason:
            remaining = segment_bases(self.dir)
            prev = remaining[-1] if remaining else bases[0]
            if os.path.exists(index_path(self.dir, prev)):
                os.unlink(index_path(self.dir, prev))  # it becomes the active segment again
            if remaining:
                self.fs.unseal(self.reader.seg_path(prev))
            self.recovered = LogRecovered(
                segment=segment_name(prev),
                offset=os.path.getsize(self.reader.seg_path(prev)) if remaining else 0,
                bytes_truncated=total, reason=reason, quarantine=QUARANTINE_DIR, segments_quarantined=moved,
            )
        return moved

    def _cut(self, base: int, valid_end: int, size: int, reason: str, records_after: int) -> None:
        path = self.reader.seg_path(base)
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
        self.reader._index_cache.pop(base, None)  # noqa: SLF001 - same package, the cache must not outlive the cut
        self._size = valid_end
        self.recovered = LogRecovered(
            segment=segment_name(base), offset=valid_end, bytes_truncated=size - valid_end, reason=reason,
            quarantine=f"{QUARANTINE_DIR}/{qname}", records_after_damage=records_after,
        )

    def _open_active(self) -> None:
        self._fd = self.fs.open_append(self.reader.seg_path(self._active_base))

    def _create_segment(self, base: int) -> None:
        path = self.reader.seg_path(base)
        fd = self.fs.open_append(path)
        self.fs.close(fd)
        self.fs.fsync_dir(self.dir)
        self._fd = self.fs.open_append(path)

    def _close_fd(self) -> None:
        if self._fd is not None:
            try:
                self.fs.close(self._fd)
            except OSError:
                pass
            self._fd = None

    # ------------------------------------------------------------------ dedup keys

    def _load_dedup(self, active_keys: list[tuple[str, int]]) -> None:
        """Load the dedup checkpoint if it matches the log, else rebuild; then catch up (``active_keys``: the active segment's)."""
        start = self.reader.log_start
        path = os.path.join(self.dir, DEDUP_FILE)
        try:
            with open(path, "rb") as f:
                data = f.read()
            head, _, body = data.partition(b"\n")
            meta = msgspec.json.decode(head)
            seq, fp = int(meta["seq"]), str(meta["fingerprint"])
            intact = meta.get("body") == "xxh3-64:" + codec._xxh64_hex(body)  # noqa: SLF001 - the checksum of the keys
            if intact and (seq == 0 or (seq < self.next_seq and self._fingerprint_at(seq) == fp)):
                self._dedup = HashIndex.from_bytes(body)
                start = seq + 1
                self._dedup_file_seq = seq
        except (OSError, ValueError, KeyError, TypeError, msgspec.DecodeError):
            pass
        for base, pos in self._positions_from(start):
            if base == self._active_base:  # recovery just scanned it: use what it found
                for key, seq in active_keys:
                    if seq >= start:
                        self._dedup.add(hash_key(key), seq)
                continue
            for p, line in iter_lines(self.reader.seg_path(base), pos):
                if not codec.checksum_ok(line):  # a sealed segment damaged since it was written
                    seg = segment_name(base)
                    raise CorruptionError(f"sealed segment {seg} is damaged at byte {p}; run 'evlog verify'",
                                          segment=seg, offset=p)
                fr = codec.FRAME_DECODER.decode(line)
                if fr.dedup:
                    self._dedup.add(hash_key(fr.dedup), fr.seq)

    def _fingerprint_at(self, seq: int) -> str | None:
        rec = self.reader.find(seq)
        return rec.fingerprint if rec else None

    def _positions_from(self, seq: int) -> list[tuple[int, int]]:
        """(segment base, byte position) pairs to scan to read every record from ``seq`` on."""
        if seq >= self.next_seq:
            return []
        bases = segment_bases(self.dir)
        i = max(bisect_right(bases, seq) - 1, 0)
        base = bases[i]
        pos, _at = self.reader.locate(base, seq)
        return [(base, pos)] + [(b, 0) for b in bases[i + 1 :]]

    def _save_dedup(self) -> None:
        last = self.next_seq - 1
        body = self._dedup.to_bytes()
        head = msgspec.json.encode({"seq": last, "fingerprint": self._fingerprint_at(last) if last else "",
                                    "body": "xxh3-64:" + codec._xxh64_hex(body)})  # noqa: SLF001
        self.fs.atomic_write(os.path.join(self.dir, DEDUP_FILE), head + b"\n" + body, sync=False)
        self._dedup_saved = time.monotonic()
        self._dedup_file_seq = last

    def lookup_dedup(self, key: str) -> int | None:
        """The seq of the event that carries dedup key ``key`` as this writer last saw the log, or None."""
        return self._dedup.get(hash_key(key))

    def lookup_dedup_int(self, key: int) -> int | None:
        """``lookup_dedup`` for a key already hashed to its 128-bit integer (see ``codec.hash_key``)."""
        return self._dedup.get(key)

    # ------------------------------------------------------------------ appending

    def append(self, event: Event, *, expected: int | None = None) -> int:
        """Append one event in its own turn; returns its seq (the first one's seq if its dedup key is known)."""
        with self._mutex:
            if self._depth:
                return self._append_one(event, expected)
            if not (self._leased and (time.monotonic() < self._lease_until or self._renew_lease())):
                self._begin_turn()  # _take_turn inlined (the hot path); on a lease nobody else can have written
            try:
                seq = self._append_one(event, expected)
            except BaseException:
                self._end_turn(ok=False)
                raise
            if self._leased:
                self._lease_busy = True
            else:
                self._end_turn()
            return seq

    def _append_one(self, event: Event, expected: int | None) -> int:
        if expected is not None or self._poisoned or self.closed:
            self._check_writable(expected)
        event = redact_event(event)  # the secrets door (I24): before the line, its checksum and its dedup entry
        plain = plain_message(event)
        if not plain:
            validate_event(event)
        key = event.dedup
        if key:
            h = hash_key(key)
            first = self._dedup.get(h)
            if first is not None:
                return first
        seq = self.next_seq
        ms = int(self.clock() * 1000)
        line = _frame(event, seq, self._ts_bytes if ms <= self._ts_ms else self._stamp(ms))
        if not plain:
            _check_types([line], [event])
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
        self.last_append = (seq, seq)
        return seq

    def append_batch(self, events: Iterable[Event], *, expected: int | None = None, sync: bool = True) -> list[int]:
        """Append events atomically in one turn: after any crash all of them are in the log or none.

        Returns each event's seq. ``expected`` is the last seq the caller saw; if the log
        has moved on, nothing is written and ``ConflictError`` is raised. Events whose
        dedup key the log already holds are not written again (their first seq is
        returned). A batch that repeats a dedup key writes nothing and raises
        ``DuplicateInBatchError``. ``sync=False`` leaves the ``fsync`` durability's
        fdatasync to a later ``sync()``: for bulk writers that can redo their work after
        a crash (ingest, whose dedup keys make a rerun write only what was lost).
        """
        events = list(events)
        with self._mutex:
            if self._depth:
                return self._append_batch(events, expected, sync)
            self._take_turn()
            try:
                seqs = self._append_batch(events, expected, sync)
            except BaseException:
                self._end_turn(ok=False)
                raise
            self._end_turn()
            return seqs

    def _append_batch(self, events: list[Event], expected: int | None, sync: bool = True) -> list[int]:
        self._check_writable(expected)
        seqs: list[int] = [0] * len(events)
        todo: list[int] = []
        keys: dict[int, int] = {}  # hashed dedup key -> batch index
        checked: list[int] = []  # the events the type check must decode (see validate.plain_message)
        for i, ev in enumerate(events):
            ev = events[i] = redact_event(ev)  # the secrets door (I24)
            if not plain_message(ev):
                if not isinstance(ev, Event) or type(ev) is Event:
                    raise InvalidEventError(f"batch item {i} is not an event: {ev!r}")
                validate_event(ev, where=f"batch item {i}")
                checked.append(i)
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
        lines = [_frame(events[i], seq + j, ts, n - 1 - j) for j, i in enumerate(todo)]
        if checked:
            at = {i: j for j, i in enumerate(todo)}
            check = [i for i in checked if i in at]
            _check_types([lines[at[i]] for i in check], [events[i] for i in check])
        self.last_line = lines[-1]
        self._write(b"".join(lines), lines, sync)
        for j, i in enumerate(todo):
            seqs[i] = seq + j
        add = self._dedup.add
        for k, i in keys.items():
            if seqs[i] >= seq:  # written now (not a known duplicate)
                add(k, seqs[i])
        self.last_append = (seq, seq + n - 1)
        return seqs

    def last_written(self) -> tuple[str, str]:
        """(ts, fingerprint) of the newest line this writer wrote: the stamp every event of that append got."""
        return self._ts_bytes.decode(), codec.fingerprint(self.last_line)

    def end_seq(self) -> int:
        """Seq of the newest event on disk; cheap (one ``fstat``) when no other writer appended."""
        with self._mutex:
            fd = self._fd
            if fd is not None and not self._poisoned:
                st = os.fstat(fd)
                if st.st_size == self._size and st.st_mode & 0o200:
                    return self.next_seq - 1
        return self.reader.last_seq

    def _check_writable(self, expected: int | None) -> None:
        if self.closed:
            raise WriterClosedError("the log is closed")
        if self._poisoned:
            raise WriterClosedError(f"the writer refuses appends after an I/O error ({self._poisoned}); reopen the log")
        if expected is not None and expected != self.next_seq - 1:
            raise ConflictError(f"expected the log to end at seq {expected}, but it ends at seq {self.next_seq - 1}")

    def _stamp(self, ms: int | None = None) -> bytes:
        """The ``ts`` of the next append: UTC, millisecond precision, never going backwards."""
        if ms is None:
            ms = int(self.clock() * 1000)
        if ms > self._ts_ms:
            self._ts_ms = ms
            self._ts_bytes = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z").encode()
        return self._ts_bytes

    def _write(self, data: bytes, lines: list[bytes] | None, sync: bool = True) -> None:
        """Write one append's bytes (``lines``: a batch's lines, None for one event), then sync (see ``append_batch``)."""
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
        if pos + len(data) > self._next_mark:  # a mark falls in these bytes (a batch may cross one mid-way)
            for line in lines or (data,):
                if pos >= self._next_mark:
                    self._active_index.append((seq, pos))
                    self._next_mark = pos + INDEX_EVERY
                pos += len(line)
                seq += 1
        if self.durability == "fsync" and sync:
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
        """Seal the active segment (fsync, read-only mark, sparse index) and start the next one."""
        self._sync("fsync before sealing failed")
        try:
            self.fs.seal(self._fd)  # type: ignore[arg-type]
            self.fs.atomic_write(index_path(self.dir, self._active_base),
                                 encode_index(self._active_base, self._size, self._active_index), sync=False)
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
        if time.monotonic() - self._dedup_saved > DEDUP_SAVE_INTERVAL:
            self._save_quietly(self._save_dedup)

    def seal_active(self) -> bool:
        """Seal the active segment now if it holds anything (call inside ``turn()``); True if it did.

        ``eventlog.erasure`` rewrites sealed segments only: another writer's descriptor may still
        point at the active file, and a sealed (read-only) file tells it to look again.
        """
        with self._mutex:
            if not self._depth:
                raise WriterClosedError("seal_active needs the write lock: call it inside turn()")
            self._check_writable(None)
            if not self._size:
                return False
            self._roll()
            return True

    def _save_active_index(self) -> None:
        """Leave the active segment's sparse index for readers (disposable, checked on use)."""
        self.fs.atomic_write(index_path(self.dir, self._active_base),
                             encode_index(self._active_base, self._size, self._active_index), sync=False)

    @staticmethod
    def _save_quietly(save: Callable[[], None]) -> None:
        try:
            save()
        except OSError:
            pass  # disposable: rebuilt from the log on next open

    def sync(self) -> None:
        """fsync now whatever this writer wrote and did not sync (``group``/``none`` durability, ``sync=False`` batches)."""
        with self._mutex:
            if not self.closed and not self._poisoned and (self._unsynced or self._syncing):
                self._sync("fsync failed")  # (again, if the group commit's fsync is still under way)

    def _flush_loop(self) -> None:
        """Group commit: every interval, fsync what was written, outside the mutex so appends go on
        meanwhile. It syncs a duplicate descriptor, so a roll closing the segment cannot pull the file
        from under it; ``sync()`` called meanwhile syncs again rather than trust an fsync under way."""
        while not self._stop_flusher.wait(self._group_interval):
            with self._mutex:
                if self.closed or self._poisoned or not self._unsynced or self._fd is None:
                    continue
                try:
                    fd = self.fs.dup(self._fd)
                except OSError:
                    continue  # out of descriptors: the next interval (or a roll, or close) syncs
                self._unsynced = 0
                self._syncing = True
            try:
                self.fs.fsync(fd)
            except OSError as e:
                with self._mutex:
                    self._poison(f"group commit fsync failed: {e}")  # the next append reports it
            finally:
                self._syncing = False
                try:
                    self.fs.close(fd)
                except OSError:
                    pass

    def close(self) -> None:
        """Sync, save the dedup and index checkpoints (if the lock is free soon) and close; idempotent."""
        if self._flusher is not None:
            self._stop_flusher.set()
            self._flusher.join()
            self._flusher = None
        self.stop_keeper()
        with self._mutex:
            if self.closed:
                return
            self._leased = False  # the lock is still held: the checkpoints below use it, then release it
            try:
                if not self._poisoned:
                    if self._unsynced:
                        self._sync("fsync on close failed")
                    self._save_checkpoints()
            finally:
                self.closed = True
                self._close_fd()
                self._lock.close()

    def _save_checkpoints(self) -> None:
        """Dedup keys and the active index, written in a turn of our own; skipped if others keep the lock busy."""
        try:
            waited = self._lock.acquire(min(self.lock_timeout, 1.0))
        except Exception:  # noqa: BLE001 - LockedError or an unreadable lock file: checkpoints are disposable
            return
        del waited
        try:
            self._catch_up()
            if self._dedup_file_seq < 0 or self.next_seq - 1 - self._dedup_file_seq > DEDUP_STALE_OK:
                # rewriting every key (24 bytes each) on every close would cost a short-lived
                # writer (a hook) more than the few records the next open scans instead
                self._save_quietly(self._save_dedup)
            self._save_quietly(self._save_active_index)
        except Exception:  # noqa: BLE001 - a checkpoint must never turn a clean close into an error
            pass
        finally:
            self._lock.release()
