"""eventlog.writer_catchup: what other writers appended, planned from disk without touching it."""

from __future__ import annotations

import os

import pytest

from eventlog.errors import CorruptionError
from eventlog.events import SessionCreated
from eventlog.log import Log
from eventlog.reader import LogReader
from eventlog.segments import segment_bases
from eventlog.writer_catchup import plan_catch_up


def _append(d: str, keys: list[str], segment_bytes: int = 1 << 20) -> None:
    with Log.open(d, writable=True, create=True, segment_bytes=segment_bytes) as log:
        for k in keys:
            log.append(SessionCreated(session_key=k, dedup=k))


def test_the_new_bytes_of_the_active_segment_are_scanned_from_where_we_stopped(tmp_path):
    d = str(tmp_path / "log")
    _append(d, ["a", "b"])
    size = os.path.getsize(LogReader(d).seg_path(1))
    _append(d, ["c", "d"])
    plan = plan_catch_up(LogReader(d), base=1, size=size, next_seq=3, next_mark=1 << 30, replaced=False)
    assert not plan.reload and len(plan.scans) == 1
    assert plan.scans[0].dedup == [("c", 3), ("d", 4)] and plan.scans[0].next_seq == 5


def test_segments_rolled_to_since_are_scanned_whole(tmp_path):
    d = str(tmp_path / "log")
    _append(d, ["a"], segment_bytes=1024)
    size = os.path.getsize(LogReader(d).seg_path(1))
    _append(d, [f"k{i}" for i in range(30)], segment_bytes=1024)
    bases = segment_bases(d)
    plan = plan_catch_up(LogReader(d), base=1, size=size, next_seq=2, next_mark=1 << 30, replaced=False)
    assert [r.base for r in plan.scans] == bases
    assert plan.scans[-1].next_seq == 32


def test_a_shrunk_or_replaced_segment_means_start_over(tmp_path):
    d = str(tmp_path / "log")
    _append(d, ["a", "b"])
    size = os.path.getsize(LogReader(d).seg_path(1))
    assert plan_catch_up(LogReader(d), base=1, size=size + 1, next_seq=3, next_mark=0, replaced=False).reload
    assert plan_catch_up(LogReader(d), base=1, size=size, next_seq=3, next_mark=0, replaced=True).reload
    assert plan_catch_up(LogReader(d), base=7, size=0, next_seq=7, next_mark=0, replaced=False).reload


def test_a_missing_segment_is_refused(tmp_path):
    d = str(tmp_path / "log")
    _append(d, ["a"], segment_bytes=1024)
    size = os.path.getsize(LogReader(d).seg_path(1))
    _append(d, [f"k{i}" for i in range(30)], segment_bytes=1024)
    bases = segment_bases(d)
    os.remove(LogReader(d).seg_path(bases[1]))
    with pytest.raises(CorruptionError, match="a segment is missing"):
        plan_catch_up(LogReader(d), base=1, size=size, next_seq=2, next_mark=0, replaced=False)
