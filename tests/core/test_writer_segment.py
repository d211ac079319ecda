"""eventlog.writer_segment: the active segment (writes, index marks, rolls) and its poison mark."""

from __future__ import annotations

import errno
import os

import pytest

from eventlog.errors import LogIOError
from eventlog.fsio import OS_FS, FileSystem
from eventlog.reader import LogReader
from eventlog.segments import INDEX_EVERY, index_path, load_index


class _FailingFS(FileSystem):
    def __init__(self, what: str) -> None:
        self.what = what

    def write(self, fd: int, data: bytes) -> None:
        if self.what == "write":
            raise OSError(errno.EIO, "injected")
        super().write(fd, data)

    def fsync(self, fd: int) -> None:
        if self.what == "fsync":
            raise OSError(errno.EIO, "injected")
        super().fsync(fd)


def _segment(tmp_path, fs: FileSystem = OS_FS, limit: int = 1 << 20):
    from eventlog.writer_segment import ActiveSegment

    d = str(tmp_path / "log")
    os.makedirs(d, exist_ok=True)
    seg = ActiveSegment(LogReader(d), fs, limit=limit)
    seg.create(1)
    return seg


def test_a_write_grows_the_segment_and_takes_an_index_mark_every_interval(tmp_path):
    seg = _segment(tmp_path)
    line = b"x" * 999 + b"\n"
    for i in range(3 * INDEX_EVERY // len(line) + 1):
        seg.write(line, 1 + i, None)
    assert seg.size == os.path.getsize(seg.path)
    assert [s for s, _p in seg.index][:1] == [1] and len(seg.index) >= 3
    positions = [p for _s, p in seg.index]
    assert all(b - a >= INDEX_EVERY for a, b in zip(positions, positions[1:], strict=False))
    assert seg.unchanged()
    with open(seg.path, "ab") as f:
        f.write(b"y\n")  # another writer appended
    assert not seg.unchanged()
    seg.close()


def test_a_roll_seals_the_segment_writes_its_index_and_opens_the_next(tmp_path):
    seg = _segment(tmp_path)
    seg.write(b"a\n", 1, None)
    old, old_size = seg.path, seg.size
    seg.roll(2)
    assert not os.stat(old).st_mode & 0o200  # sealed: read-only
    assert load_index(seg.reader.dir, 1, old_size) == [(1, 0)]
    assert seg.base == 2 and seg.size == 0 and seg.fd >= 0 and os.path.exists(index_path(seg.reader.dir, 1))
    seg.close()
    assert seg.fd == -1
    seg.close()  # idempotent


@pytest.mark.parametrize("what", ["write", "fsync"])
def test_an_io_error_is_not_acknowledged_and_poisons(tmp_path, what):
    seg = _segment(tmp_path, _FailingFS(what))
    with pytest.raises(LogIOError, match="not acknowledged"):
        seg.write(b"a\n", 1, None)
        seg.sync()
    assert seg.poisoned and "injected" in seg.poisoned
    seg.close()


def test_replaced_sees_a_rewritten_file(tmp_path):
    seg = _segment(tmp_path)
    assert not seg.replaced()
    os.replace(seg.path + "", seg.path + ".old")
    with open(seg.path, "wb"):
        pass
    assert seg.replaced()
    seg.close()
