"""eventlog.writer_dedup: the dedup index and its checkpoint file (used when it matches the log, else rebuilt)."""

from __future__ import annotations

import os

import pytest

from eventlog.codec import hash_key
from eventlog.errors import CorruptionError
from eventlog.events import SessionCreated
from eventlog.fsio import OS_FS
from eventlog.log import Log
from eventlog.reader import LogReader
from eventlog.segments import segment_bases
from eventlog.writer_dedup import DEDUP_FILE, DedupIndex


def _log(tmp_path, n: int, segment_bytes: int = 1 << 20) -> str:
    d = str(tmp_path / "log")
    with Log.open(d, writable=True, create=True, segment_bytes=segment_bytes) as log:
        for i in range(n):
            log.append(SessionCreated(session_key=f"k{i}", dedup=f"d{i}"))
    return d


def _loaded(d: str) -> DedupIndex:
    reader = LogReader(d)
    idx = DedupIndex(reader, OS_FS)
    bases = segment_bases(d)
    idx.load(reader.last_seq + 1, bases[-1] + 10**9, [])  # no active segment scan given: read every segment
    return idx


def test_a_saved_checkpoint_is_used_and_covers_every_key(tmp_path):
    d = _log(tmp_path, 30)
    idx = _loaded(d)
    idx.save(30)
    again = _loaded(d)
    assert again.file_seq == 30
    assert [again.get(hash_key(f"d{i}")) for i in range(30)] == list(range(1, 31))
    assert again.get(hash_key("never")) is None


def test_a_checkpoint_of_another_log_is_ignored_and_the_keys_rebuilt(tmp_path):
    d = _log(tmp_path, 10)
    idx = _loaded(d)
    idx.add_key("stranger", 3)  # a key no record carries
    idx.save(10)
    other = _log(tmp_path / "other", 10)
    os.replace(os.path.join(d, DEDUP_FILE), os.path.join(other, DEDUP_FILE))
    with open(os.path.join(other, DEDUP_FILE), "rb") as f:
        assert f.read()  # it is there...
    rebuilt = _loaded(other)
    assert rebuilt.file_seq == -1  # ...but its fingerprint does not match this log
    assert rebuilt.get(hash_key("stranger")) is None and rebuilt.get(hash_key("d4")) == 5


def test_a_damaged_checkpoint_body_is_ignored(tmp_path):
    d = _log(tmp_path, 10)
    idx = _loaded(d)
    idx.add_key("stranger", 3)
    idx.save(10)
    path = os.path.join(d, DEDUP_FILE)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[-1] ^= 0xFF
    with open(path, "wb") as f:
        f.write(bytes(data))
    assert _loaded(d).get(hash_key("stranger")) is None


def test_a_damaged_sealed_segment_met_while_loading_keys_is_named(tmp_path):
    d = _log(tmp_path, 60, segment_bytes=2048)
    second = LogReader(d).seg_path(segment_bases(d)[1])
    os.chmod(second, 0o644)
    with open(second, "r+b") as f:
        f.seek(os.path.getsize(second) // 2)
        f.write(b"#")
    with pytest.raises(CorruptionError, match="sealed segment") as e:
        _loaded(d)
    assert e.value.segment


def test_staleness_and_due(tmp_path):
    d = _log(tmp_path, 3)
    os.remove(os.path.join(d, DEDUP_FILE))  # the close saved one
    idx = _loaded(d)
    assert idx.stale(3)  # no checkpoint
    idx.save(3)
    assert not idx.stale(3 + 10, stale_ok=10) and idx.stale(3 + 11, stale_ok=10)
    assert not idx.due()  # just saved
