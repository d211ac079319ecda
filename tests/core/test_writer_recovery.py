"""eventlog.writer_recovery: recovery planned from what is on disk (reading only), then applied."""

from __future__ import annotations

import hashlib
import os

import pytest

from eventlog.errors import CorruptionError
from eventlog.events import MessageAppended
from eventlog.fsio import OS_FS
from eventlog.log import Log
from eventlog.reader import LogReader
from eventlog.segments import segment_bases
from eventlog.writer_recovery import QUARANTINE_DIR, Recovery, TailCut, plan_open, plan_repair


def _msg(i: int) -> MessageAppended:
    return MessageAppended(session_key="s", message_id=str(i), role="user", content=f"message {i} " + "x" * 200)


def _log(tmp_path, n: int, segment_bytes: int = 1 << 20) -> str:
    d = str(tmp_path / "log")
    with Log.open(d, writable=True, create=True, segment_bytes=segment_bytes) as log:
        for i in range(n):
            log.append(_msg(i))
    return d


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _tree(d: str) -> dict[str, str]:
    out = {}
    for root, _dirs, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, d)] = hashlib.sha256(fh.read()).hexdigest() + oct(os.stat(p).st_mode)
    return out


def test_an_empty_log_plans_a_first_segment(tmp_path):
    d = str(tmp_path / "log")
    os.makedirs(d)
    plan = plan_open(LogReader(d))
    assert plan.base == 0 and plan.scan is None and plan.cut is None


def test_a_torn_tail_plans_a_cut_at_the_last_whole_record_and_planning_writes_nothing(tmp_path):
    d = _log(tmp_path, 5)
    path = LogReader(d).seg_path(1)
    whole = os.path.getsize(path)
    torn = b'{"type":"message.appended","seq":6,"ts":"2026'
    with open(path, "ab") as f:
        f.write(torn)  # a writer died mid-append
    before = _tree(d)
    plan = plan_open(LogReader(d))
    assert _tree(d) == before
    assert plan.base == 1 and plan.scan is not None and plan.scan.next_seq == 6
    assert plan.cut == TailCut(1, whole, whole + len(torn), plan.cut.reason, 0)
    assert "torn" in plan.cut.reason
    assert plan.last_ts and not plan.unseal


def test_damage_followed_by_intact_records_is_refused_unless_repairing(tmp_path):
    d = _log(tmp_path, 6)
    path = LogReader(d).seg_path(1)
    data = bytearray(_read(path))
    second = data.index(b"\n") + 1
    data[second + 30] ^= 0x01  # flip a byte inside record 2: records 3..6 stay intact
    _write(path, bytes(data))
    with pytest.raises(CorruptionError, match="intact record") as e:
        plan_open(LogReader(d))
    assert e.value.segment and e.value.offset == second and e.value.seq == 2
    plan = plan_open(LogReader(d), repair=True)
    assert plan.cut is not None and plan.cut.valid_end == second and plan.cut.records_after == 4


def test_a_segment_missing_between_sealed_ones_is_refused(tmp_path):
    d = _log(tmp_path, 40, segment_bytes=2048)
    bases = segment_bases(d)
    assert len(bases) >= 3
    os.remove(LogReader(d).seg_path(bases[1]))
    with pytest.raises(CorruptionError, match="missing or damaged"):
        plan_open(LogReader(d))
    plan = plan_repair(LogReader(d))
    assert plan is not None and plan.quarantine == bases[2:] and plan.cut is not None
    assert plan.cut.base == bases[0] and "does not continue" in plan.cut.reason


def test_a_healthy_log_needs_no_repair(tmp_path):
    d = _log(tmp_path, 40, segment_bytes=2048)
    assert plan_repair(LogReader(d)) is None
    assert plan_open(LogReader(d), repair=True).cut is None


def test_applying_a_cut_keeps_the_cut_bytes_and_describes_them(tmp_path):
    d = _log(tmp_path, 3)
    reader = LogReader(d)
    path = reader.seg_path(1)
    whole = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(b"garbage")
    plan = plan_open(reader)
    assert plan.cut is not None
    rec = Recovery(reader, OS_FS, lambda: 1234.0).cut(plan.cut)
    assert os.path.getsize(path) == whole
    assert rec.offset == whole and rec.bytes_truncated == 7 and rec.quarantine.startswith(QUARANTINE_DIR + "/")
    with open(os.path.join(d, rec.quarantine), "rb") as f:
        assert f.read() == b"garbage"
    assert ".1234.bad" in rec.quarantine


def test_a_repair_quarantines_the_segments_after_a_damaged_sealed_one_and_cuts_it(tmp_path):
    d = _log(tmp_path, 40, segment_bytes=2048)
    bases = segment_bases(d)
    reader = LogReader(d)
    path = reader.seg_path(bases[0])
    data = bytearray(_read(path))
    os.chmod(path, 0o644)
    data[-10] ^= 0x01  # the sealed first segment's last record is damaged
    _write(path, bytes(data))
    plan = plan_repair(reader)
    assert plan is not None and plan.quarantine == bases[1:] and plan.cut is not None and not plan.reason
    rec = Recovery(reader, OS_FS, lambda: 0.0).repair(plan)
    assert rec is not None and len(rec.segments_quarantined) == len(bases) - 1
    assert segment_bases(d) == [bases[0]]
    kept = set(os.listdir(os.path.join(d, QUARANTINE_DIR)))
    assert set(rec.segments_quarantined) <= kept and rec.quarantine.removeprefix(QUARANTINE_DIR + "/") in kept
    assert os.stat(path).st_mode & 0o200  # the cut segment is the active one again: writable
