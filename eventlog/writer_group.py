"""Group commit: a background thread that fsyncs a writer's appends every interval (``group`` durability).

The fsync runs outside the writer's mutex, on a duplicate descriptor, so appends are not
held up by it and a roll closing the segment cannot pull the file from under it. A
``sync()`` called meanwhile syncs again rather than trust an fsync under way (``syncing``).
A failed fsync poisons the writer: its next append reports it (no fsync retry; PostgreSQL's
fsyncgate). An OS crash can lose the last interval.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from eventlog.writer_segment import ActiveSegment


class GroupCommit:
    """The group-commit thread of one writer: ``start`` it after the writer opened, ``stop`` it before closing."""

    def __init__(self, segment: ActiveSegment, mutex: threading.RLock, interval: float, *,
                 closed: Callable[[], bool]) -> None:
        self.segment = segment
        self.mutex = mutex
        self.interval = interval
        self.closed = closed  # True once the writer is closed: nothing more to sync
        self.syncing = False  # an fsync is under way (outside the mutex)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread."""
        self._thread = threading.Thread(target=self._loop, name="evlog-group-commit", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it (idempotent); what it did not sync, the writer's close syncs."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None

    def _take(self) -> int:
        """Under the mutex: a duplicate descriptor to sync if anything is unsynced, else -1."""
        seg = self.segment
        if self.closed() or seg.poisoned or not seg.unsynced or seg.fd < 0:
            return -1
        try:
            fd = seg.fs.dup(seg.fd)
        except OSError:
            return -1  # out of descriptors: the next interval (or a roll, or close) syncs
        seg.unsynced = 0
        self.syncing = True
        return fd

    def _loop(self) -> None:
        fs = self.segment.fs
        while not self._stop.wait(self.interval):
            with self.mutex:
                fd = self._take()
            if fd < 0:
                continue
            try:
                fs.fsync(fd)
            except OSError as e:
                with self.mutex:
                    self.segment.poisoned = f"group commit fsync failed: {e}"  # the next append reports it
            finally:
                self.syncing = False
                try:
                    fs.close(fd)
                except OSError:
                    pass
