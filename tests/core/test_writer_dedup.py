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


# -- deferred: a writer reads the keys only when it first needs one ---------------------------------


def _writer(d: str) -> Log:
    return Log.open(d, writable=True, segment_bytes=2048)


def _reads_of(monkeypatch, path: str) -> list[str]:
    """Every open() of ``path`` from now on (the dedup checkpoint is read with open())."""
    import builtins

    seen: list[str] = []
    real = builtins.open

    def spy(file, *a, **k):  # noqa: ANN001, ANN002, ANN003
        if os.fspath(file) == path if isinstance(file, str | os.PathLike) else False:
            seen.append(path)
        return real(file, *a, **k)

    monkeypatch.setattr(builtins, "open", spy)
    return seen


def test_a_writer_that_needs_no_key_never_reads_or_rewrites_the_checkpoint(tmp_path, monkeypatch):
    d = _log(tmp_path, 40, segment_bytes=2048)
    path = os.path.join(d, DEDUP_FILE)
    before = os.stat(path)
    reads = _reads_of(monkeypatch, path)
    with _writer(d) as log:
        log.append(SessionCreated(session_key="no key"))  # an event without a dedup key
    assert reads == []
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)


def test_the_first_lookup_loads_every_key_and_a_known_key_is_not_written_again(tmp_path, monkeypatch):
    d = _log(tmp_path, 40, segment_bytes=2048)
    reads = _reads_of(monkeypatch, os.path.join(d, DEDUP_FILE))
    with _writer(d) as log:
        assert reads == []
        end = log.last_seq
        assert log.append(SessionCreated(session_key="again", dedup="d7")) == 8  # loads, finds it
        assert len(reads) == 1 and log.last_seq == end
        assert [log.lookup_dedup(f"d{i}") for i in range(40)] == list(range(1, 41))
        assert len(reads) == 1  # loaded once


def test_keys_other_writers_append_while_deferred_are_known_after_the_load(tmp_path):
    d = _log(tmp_path, 20, segment_bytes=2048)
    with _writer(d) as mine:
        with _writer(d) as other:  # rolls segments past the one ``mine`` had open
            for i in range(20, 80):
                other.append(SessionCreated(session_key=f"k{i}", dedup=f"d{i}"))
        assert mine.append(SessionCreated(session_key="no key")) == 81  # a turn: catches up, still deferred
        assert mine.writer._dedup.deferred is not None  # noqa: SLF001
        assert [mine.lookup_dedup(f"d{i}") for i in range(80)] == list(range(1, 81))
        assert mine.lookup_dedup("never") is None


def test_a_deferred_load_uses_a_checkpoint_saved_after_the_writer_opened(tmp_path, monkeypatch):
    d = _log(tmp_path, 20, segment_bytes=2048)
    with _writer(d) as mine:
        with _writer(d) as other:
            for i in range(20, 80):
                other.append(SessionCreated(session_key=f"k{i}", dedup=f"d{i}"))
            other.writer._dedup.save(80)  # noqa: SLF001 - what a roll or a close of a busy writer does
        mine.append(SessionCreated(session_key="no key"))
        scanned: list[int] = []
        real = DedupIndex._scan_sealed
        monkeypatch.setattr(DedupIndex, "_scan_sealed",
                            lambda self, base, pos, keys: (scanned.append(base), real(self, base, pos, keys)))
        assert mine.lookup_dedup("d79") == 80 and mine.lookup_dedup("d3") == 4
        assert scanned == []  # the newer checkpoint covers all: no segment read again
        assert mine.writer._dedup.file_seq == 80  # noqa: SLF001


def test_a_deferred_writer_saves_at_close_once_the_log_grew_past_the_staleness_bound(tmp_path):
    from eventlog.writer_dedup import DEDUP_STALE_OK

    d = _log(tmp_path, 10)
    with Log.open(d, writable=True, durability="none") as log:
        log.append_batch([SessionCreated(session_key=f"k{i}") for i in range(DEDUP_STALE_OK)])  # no keys
        assert log.writer._dedup.deferred is not None  # noqa: SLF001
        assert not log.writer._dedup.stale(log.last_seq)  # noqa: SLF001 - exactly the bound behind
        log.append(SessionCreated(session_key="one more"))
        assert log.writer._dedup.stale(log.last_seq)  # noqa: SLF001
        last = log.last_seq
    again = _loaded(d)
    assert again.file_seq == last and again.get(hash_key("d9")) == 10


def test_a_deferred_index_holds_a_bounded_number_of_others_keys(tmp_path, monkeypatch):
    import eventlog.writer_dedup as wd

    monkeypatch.setattr(wd, "DEFERRED_KEYS_MAX", 10)
    d = _log(tmp_path, 5)
    with Log.open(d, writable=True) as mine:
        with Log.open(d, writable=True) as other:
            for i in range(5, 30):
                other.append(SessionCreated(session_key=f"k{i}", dedup=f"d{i}"))
        mine.append(SessionCreated(session_key="no key"))  # its catch-up adds 25 keys: over the bound, it loads
        assert mine.writer._dedup.deferred is None  # noqa: SLF001
        assert mine.lookup_dedup("d29") == 30 and mine.lookup_dedup("d0") == 1


def test_a_damaged_sealed_segment_met_by_a_deferred_load_is_named_and_the_index_stays_deferred(tmp_path):
    d = _log(tmp_path, 60, segment_bytes=2048)
    os.remove(os.path.join(d, DEDUP_FILE))  # no checkpoint: the load reads every sealed segment
    with _writer(d) as log:
        second = LogReader(d).seg_path(segment_bases(d)[1])
        os.chmod(second, 0o644)
        with open(second, "r+b") as f:
            f.seek(os.path.getsize(second) // 2)
            f.write(b"#")
        for _ in range(2):  # never an empty index answering "unknown": each lookup meets the damage again
            with pytest.raises(CorruptionError, match="sealed segment"):
                log.lookup_dedup("d1")
            assert log.writer._dedup.deferred is not None  # noqa: SLF001
