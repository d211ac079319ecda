"""The log: one directory of checksummed segments; ``Log.open`` gives a reader, or a reader and a writer.

    log = Log.open("ws/log")                        # read: records, follow, verify, stats (no lock)
    log = Log.open("ws/log", writable=True)         # and write: append, append_batch, turn()

Reading is ``eventlog.reader`` (verified reads from disk, never a lock); writing is
``eventlog.writer`` (any number of writers in any number of processes take turns on a
short-held lock, catching up with each other first). The writer validates every event
before it is written (``eventlog.validate``: the event the log accepts is one every
projection can fold, INVARIANTS I21). This module only composes the two and keeps the names the
rest of evlog uses: ``log.append``, ``log.read``, ``log.last_seq``, ...
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager

from eventlog.errors import WorkspaceNotFound, WriterClosedError
from eventlog.events import Event, LogRecovered
from eventlog.fsio import OS_FS, FileSystem
from eventlog.reader import LogReader, Problem, Record, Stats
from eventlog.writer import (
    DEDUP_FILE,
    DEFAULT_GROUP_COMMIT_INTERVAL,
    DEFAULT_LEASE_SECONDS,
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_SEGMENT_BYTES,
    DURABILITY_POLICIES,
    QUARANTINE_DIR,
    Durability,
    LogOptions,
    LogWriter,
)

__all__ = [
    "DEDUP_FILE",
    "DEFAULT_GROUP_COMMIT_INTERVAL",
    "DEFAULT_LOCK_TIMEOUT",
    "DEFAULT_SEGMENT_BYTES",
    "DURABILITY_POLICIES",
    "QUARANTINE_DIR",
    "Durability",
    "Log",
    "Problem",
    "Record",
    "Stats",
]


class Log:
    """A log directory: reads always, appends when opened ``writable`` (see the module docstring)."""

    def __init__(self, reader: LogReader, writer: LogWriter | None) -> None:
        self.reader = reader
        self.writer = writer
        self.dir = reader.dir
        if writer is not None:
            self.append = writer.append  # type: ignore[method-assign]  # the hot path: one call less per append

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
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        repair: bool = False,
        fs: FileSystem = OS_FS,
        clock: Callable[[], float] = time.time,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> Log:
        """Open the log in ``log_dir``; ``writable=True`` also opens a writer (its first turn recovers).

        All arguments are validated before anything is created or locked. ``lease_seconds``:
        see "Leases" in ``eventlog.writer`` (``group``/``none`` durability only).
        """
        options = LogOptions(durability, segment_bytes, group_commit_interval, lock_timeout, lease_seconds)
        if not os.path.isdir(log_dir):
            if not (create and writable):
                raise WorkspaceNotFound(f"no log at {log_dir} (run 'evlog init' first)")
            os.makedirs(log_dir, exist_ok=True)
        reader = LogReader(log_dir)
        writer = None
        if writable:
            writer = LogWriter.from_options(reader, options, repair=repair, fs=fs, clock=clock)
        return cls(reader, writer)

    # ------------------------------------------------------------------ writing

    @property
    def writable(self) -> bool:
        """True while this log has an open writer."""
        return self.writer is not None and not self.writer.closed

    def _w(self) -> LogWriter:
        if self.writer is None:
            raise WriterClosedError("this log was opened read-only; open it with writable=True to append")
        return self.writer

    def append(self, event: Event, *, expected: int | None = None) -> int:
        """Validate and append one event; returns its seq (the first one's seq if its dedup key is known).

        A writable log answers with its writer's own ``append`` (bound in ``__init__``); this one
        is what a read-only log answers: ``WriterClosedError``."""
        return self._w().append(event, expected=expected)

    def append_batch(self, events: Iterable[Event], *, expected: int | None = None, sync: bool = True) -> list[int]:
        """Validate, then append events atomically (all survive a crash or none); see ``LogWriter.append_batch``."""
        return self._w().append_batch(events, expected=expected, sync=sync)

    def turn(self) -> AbstractContextManager[LogWriter]:
        """Hold the write lock across several appends (other writers wait until it ends)."""
        return self._w().turn()

    def last_written(self) -> tuple[str, str]:
        """(ts, fingerprint) of the newest line this writer wrote."""
        return self._w().last_written()

    def lookup_dedup(self, key: str) -> int | None:
        """The seq of the event carrying dedup key ``key`` (as this writer last saw the log), or None."""
        return self._w().lookup_dedup(key)

    def lookup_dedup_int(self, key: int) -> int | None:
        """``lookup_dedup`` for a key already hashed (``codec.hash_key``)."""
        return self._w().lookup_dedup_int(key)

    @property
    def recovered(self) -> LogRecovered | None:
        """The ``log.recovered`` event this writer recorded when it opened (or None)."""
        return self.writer.recovered if self.writer is not None else None

    def sync(self) -> None:
        """fsync whatever this writer wrote and has not synced (group/none durability, ``sync=False`` batches)."""
        if self.writer is not None:
            self.writer.sync()

    def close(self) -> None:
        """Close the writer (sync, save checkpoints); idempotent. Readers hold nothing open."""
        if self.writer is not None:
            self.writer.close()

    def __enter__(self) -> Log:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading

    @property
    def log_start(self) -> int:
        """Seq of the first event the log holds."""
        return self.reader.log_start

    @property
    def last_seq(self) -> int:
        """Seq of the newest complete event on disk (0 for an empty log), whoever wrote it."""
        if self.writer is not None and not self.writer.closed:
            return self.writer.end_seq()
        return self.reader.last_seq

    def read(self, from_seq: int = 1, *, until_seq: int | None = None) -> Iterator[Event]:
        """Verified events from ``from_seq`` to ``until_seq`` (inclusive) or the end."""
        return self.reader.read(from_seq, until_seq=until_seq)

    def records(self, from_seq: int = 1, *, until_seq: int | None = None) -> Iterator[Record]:
        """Like ``read``, each event with its segment, byte range and fingerprint."""
        return self.reader.records(from_seq, until_seq=until_seq)

    def find(self, seq: int) -> Record | None:
        """The record with ``seq``, or None."""
        return self.reader.find(seq)

    def follow(self, from_seq: int = 1, *, poll_interval: float = 0.01, stop: Callable[[], bool] | None = None,
               on_notice: Callable[[str], None] | None = None,
               on_idle: Callable[[], None] | None = None) -> Iterator[Record]:
        """Records from ``from_seq`` on, waiting for new ones; see ``LogReader.follow``."""
        return self.reader.follow(from_seq, poll_interval=poll_interval, stop=stop, on_notice=on_notice, on_idle=on_idle)

    def verify(self) -> list[Problem]:
        """Every problem in every segment (empty when clean)."""
        return self.reader.verify()

    def stats(self) -> Stats:
        """Segments, events, bytes, events by type."""
        return self.reader.stats()
