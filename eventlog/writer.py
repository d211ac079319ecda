"""Writing the log: appends from any number of processes, taking turns; the parts are in ``writer_*``.

Any number of processes (the daemon, an agent's session store, ingest, the CLI, an MCP
server) may hold a ``LogWriter`` on one log at once. The write lock (``log/LOCK``) is held
only for one append or atomic batch and its bookkeeping, as SQLite's WAL holds its write
lock; ``turn()`` holds it across several appends on purpose (bulk writers). The parts:
``writer_options`` (the options, validated once), ``writer_turns`` (the lock, turn depth and
lease), ``writer_state`` (this writer's view of the log's end, caught up each turn with
``writer_catchup`` and recovered on open with ``writer_recovery``: plans, then applied),
``writer_dedup`` (dedup keys and their checkpoint), ``writer_segment`` (the file appended
to, its rolls and the poison mark), ``writer_append`` and ``writer_batch`` (one event or an atomic batch, written),
``writer_group`` (the ``group`` durability's background fsync).

Appends (redaction, validation, seq and ts, dedup, durability) are ``writer_append``'s. An
I/O error is never acknowledged and poisons the writer until it is reopened.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from eventlog import codec
from eventlog.codec import hash_key
from eventlog.errors import LogIOError, WriterClosedError
from eventlog.events import Event
from eventlog.fsio import OS_FS, FileSystem, remove_stray_temp_files
from eventlog.lock import LOCK_NAME, FileLock
from eventlog.reader import LogReader
from eventlog.writer_append import Appender
from eventlog.writer_dedup import DEDUP_FILE, DEDUP_SAVE_INTERVAL, DEDUP_STALE_OK
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
from eventlog.writer_recovery import QUARANTINE_DIR
from eventlog.writer_state import WriterState
from eventlog.writer_turns import HANDOVER_SECONDS, KEEPER_MAX_SECONDS, Turns

__all__ = [
    "DEDUP_FILE", "DEDUP_SAVE_INTERVAL", "DEDUP_STALE_OK", "DEFAULT_GROUP_COMMIT_INTERVAL", "DEFAULT_LEASE_SECONDS",
    "DEFAULT_LOCK_TIMEOUT", "DEFAULT_SEGMENT_BYTES", "DURABILITY_POLICIES", "HANDOVER_SECONDS", "KEEPER_MAX_SECONDS",
    "QUARANTINE_DIR", "Durability", "LogOptions", "LogWriter",
]
_CANNOT_OPEN = "cannot open the log in {} for writing: {}; readers (tail, sessions, recall, replay --check) still work"


class LogWriter:
    """Appends to a log directory, taking turns with other writers; see the module docstring."""

    def __init__(self, reader: LogReader, options: LogOptions, *, fs: FileSystem = OS_FS,
                 clock: Callable[[], float] = time.time) -> None:
        self.options, self.reader, self.dir, self.fs, self.clock = options, reader, reader.dir, fs, clock
        self.durability, self.segment_bytes, self.lease_seconds = options.durability, options.segment_bytes, options.lease
        self._mutex = threading.RLock()
        lock = FileLock(os.path.join(self.dir, LOCK_NAME), what=f"the log {self.dir}", announce=True)
        self._turns = Turns(lock, self._mutex, lock_timeout=options.lock_timeout, lease_seconds=self.lease_seconds)
        self._state = WriterState(reader, fs, clock, segment_bytes=options.segment_bytes)
        self._seg, self._dedup = self._state.seg, self._state.dedup
        self._appender = Appender(self._state, fs, clock, fsync=options.durability == "fsync")
        self._group: GroupCommit | None = None

    @classmethod
    def open(cls, reader: LogReader, *, durability: Durability = "fsync", segment_bytes: int = DEFAULT_SEGMENT_BYTES,
             group_commit_interval: float = DEFAULT_GROUP_COMMIT_INTERVAL, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
             repair: bool = False, fs: FileSystem = OS_FS, clock: Callable[[], float] = time.time,
             lease_seconds: float = DEFAULT_LEASE_SECONDS) -> LogWriter:
        """A writer of ``reader``'s directory; its first turn recovers the log (``repair``: cut damage on purpose).

        ``lease_seconds`` (``group``/``none`` durability only; 0: none): see "Leases" in ``eventlog.writer_turns``.
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
                raise LogIOError(_CANNOT_OPEN.format(w.dir, e.strerror or e)) from e
            try:
                remove_stray_temp_files(w.dir)
                w._load(repair)
            except BaseException as e:
                w._seg.close()
                w._turns.lock.close()
                if isinstance(e, OSError):
                    raise LogIOError(_CANNOT_OPEN.format(w.dir, f"{e.strerror or e}"
                                                         + (f" ({e.filename})" if e.filename else ""))) from e
                raise
            finally:
                w._turns.release()
        if options.durability == "group":
            w._group = GroupCommit(w._seg, w._mutex, options.group_commit_interval, closed=lambda: w.closed)
            w._group.start()
        return w

    # Views of the parts' state, for callers and tests.
    next_seq = property(lambda self: self._state.next_seq, doc="The seq the next appended event gets.")
    recovered = property(lambda self: self._state.recovered, doc="The log.recovered event this writer recorded.")
    last_line = property(lambda self: self._appender.last_line, doc="The newest line this writer wrote.")
    last_append = property(lambda self: self._appender.last_append, doc="(first, last) seq of the newest append.")
    lock_waits = property(lambda self: self._turns.lock_waits, doc="Seconds each turn that waited for the lock waited.")
    free_turns = property(lambda self: self._turns.free_turns, doc="Turns that found the lock free.")
    _leased = property(lambda self: self._turns.leased, doc="Holding the lock on a lease (between turns).")
    _lock = property(lambda self: self._turns.lock, doc="The write lock (log/LOCK).")

    @property
    def closed(self) -> bool:
        """True once the writer is closed (or abandoned): no more appends."""
        return self._state.closed

    @closed.setter
    def closed(self, value: bool) -> None:
        self._state.closed = value

    @property
    def lock_timeout(self) -> float:
        """Seconds a turn waits for the lock before ``LockedError`` (may be changed on an open writer)."""
        return self._turns.lock_timeout

    @lock_timeout.setter
    def lock_timeout(self, seconds: float) -> None:
        self._turns.lock_timeout = seconds

    # ------------------------------------------------------------------ turns

    def _begin_turn(self) -> None:
        """Take the lock and catch up with other writers. The common case (lock free, nobody wrote) is
        two system calls: a non-blocking ``flock`` and an ``fstat`` of the active segment."""
        if self._seg.poisoned or self.closed:
            self._check_writable(None)
        turns = self._turns
        if self._seg.fd >= 0 and turns.try_acquire():
            catch_up = self._follow_others_if_changed
        else:
            turns.acquire()
            catch_up = self._state.catch_up
        try:
            if catch_up():
                self._record_recovery()
        except BaseException:
            turns.release()
            raise

    def _follow_others_if_changed(self) -> bool:
        return not self._seg.unchanged() and self._state.follow_others()

    def _catch_up(self) -> None:
        """Bring this writer's view up to the log on disk, recording a recovery it made."""
        if self._state.catch_up():
            self._record_recovery()

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
        self._turns.end(ok and not self._seg.poisoned and not self.closed)

    def stop_keeper(self) -> None:
        """Stop the lease keeper thread (``close`` does; so does a test that abandons a writer)."""
        self._turns.stop_keeper()

    def _load(self, repair: bool) -> None:
        """Recover the log from disk (``WriterState.load``) and record what recovery did."""
        if self._state.load(repair):
            self._record_recovery()

    def _record_recovery(self) -> None:
        self._appender.record_recovery()

    def lookup_dedup(self, key: str) -> int | None:
        """The seq of the event that carries dedup key ``key`` as this writer last saw the log, or None."""
        return self._dedup.get(hash_key(key))

    def lookup_dedup_int(self, key: int) -> int | None:
        """``lookup_dedup`` for a key already hashed to its 128-bit integer (see ``codec.hash_key``)."""
        return self._dedup.get(key)

    # ------------------------------------------------------------------ appending

    def append(self, event: Event, *, expected: int | None = None) -> int:
        """Append one event in its own turn; returns its seq (the first one's seq if its dedup key is known)."""
        mutex = self._mutex
        mutex.acquire()  # (not ``with``: 0.5-1 us less per append, measured)
        try:
            turns = self._turns
            if turns.depth:
                return self._appender.one(event, expected)
            if not turns.on_lease():
                self._begin_turn()  # on a lease nobody else can have written
            try:
                seq = self._appender.one(event, expected)
            except BaseException:
                self._end_turn(ok=False)
                raise
            if turns.leased:
                turns.lease_busy = True
            else:
                self._end_turn()
            return seq
        finally:
            mutex.release()

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
                return self._appender.batch(events, expected, sync)
            self._take_turn()
            try:
                seqs = self._appender.batch(events, expected, sync)
            except BaseException:
                self._end_turn(ok=False)
                raise
            self._end_turn()
            return seqs

    def last_written(self) -> tuple[str, str]:
        """(ts, fingerprint) of the newest line this writer wrote: the stamp every event of that append got."""
        return self._state.stamp.text.decode(), codec.fingerprint(self._appender.last_line)

    def end_seq(self) -> int:
        """Seq of the newest event on disk; cheap (one ``fstat``) when no other writer appended."""
        with self._mutex:
            if self._seg.fd >= 0 and not self._seg.poisoned and self._seg.unchanged():
                return self._state.next_seq - 1
        return self.reader.last_seq

    def _check_writable(self, expected: int | None) -> None:
        self._appender.check_writable(expected)

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
            self._state.roll()
            return True

    def sync(self) -> None:
        """fsync now whatever this writer wrote and did not sync (``group``/``none`` durability, ``sync=False`` batches)."""
        with self._mutex:
            syncing = self._group is not None and self._group.syncing
            if not self.closed and not self._seg.poisoned and (self._seg.unsynced or syncing):
                self._seg.sync()  # (again, if the group commit's fsync is still under way)

    def close(self) -> None:
        """Sync, save the dedup and index checkpoints (if the lock is free soon) and close; idempotent."""
        self._stop_threads()
        with self._mutex:
            if self.closed:
                return
            self._turns.leased = False  # the lock is still held: the checkpoints below use it, then release it
            try:
                if not self._seg.poisoned:
                    if self._seg.unsynced:
                        self._seg.sync("fsync on close failed")
                    self._save_checkpoints()
            finally:
                self.closed = True
                self._seg.close()
                self._turns.lock.close()

    def abandon(self) -> None:
        """Stop the way a killed process stops (crash tests): no sync, no checkpoint; threads stopped, lock released."""
        self._stop_threads()
        self._seg.close()
        self.closed = True
        self._turns.lock.close()

    def _stop_threads(self) -> None:
        if self._group is not None:
            self._group.stop()
        self.stop_keeper()

    def _save_checkpoints(self) -> None:
        """Dedup keys and the active index (``WriterState.save_checkpoints``), waiting at most a second."""
        self._state.save_checkpoints(self._turns.lock, min(self.lock_timeout, 1.0), self._record_recovery,
                                     stale_ok=DEDUP_STALE_OK)  # (read here: tests lower it)
