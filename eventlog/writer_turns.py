"""Taking turns on the write lock, and the lease that keeps it between appends.

A ``Turns`` owns the writer's ``FileLock`` (``log/LOCK``, see ``eventlog.lock``), how deep
the writer is inside ``turn()``, the lease and its keeper thread, and the counts of turns
that waited or found the lock free. It knows nothing of segments: the writer catches up
after a turn starts.

**Leases.** Under ``group`` and ``none`` durability an append costs a few microseconds, and
taking a turn (``flock``, ``fstat``, unlock) would nearly double it. So such a writer keeps
its turn after an append on a lease: the appends that follow need no system call for the
lock. Every ``lease_seconds`` (1 ms) the next append renews the lease unless another
process waits (a waiter announces itself on ``LOCK.wait``, see ``eventlog.lock``); then the
writer hands the lock over: it releases it and stays away for ``HANDOVER_SECONDS``, longer
than a waiter sleeps between two looks, then waits for its own turn like anyone. A keeper
thread ends the lease when the writer was idle for a lease period (it looks less often
during a long burst, up to ``KEEPER_MAX_SECONDS`` apart: the idle lock can stay held that
long after a burst). tests/core/test_lease.py measures a waiter next to a writer appending flat
out, with and without leases. Under ``fsync`` an append costs an ``fdatasync`` (far more
than a turn): no lease.
"""

from __future__ import annotations

import threading
import time

from eventlog.lock import MAX_POLL_SECONDS, FileLock

HANDOVER_SECONDS = 2 * MAX_POLL_SECONDS  # a writer handing its lock to a waiter stays away this long
KEEPER_MAX_SECONDS = 0.008  # the keeper looks for idleness at most this far apart during a long burst
MAX_WAITS_KEPT = 1000


class Turns:
    """The write lock, the turn depth and the lease of one writer; every method runs under ``mutex``
    (the writer's), except the keeper thread's idle looks."""

    def __init__(self, lock: FileLock, mutex: threading.RLock, *, lock_timeout: float, lease_seconds: float) -> None:
        self.lock = lock
        self.mutex = mutex
        self.lock_timeout = lock_timeout
        self.lease_seconds = lease_seconds
        self.depth = 0  # > 0 while the writer is inside turn()
        self.lock_waits: list[float] = []  # seconds each turn that had to wait for the lock waited (the newest 1000)
        self.free_turns = 0  # turns that found the lock free
        self.leased = False  # holding the lock on a lease (between turns)
        self.lease_busy = False  # appended since the keeper last looked
        self.lease_until = 0.0  # monotonic time the current lease period ends (then: renew unless others wait)
        self._keeper: threading.Thread | None = None
        self._keeper_wake = threading.Event()
        self._stop_keeper = False

    def acquire(self) -> None:
        """Take the lock, waiting up to ``lock_timeout`` (``LockedError`` after it); counts the wait."""
        waited = self.lock.acquire(self.lock_timeout)
        if waited:
            if len(self.lock_waits) >= MAX_WAITS_KEPT:
                del self.lock_waits[: MAX_WAITS_KEPT // 2]
            self.lock_waits.append(waited)
        else:
            self.free_turns += 1

    def try_acquire(self) -> bool:
        """Take the lock if it is free right now (one non-blocking ``flock``); True if taken."""
        if self.lock.held is False and self.lock.try_acquire():
            self.free_turns += 1
            return True
        return False

    def release(self) -> None:
        """Give the lock back (idempotent)."""
        self.lock.release()

    def on_lease(self) -> bool:
        """True while a lease holds (renewed at the end of its period unless another process waits)."""
        return self.leased and (time.monotonic() < self.lease_until or self._renew_lease())

    def end(self, ok: bool = True) -> None:
        """End a turn: keep the lock on a lease (``ok`` and a lease is configured) or release it."""
        if ok and self.lease_seconds:
            if self.leased:
                self.lease_busy = True
                return
            self.leased = True
            self.lease_busy = False
            self.lease_until = time.monotonic() + self.lease_seconds
            if self._keeper is None:
                self._keeper = threading.Thread(target=self._keep_lease, name="evlog-lease", daemon=True)
                self._keeper.start()
            self._keeper_wake.set()
            return
        self.leased = False
        self.lock.release()

    def _renew_lease(self) -> bool:
        """At the end of a lease period: renew it (True) unless another process waits. Then hand the
        lock over: release it and stay away for ``HANDOVER_SECONDS``, longer than a waiter sleeps
        between two looks, so the waiter takes it; the caller then waits for its own turn."""
        if not self.lock.others_waiting():
            self.lease_until = time.monotonic() + self.lease_seconds
            return True
        self.end(ok=False)
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
            if self.lease_busy:
                self.lease_busy = False
                period = min(period * 2, KEEPER_MAX_SECONDS)  # a long burst: look less often (each look costs a GIL switch)
                continue
            with self.mutex:
                if self._stop_keeper:
                    return
                if self.depth:
                    continue  # inside turn(): its end renews the lease
                if self.leased:
                    self.end(ok=False)
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
        with self.mutex:
            self._stop_keeper = True
            self._keeper_wake.set()
        keeper.join(timeout=5.0)  # (a caller holding the mutex would make it wait; it is a daemon thread)
        self._keeper = None
