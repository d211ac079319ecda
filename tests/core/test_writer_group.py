"""eventlog.writer_group: the group commit thread syncs what was written, off the mutex, and poisons on failure."""

from __future__ import annotations

import errno
import os
import threading
import time

from eventlog.fsio import FileSystem
from eventlog.reader import LogReader
from eventlog.writer_group import GroupCommit
from eventlog.writer_segment import ActiveSegment


class _CountingFS(FileSystem):
    def __init__(self, fail: bool = False) -> None:
        self.synced: list[int] = []
        self.fail = fail

    def fsync(self, fd: int) -> None:
        if self.fail:
            raise OSError(errno.EIO, "injected")
        self.synced.append(fd)
        super().fsync(fd)


def _setup(tmp_path, fs: _CountingFS) -> tuple[ActiveSegment, threading.RLock]:
    d = str(tmp_path / "log")
    os.makedirs(d)
    seg = ActiveSegment(LogReader(d), fs, limit=1 << 20)
    seg.create(1)
    return seg, threading.RLock()


def _wait(cond, seconds: float = 5.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.002)
    return cond()


def test_unsynced_appends_are_synced_within_an_interval_on_a_duplicate_descriptor(tmp_path):
    fs = _CountingFS()
    seg, mutex = _setup(tmp_path, fs)
    g = GroupCommit(seg, mutex, 0.005, closed=lambda: False)
    g.start()
    try:
        seg.write(b"a\n", 1, None)
        seg.unsynced += 1
        assert _wait(lambda: seg.unsynced == 0 and fs.synced)
        assert fs.synced[0] != seg.fd  # a duplicate: a roll closing the segment cannot pull it away
        assert not g.syncing or _wait(lambda: not g.syncing)
    finally:
        g.stop()
        g.stop()  # idempotent
        seg.close()


def test_nothing_unsynced_nothing_synced(tmp_path):
    fs = _CountingFS()
    seg, mutex = _setup(tmp_path, fs)
    g = GroupCommit(seg, mutex, 0.002, closed=lambda: False)
    g.start()
    time.sleep(0.05)
    g.stop()
    assert fs.synced == []
    seg.close()


def test_a_failed_group_fsync_poisons_the_segment(tmp_path):
    fs = _CountingFS(fail=True)
    seg, mutex = _setup(tmp_path, fs)
    g = GroupCommit(seg, mutex, 0.002, closed=lambda: False)
    seg.write(b"a\n", 1, None)
    seg.unsynced += 1
    g.start()
    try:
        assert _wait(lambda: seg.poisoned is not None)
        assert "group commit fsync failed" in (seg.poisoned or "")
    finally:
        g.stop()
        seg.close()
