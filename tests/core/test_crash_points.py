"""Crash at every intermediate syscall of multi-step operations (INVARIANTS I18, I11, I20).

For a segment roll (fsync, index write, close, create, directory fsync, first write) and
for a snapshot step that trims a diary and then flushes projection files (temp file,
write, fsync, rename, directory fsync, checkpoint), the n-th file-system call fails for
every n until the operation completes. After each failure the writer is stopped, the
un-synced state is crashed (SimFS, seeded), and the workspace reopened: the log holds a
prefix of what was written with every acknowledged event, verify is clean, no ``*.tmp``
is left, and the projections equal a fresh replay.
"""

from __future__ import annotations

import os
import random

import pytest

import processors
from eventlog.app import replay
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.errors import EvlogError
from eventlog.events import MessageAppended
from eventlog.log import Log
from tests.simfs import SimFS, abandon, abandon_workspace

MAX_CALLS = 60


def _msg(i: int, size: int = 200) -> MessageAppended:
    return MessageAppended(session_key=f"s{i % 3}", message_id=f"m{i}", role="user", content=f"{i} " + "x" * size,
                           timestamp="2026-11-02T09:00:00Z")


def _stray_tmp(root: str) -> list[str]:
    return [os.path.join(d, f) for d, _s, fs in os.walk(root) for f in fs if f.endswith(".tmp")]


@pytest.mark.parametrize("mode", ["keep", "drop", "garbage", "prefix"])
def test_a_crash_at_any_syscall_of_a_segment_roll_keeps_a_durable_prefix(tmp_path, mode):
    for n in range(1, MAX_CALLS):
        d = str(tmp_path / f"{mode}-{n}")
        log = Log.open(d, writable=True, create=True, segment_bytes=1024)
        acked = [log.append(_msg(i)) for i in range(4)]  # the next append rolls
        fs = SimFS()
        log.close()
        log = Log.open(d, writable=True, fs=fs, segment_bytes=1024)
        fs.fail_at = fs.calls + n
        try:
            acked.append(log.append(_msg(99)))
            acked.append(log.append(_msg(100)))
            finished = True
        except EvlogError:
            finished = False
        abandon(log)
        fs.crash(random.Random(n), modes=(mode,))
        with Log.open(d, writable=True) as again:
            seqs = [e.seq for e in again.read() if isinstance(e, MessageAppended)]
            assert seqs[: len(acked)] == acked, f"call {n}: an acknowledged event was lost"
            assert [p for p in again.verify() if p.damaged] == []
        assert not _stray_tmp(d)
        if finished:
            assert n > 6, "the operation finished before any fault hit it: the test proves nothing"
            return
    pytest.fail(f"the roll did not finish within {MAX_CALLS} calls")


@pytest.mark.slow
def test_a_crash_at_any_syscall_of_a_trimming_snapshot_and_its_flush_keeps_projections_exact(tmp_path):
    for n in range(1, 200):
        home = str(tmp_path / f"ws{n}")
        init_workspace(home, diary_budget_bytes=1_500)
        with Workspace.open(home, writable=True) as ws:
            ws.append([_msg(i) for i in range(12)])
        fs = SimFS()
        ws = Workspace.open(home, writable=True, fs=fs)
        ws.projections  # noqa: B018 - load before counting calls
        fs.fail_at = fs.calls + n
        try:
            processors.run(ws, "snapshot")
            ws.flush()
            finished = True
        except (EvlogError, OSError):
            finished = False
        abandon_workspace(ws)
        fs.crash(random.Random(n))
        with Workspace.open(home, writable=True) as again:
            assert [p for p in again.log.verify() if p.damaged] == []
            processors.run(again, "snapshot")  # finishing the step after a crash is idempotent
            assert replay.check(again).clean, f"call {n}: projections drifted from the log"
            for day in again.diary.days.values():
                assert day.size <= 1_500 or len(day.lengths) == 1
        assert not _stray_tmp(home)
        if finished:
            assert n > 10, "the operation finished before any fault hit it: the test proves nothing"
            return
    pytest.fail("the snapshot step did not finish within 200 calls")
