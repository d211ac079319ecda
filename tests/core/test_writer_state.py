"""eventlog.writer_state: a writer's view of the log's end, loaded on open and caught up each turn."""

from __future__ import annotations

import os

from eventlog.codec import hash_key
from eventlog.events import SessionCreated
from eventlog.fsio import OS_FS
from eventlog.log import Log
from eventlog.reader import LogReader
from eventlog.writer_state import WriterState


def _state(d: str) -> WriterState:
    return WriterState(LogReader(d), OS_FS, lambda: 1000.0, segment_bytes=4096)


def _append(d: str, keys: list[str]) -> None:
    with Log.open(d, writable=True, create=True, segment_bytes=4096) as log:
        for k in keys:
            log.append(SessionCreated(session_key=k, dedup=k))


def test_loading_an_empty_log_creates_its_first_segment(tmp_path):
    d = str(tmp_path / "log")
    os.makedirs(d)
    st = _state(d)
    assert st.load(False) is False
    assert st.next_seq == 1 and os.path.exists(LogReader(d).seg_path(1)) and st.seg.fd >= 0
    st.seg.close()


def test_catching_up_sees_other_writers_seqs_keys_and_ts_across_rolls(tmp_path):
    d = str(tmp_path / "log")
    _append(d, ["a"])
    st = _state(d)
    st.load(False)
    assert st.catch_up() is False and st.next_seq == 2
    _append(d, [f"k{i}" for i in range(60)])  # another writer, rolling segments
    assert st.catch_up() is False
    assert st.next_seq == 62 and st.dedup.get(hash_key("k59")) == 61
    assert st.seg.base > 1 and st.seg.size == os.path.getsize(st.seg.path)
    assert st.stamp.text.decode() == LogReader(d).find(61).event.ts  # ts never goes backwards across writers
    st.seg.close()


def test_a_torn_tail_left_by_another_writer_is_cut_and_pending(tmp_path):
    d = str(tmp_path / "log")
    _append(d, ["a"])
    st = _state(d)
    st.load(False)
    with open(st.seg.path, "ab") as f:
        f.write(b'{"type":"session.cre')  # another writer died mid-append during its turn
    assert st.catch_up() is True
    assert st.recovered is not None and st.recovered.bytes_truncated == 20
    assert os.path.getsize(st.seg.path) == st.seg.size
    st.seg.close()


def test_a_log_changed_under_us_is_loaded_again(tmp_path):
    d = str(tmp_path / "log")
    _append(d, ["a", "b"])
    st = _state(d)
    st.load(False)
    path = st.seg.path
    with open(path, "rb") as f:
        first = f.readline()
    os.replace(path, path + ".gone")
    os.chmod(path + ".gone", 0o444)  # the file we hold is sealed (as erasure seals before it rewrites)...
    with open(path, "wb") as f:
        f.write(first)  # ...and the path rewritten shorter: appends cannot explain it
    assert st.catch_up() is False
    assert st.next_seq == 2 and st.dedup.get(hash_key("b")) is None
    st.seg.close()
