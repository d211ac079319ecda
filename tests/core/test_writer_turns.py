"""eventlog.writer_turns: the write lock, the turn depth, the lease and its keeper, without a log."""

from __future__ import annotations

import os
import threading
import time

from eventlog.lock import FileLock
from eventlog.writer_turns import Turns


def _turns(tmp_path, lease: float = 0.0, name: str = "LOCK") -> Turns:
    return Turns(FileLock(os.path.join(tmp_path, name), announce=True), threading.RLock(), lock_timeout=1.0,
                 lease_seconds=lease)


def _free(tmp_path) -> bool:
    other = FileLock(os.path.join(tmp_path, "LOCK"))
    try:
        if other.try_acquire():
            other.release()
            return True
        return False
    finally:
        other.close()


def test_a_turn_without_a_lease_releases_the_lock_when_it_ends(tmp_path):
    t = _turns(tmp_path)
    assert t.try_acquire() and t.free_turns == 1
    assert not _free(tmp_path)
    t.end()
    assert _free(tmp_path) and not t.leased
    t.lock.close()


def test_a_lease_keeps_the_lock_then_the_keeper_gives_it_back_when_idle(tmp_path):
    t = _turns(tmp_path, lease=0.05)
    t.acquire()
    t.end()  # ok: kept on a lease
    assert t.leased and t.on_lease() and not _free(tmp_path)
    deadline = time.monotonic() + 5
    while not _free(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert _free(tmp_path) and not t.leased
    t.stop_keeper()
    t.lock.close()


def test_a_failed_turn_takes_no_lease(tmp_path):
    t = _turns(tmp_path, lease=5.0)
    t.acquire()
    t.end(ok=False)
    assert not t.leased and _free(tmp_path)
    t.lock.close()


def test_a_lease_is_handed_over_at_its_end_when_another_process_waits(tmp_path):
    t = _turns(tmp_path, lease=0.001)
    t.acquire()
    t.end()
    waiter = FileLock(os.path.join(tmp_path, "LOCK"), announce=True)
    got: list[float] = []
    th = threading.Thread(target=lambda: got.append(waiter.acquire(5.0)))
    th.start()
    deadline = time.monotonic() + 5
    while not t.lock.others_waiting() and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(0.002)  # the lease period is over
    assert t.on_lease() is False  # not renewed: handed over
    th.join(5)
    assert got and waiter.held
    waiter.close()
    t.stop_keeper()
    t.lock.close()


def test_the_waits_kept_are_bounded(tmp_path):
    t = _turns(tmp_path)
    t.lock_waits.extend([0.1] * 1000)
    holder = FileLock(os.path.join(tmp_path, "LOCK"))
    holder.acquire(1.0)
    threading.Timer(0.05, holder.release).start()
    t.acquire()
    assert len(t.lock_waits) == 501 and t.lock_waits[-1] > 0
    t.end(ok=False)
    holder.close()
    t.lock.close()
