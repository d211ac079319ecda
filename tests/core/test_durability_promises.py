"""The README's time-based promises: group commit's loss window, the writer lock's wait,
and projection files trailing the log by at most the flush interval."""

from __future__ import annotations

import os
import random
import threading
import time

import pytest

from eventlog.app.session_store import LocalSessionStore
from eventlog.app.workspace import init_workspace
from eventlog.errors import LockedError
from eventlog.events import MessageAppended
from eventlog.log import Log
from tests.simfs import SimFS, abandon


def _msg(i: int) -> MessageAppended:
    return MessageAppended(session_key="s", message_id=str(i), role="user", content=f"m{i}")


def test_group_commit_makes_acknowledged_events_durable_within_its_interval(tmp_path):
    fs = SimFS()
    log = Log.open(str(tmp_path / "log"), writable=True, create=True, durability="group",
                   group_commit_interval=0.02, fs=fs)
    acked = [log.append(_msg(i)) for i in range(50)]
    synced_before = fs.fsyncs
    time.sleep(0.2)  # ten intervals: the background flusher must have synced by now
    assert fs.fsyncs > synced_before
    abandon(log)
    fs.crash(random.Random(1), modes=("drop",))  # everything not fsynced is lost
    seqs = [e.seq for e in Log.open(str(tmp_path / "log")).read()]
    assert seqs[: len(acked)] == acked


def test_a_writer_waits_for_another_writers_turn_up_to_its_timeout(tmp_path):
    d = str(tmp_path / "log")
    first = Log.open(d, writable=True, create=True)
    second = Log.open(d, writable=True, lock_timeout=0.2)  # opening takes one short turn: the first holds none now
    ev = MessageAppended(session_key="k", message_id="1", role="user", content="x")
    with first.turn(), pytest.raises(LockedError, match="after waiting"):
        second.append(ev)
    holding = threading.Event()

    def hold_a_turn() -> None:
        with first.turn():
            holding.set()
            time.sleep(0.3)

    holder = threading.Thread(target=hold_a_turn)
    holder.start()
    holding.wait()
    started = time.monotonic()
    second.writer.lock_timeout = 5
    assert second.append(ev) == 1  # waits for the first writer's turn to end
    assert 0.2 < time.monotonic() - started < 5
    holder.join()
    first.close()
    second.close()


def test_session_files_follow_the_log_within_the_flush_interval_without_a_close(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home, projection_flush_interval=0.1)
    store = LocalSessionStore.open(home)
    try:
        store.add_message("live", "user", "written by the background flush")
        path = os.path.join(home, "sessions", "live.jsonl")
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and not os.path.exists(path):
            time.sleep(0.02)
        with open(path, encoding="utf-8") as f:
            assert "written by the background flush" in f.read()
    finally:
        store.close()


class _SlowSyncFS(SimFS):
    """fsync takes 0.2 s (a slow disk); everything else as SimFS."""

    def __init__(self) -> None:
        super().__init__()
        self.in_fsync = threading.Event()

    def fsync(self, fd: int) -> None:
        self.in_fsync.set()
        time.sleep(0.2)
        super().fsync(fd)
        self.in_fsync.clear()


def test_the_group_commit_fsync_does_not_hold_up_appends_and_sync_never_trusts_one_under_way(tmp_path):
    fs = _SlowSyncFS()
    d = str(tmp_path / "log")
    log = Log.open(d, writable=True, create=True, durability="group", group_commit_interval=0.01, fs=fs)
    try:
        log.append(_msg(0))
        assert fs.in_fsync.wait(2)  # the background fsync (0.2 s) is under way
        slowest = 0.0
        for i in range(1, 50):
            t0 = time.monotonic()
            log.append(_msg(i))
            slowest = max(slowest, time.monotonic() - t0)
        assert slowest < 0.1, slowest  # appends went on during it (they waited for it before)
        while not fs.in_fsync.is_set():  # catch a group commit's fsync under way, then sync() at once
            time.sleep(0.001)
        log.sync()  # must not return before everything appended so far is durable
        (seg,) = [p for p in os.listdir(d) if p.endswith(".jsonl")]
        path = os.path.join(d, seg)
        with open(path, "rb") as f:
            assert fs.durable[path] == f.read()
    finally:
        log.close()
