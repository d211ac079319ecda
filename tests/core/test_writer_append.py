"""eventlog.writer_append: one event or a batch written into the writer's state (inside a turn)."""

from __future__ import annotations

import os

import pytest

from eventlog.codec import decode
from eventlog.errors import ConflictError, InvalidEventError, WriterClosedError
from eventlog.events import LogRecovered, MessageAppended, SessionCreated
from eventlog.fsio import OS_FS
from eventlog.reader import LogReader
from eventlog.writer_append import Appender
from eventlog.writer_state import WriterState


def _appender(tmp_path, clock, fsync: bool = False) -> Appender:  # noqa: ANN001
    d = str(tmp_path / "log")
    os.makedirs(d)
    st = WriterState(LogReader(d), OS_FS, clock, segment_bytes=1024)
    st.load(False)
    return Appender(st, OS_FS, clock, fsync=fsync)


def _lines(a: Appender) -> list:
    r = a.state.reader
    return [rec.event for rec in r.records()]


def test_seqs_are_dense_ts_never_goes_back_and_known_keys_write_nothing(tmp_path):
    times = iter([2000.0, 1000.0, 3000.5, 3000.5, 3000.5])
    a = _appender(tmp_path, lambda: next(times))
    assert a.one(SessionCreated(session_key="a", dedup="x"), None) == 1
    assert a.one(SessionCreated(session_key="b"), None) == 2  # the clock went back: same ts as before
    assert a.one(SessionCreated(session_key="a", dedup="x"), None) == 1  # known: nothing written
    assert a.batch([SessionCreated(session_key="c"), SessionCreated(session_key="d", dedup="x")], None) == [3, 1]
    evs = _lines(a)
    assert [e.seq for e in evs] == [1, 2, 3]
    assert evs[0].ts == evs[1].ts == "1970-01-01T00:33:20.000Z" and evs[2].ts == "1970-01-01T00:50:00.500Z"
    assert a.last_append == (3, 3) and decode(a.last_line).seq == 3
    a.state.seg.close()


def test_appends_roll_the_segment_when_full(tmp_path):
    a = _appender(tmp_path, lambda: 1000.0)
    for i in range(30):
        a.one(SessionCreated(session_key=f"k{i}"), None)
    assert a.state.seg.base > 1 and [e.seq for e in _lines(a)] == list(range(1, 31))
    a.state.seg.close()


def test_a_closed_poisoned_or_moved_on_log_refuses(tmp_path):
    a = _appender(tmp_path, lambda: 1000.0)
    a.one(SessionCreated(session_key="a"), None)
    with pytest.raises(ConflictError, match="ends at seq 1"):
        a.one(SessionCreated(session_key="b"), 0)
    a.state.seg.poisoned = "write failed: EIO"
    with pytest.raises(WriterClosedError, match="I/O error"):
        a.batch([SessionCreated(session_key="b")], None)
    a.state.closed = True
    with pytest.raises(WriterClosedError, match="closed"):
        a.one(SessionCreated(session_key="b"), None)
    a.state.seg.close()


@pytest.mark.parametrize("bad", [
    {"content": "lone \ud800 surrogate"},  # a plain message: the one-event path frames it inline
    {"content": "x", "tool_calls": [object()]},  # not plain: validated, then refused by the encoder
])
def test_an_event_json_cannot_hold_is_refused_one_at_a_time_and_nothing_is_written(tmp_path, bad):
    a = _appender(tmp_path, lambda: 1000.0)
    ev = MessageAppended(session_key="k", message_id="1", role="user", **bad)
    with pytest.raises(InvalidEventError, match="message.appended: cannot be written as JSON"):
        a.one(ev, None)
    with pytest.raises(InvalidEventError, match="message.appended: cannot be written as JSON"):
        a.batch([SessionCreated(session_key="k"), ev], None)
    assert a.state.seg.size == 0 and a.state.next_seq == 1 and not a.state.seg.poisoned
    assert a.one(SessionCreated(session_key="k"), None) == 1  # the writer goes on
    a.state.seg.close()


def test_the_pending_recovery_is_appended_with_its_seq(tmp_path):
    a = _appender(tmp_path, lambda: 1000.0)
    a.state.recovered = LogRecovered(segment="x", offset=0, bytes_truncated=1, reason="test", quarantine="q")
    a.record_recovery()
    assert a.state.recovered.seq == 1 and _lines(a)[0].type == "log.recovered"
    assert a.state.seg.unsynced == 0  # durable whatever the policy
    a.state.seg.close()
