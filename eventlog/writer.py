"""Writing the log: appends from any number of processes, taking turns; the parts are in ``writer_*``.

Any number of processes (the daemon, an agent's session store, ingest, the CLI, an MCP
server) may hold a ``LogWriter`` on one log at once. The write lock (``log/LOCK``) is
held only for one append or atomic batch and its bookkeeping, as SQLite's WAL holds its
write lock; ``turn()`` holds it across several appends on purpose (bulk writers). The
parts, each owning its state:

* ``writer_options.LogOptions``: the options, validated once;
* ``writer_turns.Turns``: the lock, the turn depth and the lease that keeps the lock between appends;
* ``writer_catchup``: each turn first reads what other writers appended since this one's last turn;
* ``writer_recovery``: the first turn recovers the log (a pure plan from what is on disk, then applied);
* ``writer_dedup.DedupIndex``: dedup keys and their checkpoint (a known key writes nothing);
* ``writer_segment.ActiveSegment``: the file appended to, its size, sparse index and rolls;
* ``writer_group.GroupCommit``: the ``group`` durability's background fsync.

**Appends** are redacted first (``eventlog.redact``: the secrets door every event passes,
INVARIANTS I24), then validated (``eventlog.validate``: ``validate_event`` and the type
check that decodes the framed line back; a plain message skips both, see
``validate.plain_message``), then assign ``seq`` (dense from 1) and ``ts`` (UTC, ms, never
decreasing) and write each append's lines with one ``write``; a batch is framed with ``more``
counters so a crash keeps all of it or none. Durability policies: ``fsync`` (``append``
returns after ``fdatasync``), ``group`` (a background thread fsyncs every
``group_commit_interval``; an OS crash can lose the last interval), ``none``. Whatever the
policy, an I/O error during an append is not acknowledged and poisons the writer: it
refuses further appends until reopened (no fsync retry; PostgreSQL's fsyncgate).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import msgspec

from eventlog import codec
from eventlog.codec import hash_key
from eventlog.errors import ConflictError, DuplicateInBatchError, InvalidEventError, LogIOError, WriterClosedError
from eventlog.events import Event, LogRecovered
from eventlog.fsio import OS_FS, FileSystem, remove_stray_temp_files
from eventlog.lock import LOCK_NAME, FileLock
from eventlog.reader import LogReader
from eventlog.redact import redact_event
from eventlog.segments import segment_name
from eventlog.timeutil import LogStamp
from eventlog.validate import check_types, frame_checked, plain_message, validate_event
from eventlog.writer_catchup import plan_catch_up
from eventlog.writer_dedup import DEDUP_FILE, DEDUP_SAVE_INTERVAL, DEDUP_STALE_OK, DedupIndex
from eventlog.writer_group import GroupCommit
from eventlog.writer_options import (
    DEFAULT_GROUP_COMMIT_INTERVAL,
    DEFAULT_LEASE_SECONDS,
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_SEGMENT_BYTES,
    DURABILITY_POLICIES,
    Durability,
    LogOptions,
)
from eventlog.writer_recovery import QUARANTINE_DIR, Recovery, plan_open, plan_repair, tail_cut
from eventlog.writer_segment import ActiveSegment
from eventlog.writer_turns import HANDOVER_SECONDS, KEEPER_MAX_SECONDS, Turns

__all__ = [
    "DEDUP_FILE", "DEDUP_SAVE_INTERVAL", "DEDUP_STALE_OK", "DEFAULT_GROUP_COMMIT_INTERVAL", "DEFAULT_LEASE_SECONDS",
    "DEFAULT_LOCK_TIMEOUT", "DEFAULT_SEGMENT_BYTES", "DURABILITY_POLICIES", "HANDOVER_SECONDS", "KEEPER_MAX_SECONDS",
    "QUARANTINE_DIR", "Durability", "LogOptions", "LogWriter",
]


class LogWriter:
    """Appends to a log directory, taking turns with other writers; see the module docstring."""

    def __init__(self, reader: LogReader, options: LogOptions, *, fs: FileSystem = OS_FS,
                 clock: Callable[[], float] = time.time) -> None:
        self.options = options
        self.reader, self.dir, self.fs, self.clock = reader, reader.dir, fs, clock
        self.durability, self.segment_bytes = options.durability, options.segment_bytes
        self.lease_seconds = options.lease
        self._fsync = options.durability == "fsync"
        self._mutex = threading.RLock()
        lock = FileLock(os.path.join(self.dir, LOCK_NAME), what=f"the log {self.dir}", announce=True)
        self._turns = Turns(lock, self._mutex, lock_timeout=options.lock_timeout, lease_seconds=self.lease_seconds)
        self._seg = ActiveSegment(reader, fs, limit=options.segment_bytes)
        self._dedup = DedupIndex(reader, fs)
        self._recovery = Recovery(reader, fs, clock)
        self._stamp = LogStamp()
        self._group: GroupCommit | None = None
        self._poisoned: str | None = None
        self.closed = False
        self.next_seq = 1
        self.last_line = b""  # the newest line this writer wrote (see last_written)
        self.last_append = (0, 0)  # first and last seq of this writer's newest append (0, 0: none)
        self.recovered: LogRecovered | None = None

    @classmethod
    def open(cls, reader: LogReader, *, durability: Durability = "fsync", segment_bytes: int = DEFAULT_SEGMENT_BYTES,
             group_commit_interval: float = DEFAULT_GROUP_COMMIT_INTERVAL, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
             repair: bool = False, fs: FileSystem = OS_FS, clock: Callable[[], float] = time.time,
             lease_seconds: float = DEFAULT_LEASE_SECONDS) -> LogWriter:
        """A writer of ``reader``'s directory; its first turn recovers the log (``repair``: cut damage on purpose).

        ``lease_seconds`` (``group``/``none`` durability only; 0: none) is how long the lock is
        kept after an append for the next ones (see "Leases" in ``eventlog.writer_turns``).
        """
        options = LogOptions(durability, segment_bytes, group_commit_interval, lock_timeout, lease_seconds)
        return cls.from_options(reader, options, repair=repair, fs=fs, clock=clock)

    @classmethod
    def from_options(cls, reader: LogReader, options: LogOptions, *, repair: bool = False, fs: FileSystem = OS_FS,
                     clock: Callable[[], float] = time.time) -> LogWriter:
        """``open`` with options already validated (``Log.open`` validates them before touching the disk)."""
        w = cls(reader, options, fs=fs, clock=clock)
        with w._mutex:
            try:
                w._turns.acquire()
            except OSError as e:
                raise LogIOError(f"cannot open the log in {w.dir} for writing: {e.strerror or e}; "
                                 "readers (tail, sessions, recall, replay --check) still work") from e
            try:
                remove_stray_temp_files(w.dir)
                w._load(repair)
            except OSError as e:
                w._seg.close()
                w._turns.lock.close()
                raise LogIOError(f"cannot open the log in {w.dir} for writing: {e.strerror or e}"
                                 + (f" ({e.filename})" if e.filename else "")
                                 + "; readers (tail, sessions, recall, replay --check) still work") from e
            except BaseException:
                w._seg.close()
                w._turns.lock.close()
                raise
            finally:
                w._turns.release()
        if options.durability == "group":
            w._group = GroupCommit(w._seg, w._mutex, options.group_commit_interval, writable=w._writable,
                                   poison=w._poison)
            w._group.start()
        return w

    # Views of the parts' state that tests and tools read.
    lock_waits = property(lambda self: self._turns.lock_waits, doc="Seconds each turn that waited for the lock waited.")
    free_turns = property(lambda self: self._turns.free_turns, doc="Turns that found the lock free.")
    _leased = property(lambda self: self._turns.leased, doc="Holding the lock on a lease (between turns).")
    _lock = property(lambda self: self._turns.lock, doc="The write lock (log/LOCK).")

    @property
    def lock_timeout(self) -> float:
        """Seconds a turn waits for the lock before ``LockedError`` (may be changed on an open writer)."""
        return self._turns.lock_timeout

    @lock_timeout.setter
    def lock_timeout(self, seconds: float) -> None:
        self._turns.lock_timeout = seconds

    def _writable(self) -> bool:
        return not self.closed and not self._poisoned

    # ------------------------------------------------------------------ turns

    def _begin_turn(self) -> None:
        """Take the lock and catch up with other writers. The common case (lock free, nobody wrote) is
        two system calls: a non-blocking ``flock`` and an ``fstat`` of the active segment."""
        if self._poisoned or self.closed:
            self._check_writable(None)
        turns = self._turns
        if self._seg.fd >= 0 and turns.try_acquire():
            try:
                if not self._seg.unchanged():
                    self._follow_others()
            except BaseException:
                turns.release()
                raise
            return
        turns.acquire()
        try:
            self._catch_up()
        except BaseException:
            turns.release()
            raise

    @contextmanager
    def turn(self) -> Iterator[LogWriter]:
        """Hold the write lock across several appends (other writers wait); nests."""
        with self._mutex:
            turns = self._turns
            if turns.depth:
                turns.depth += 1
                try:
                    yield self
                finally:
                    turns.depth -= 1
                return
            self._take_turn()
            turns.depth = 1
            try:
                yield self
            finally:
                turns.depth = 0
                self._end_turn(ok=False)  # a turn taken on purpose ends on purpose: no lease after it

    def _take_turn(self) -> None:
        """Start a turn: nothing to do while a lease holds (renewed unless others wait), else take the lock."""
        if not self._turns.on_lease():
            self._begin_turn()

    def _end_turn(self, ok: bool = True) -> None:
        """End a turn: keep the lock on a lease (``Turns.end``) or release it."""
        self._turns.end(ok and not self._poisoned and not self.closed)

    def stop_keeper(self) -> None:
        """Stop the lease keeper thread (``close`` does; so does a test that abandons a writer)."""
        self._turns.stop_keeper()

    def _catch_up(self) -> None:
        """Bring this writer's view up to the log on disk (called at the start of every turn)."""
        if self._seg.fd < 0:
            self._load(False)
        elif not self._seg.unchanged():
            self._follow_others()

    def _follow_others(self) -> None:
        """Apply what other writers appended since our last turn: seqs, dedup keys, index, ts (``writer_catchup``)."""
        seg = self._seg
        plan = plan_catch_up(self.reader, base=seg.base, size=seg.size, next_seq=self.next_seq,
                             next_mark=seg.next_mark, replaced=seg.replaced())
        if plan.reload:
            seg.close()
            self._load(False)
            return
        for res in plan.scans:
            if res.base == seg.base:
                seg.index.extend(res.index)
                seg.reset(res.base, res.valid_end, seg.index)
            else:
                seg.close()
                seg.reset(res.base, res.valid_end, res.index)
            for key, seq in res.dedup:
                self._dedup.add(hash_key(key), seq)
            self.next_seq = res.next_seq
            if res.last_ts:
                self._stamp.see(res.last_ts)
        last = plan.scans[-1]
        if last.damage is not None:  # a writer died during its turn: cut its torn tail and record the cut
            seg.close()
            self.recovered = self._recovery.cut(tail_cut(last))
            seg.open()
            self._record_recovery()
        if seg.fd < 0:
            seg.open()

    # ------------------------------------------------------------------ recovery

    def _load(self, repair: bool) -> None:
        """Recover the log from disk (``writer_recovery``: plan, then apply) and load the dedup keys."""
        self._dedup.reset()
        self.recovered = None
        if repair:
            fix = plan_repair(self.reader)
            if fix is not None:
                self.recovered = self._recovery.repair(fix)
        plan = plan_open(self.reader, repair=repair)
        seg = self._seg
        if plan.scan is None:  # an empty log
            seg.create(1)
            self.next_seq = 1
            self._dedup.load(1, 1, [])
            return
        if plan.unseal:
            self.fs.unseal(self.reader.seg_path(plan.base))  # sealed by a roll that died before the next segment existed
        res = plan.scan
        seg.reset(plan.base, res.valid_end, res.index)
        self.next_seq = res.next_seq
        if plan.last_ts:
            self._stamp.see(plan.last_ts)
        if plan.cut is not None:  # cut first: reads (the dedup checkpoint's check) must not meet the damage
            seg.close()
            self.recovered = self._recovery.cut(plan.cut)
        if seg.fd < 0:
            seg.open()
        self._dedup.load(self.next_seq, seg.base, res.dedup)  # before anything is appended (a roll saves it)
        if self.recovered is not None:  # a cut tail, or sealed segments a repair quarantined
            self._record_recovery()

    def _record_recovery(self) -> None:
        """Append the pending ``log.recovered`` event, durably whatever the policy."""
        rec = self.recovered
        assert rec is not None
        seq = self._append_one(rec, None)
        self.recovered = msgspec.structs.replace(rec, seq=seq)
        self._sync("fsync of the recovery record failed")

    # ------------------------------------------------------------------ dedup keys

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
            turns = self._turns
            if turns.depth:
                return self._append_one(event, expected)
            if not turns.on_lease():
                self._begin_turn()  # on a lease nobody else can have written
            try:
                seq = self._append_one(event, expected)
            except BaseException:
                self._end_turn(ok=False)
                raise
            if turns.leased:
                turns.lease_busy = True
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
        stamp = self._stamp
        line = frame_checked(event, seq, stamp.text if ms <= stamp.ms else stamp.at(ms))
        if not plain:
            check_types([line], [event])
        self.last_line = line
        seg = self._seg
        pos = seg.size
        if pos + len(line) > seg.limit or pos >= seg.next_mark:
            self._write(line, None)  # the general path: roll, index mark
        else:
            try:
                self.fs.write(seg.fd, line)
            except OSError as e:
                raise self._failed("write failed", e) from e
            seg.size = pos + len(line)
            self.next_seq = seq + 1
            if self._fsync:
                self._sync("fsync failed")
            else:
                seg.unsynced += 1
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
            if self._turns.depth:
                return self._append_batch(events, expected, sync)
            self._take_turn()
            try:
                seqs = self._append_batch(events, expected, sync)
            except BaseException:
                self._end_turn(ok=False)
                raise
            self._end_turn()
            return seqs

    def _batch_todo(self, events: list[Event], seqs: list[int]) -> tuple[list[int], dict[int, int], list[int]]:
        """Redact and validate a batch in place: (the items to write, hashed dedup key -> item, items to type-check).

        Items whose dedup key the log holds get their first seq in ``seqs`` and are not written.
        """
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
                    raise DuplicateInBatchError(f"batch items {keys[k]} and {i} share dedup key {ev.dedup!r}; "
                                                "nothing was written")
                keys[k] = i
                first = self._dedup.get(k)
                if first is not None:
                    seqs[i] = first
                    continue
            todo.append(i)
        return todo, keys, checked

    def _append_batch(self, events: list[Event], expected: int | None, sync: bool = True) -> list[int]:
        self._check_writable(expected)
        seqs: list[int] = [0] * len(events)
        todo, keys, checked = self._batch_todo(events, seqs)
        if not todo:
            return seqs
        ts = self._stamp.at(int(self.clock() * 1000))
        seq = self.next_seq
        n = len(todo)
        lines = [frame_checked(events[i], seq + j, ts, n - 1 - j) for j, i in enumerate(todo)]
        if checked:
            at = {i: j for j, i in enumerate(todo)}
            check = [i for i in checked if i in at]
            check_types([lines[at[i]] for i in check], [events[i] for i in check])
        self.last_line = lines[-1]
        self._write(b"".join(lines), lines, sync)
        for j, i in enumerate(todo):
            seqs[i] = seq + j
        for k, i in keys.items():
            if seqs[i] >= seq:  # written now (not a known duplicate)
                self._dedup.add(k, seqs[i])
        self.last_append = (seq, seq + n - 1)
        return seqs

    def last_written(self) -> tuple[str, str]:
        """(ts, fingerprint) of the newest line this writer wrote: the stamp every event of that append got."""
        return self._stamp.text.decode(), codec.fingerprint(self.last_line)

    def end_seq(self) -> int:
        """Seq of the newest event on disk; cheap (one ``fstat``) when no other writer appended."""
        with self._mutex:
            if self._seg.fd >= 0 and not self._poisoned and self._seg.unchanged():
                return self.next_seq - 1
        return self.reader.last_seq

    def _check_writable(self, expected: int | None) -> None:
        if self.closed:
            raise WriterClosedError("the log is closed")
        if self._poisoned:
            raise WriterClosedError(f"the writer refuses appends after an I/O error ({self._poisoned}); reopen the log")
        if expected is not None and expected != self.next_seq - 1:
            raise ConflictError(f"expected the log to end at seq {expected}, but it ends at seq {self.next_seq - 1}")

    def _write(self, data: bytes, lines: list[bytes] | None, sync: bool = True) -> None:
        """Write one append's bytes (``lines``: a batch's lines, None for one event), then sync (see ``append_batch``)."""
        seg = self._seg
        if seg.size and seg.size + len(data) > seg.limit:
            self._roll()
        try:
            seg.write(data, self.next_seq, lines)
        except OSError as e:
            raise self._failed("write failed", e) from e
        count = 1 if lines is None else len(lines)
        self.next_seq += count
        if self._fsync and sync:
            self._sync("fsync failed")
        else:
            seg.unsynced += count

    def _failed(self, what: str, e: OSError) -> LogIOError:
        """Poison the writer after a failed write; the error that refuses the append."""
        self._poison(f"{what}: {e}")
        return LogIOError(f"append not acknowledged: writing {self._seg.name} failed: {e}")

    def _sync(self, what: str) -> None:
        try:
            self._seg.sync()
        except OSError as e:
            self._poison(f"{what}: {e}")
            raise LogIOError(f"append not acknowledged: {what} on {self._seg.name}: {e}") from e

    def _poison(self, why: str) -> None:
        self._poisoned = why

    def _roll(self) -> None:
        """Seal the active segment (fsync, read-only mark, sparse index) and start the next one."""
        self._sync("fsync before sealing failed")
        try:
            self._seg.roll(self.next_seq)
        except OSError as e:
            self._poison(f"segment roll failed: {e}")
            raise LogIOError(f"append not acknowledged: rolling to {segment_name(self.next_seq)} failed: {e}") from e
        if self._dedup.due():
            self._save_quietly(lambda: self._dedup.save(self.next_seq - 1))

    def seal_active(self) -> bool:
        """Seal the active segment now if it holds anything (call inside ``turn()``); True if it did.

        ``eventlog.erasure`` rewrites sealed segments only: another writer's descriptor may still
        point at the active file, and a sealed (read-only) file tells it to look again.
        """
        with self._mutex:
            if not self._turns.depth:
                raise WriterClosedError("seal_active needs the write lock: call it inside turn()")
            self._check_writable(None)
            if not self._seg.size:
                return False
            self._roll()
            return True

    @staticmethod
    def _save_quietly(save: Callable[[], None]) -> None:
        try:
            save()
        except OSError:
            pass  # disposable: rebuilt from the log on next open

    def sync(self) -> None:
        """fsync now whatever this writer wrote and did not sync (``group``/``none`` durability, ``sync=False`` batches)."""
        with self._mutex:
            syncing = self._group is not None and self._group.syncing
            if not self.closed and not self._poisoned and (self._seg.unsynced or syncing):
                self._sync("fsync failed")  # (again, if the group commit's fsync is still under way)

    def close(self) -> None:
        """Sync, save the dedup and index checkpoints (if the lock is free soon) and close; idempotent."""
        if self._group is not None:
            self._group.stop()
        self.stop_keeper()
        with self._mutex:
            if self.closed:
                return
            self._turns.leased = False  # the lock is still held: the checkpoints below use it, then release it
            try:
                if not self._poisoned:
                    if self._seg.unsynced:
                        self._sync("fsync on close failed")
                    self._save_checkpoints()
            finally:
                self.closed = True
                self._seg.close()
                self._turns.lock.close()

    def abandon(self) -> None:
        """Stop the way a killed process stops (crash tests): no sync, no checkpoint; threads stopped, lock released."""
        if self._group is not None:
            self._group.stop()
        self.stop_keeper()
        self._seg.close()
        self.closed = True
        self._turns.lock.close()

    def _save_checkpoints(self) -> None:
        """Dedup keys and the active index, written in a turn of our own; skipped if others keep the lock busy."""
        lock = self._turns.lock
        try:
            lock.acquire(min(self.lock_timeout, 1.0))
        except Exception:  # noqa: BLE001 - LockedError or an unreadable lock file: checkpoints are disposable
            return
        try:
            self._catch_up()
            if self._dedup.stale(self.next_seq - 1):
                # rewriting every key (24 bytes each) on every close would cost a short-lived
                # writer (a hook) more than the few records the next open scans instead
                self._save_quietly(lambda: self._dedup.save(self.next_seq - 1))
            self._save_quietly(self._seg.save_index)
        except Exception:  # noqa: BLE001 - a checkpoint must never turn a clean close into an error
            pass
        finally:
            lock.release()
