"""The active segment: the one file a writer appends to, its descriptor, size and sparse index.

``ActiveSegment`` owns the descriptor (``-1`` when closed), the segment's base seq and size
as this writer last saw them, the sparse index entries taken every ``INDEX_EVERY`` bytes,
how many appends were written but not yet synced, and the poison mark: whatever the
durability policy, an I/O error during an append is not acknowledged (``LogIOError``) and
poisons the writer, which refuses further appends until reopened (no fsync retry;
PostgreSQL's fsyncgate). ``open``, ``create``, ``save_index`` raise ``OSError`` as the file
system does (recovery and checkpoints handle it).

A segment is sealed when the next append would not fit: fsync, mark read-only, write its
sparse index, create the next one (``roll``).
"""

from __future__ import annotations

import os

from eventlog.errors import LogIOError
from eventlog.fsio import FileSystem
from eventlog.reader import LogReader
from eventlog.segments import INDEX_EVERY, encode_index, index_path, segment_name


class ActiveSegment:
    """The segment this writer appends to (see the module docstring)."""

    def __init__(self, reader: LogReader, fs: FileSystem, *, limit: int) -> None:
        self.reader = reader
        self.fs = fs
        self.limit = limit  # segment_bytes: a segment is sealed before an append would pass it
        self.fd = -1
        self.base = 0
        self.size = 0
        self.index: list[tuple[int, int]] = []
        self.next_mark = 0  # the byte position from which the next index entry is taken
        self.unsynced = 0  # appends written since the last fsync
        self.poisoned: str | None = None  # why appends are refused (an I/O error), or None

    @property
    def name(self) -> str:
        """The segment's file name."""
        return segment_name(self.base)

    @property
    def path(self) -> str:
        """The segment's path."""
        return self.reader.seg_path(self.base)

    def reset(self, base: int, size: int, index: list[tuple[int, int]]) -> None:
        """Point at segment ``base`` holding ``size`` valid bytes with these index entries (the descriptor stays)."""
        self.base, self.size, self.index = base, size, index
        self.next_mark = index[-1][1] + INDEX_EVERY if index else 0

    def open(self) -> None:
        """Open the descriptor on the current segment for appending."""
        self.fd = self.fs.open_append(self.path)

    def create(self, base: int) -> None:
        """Create the empty segment ``base`` durably (its directory entry synced) and open it."""
        path = self.reader.seg_path(base)
        self.fs.close(self.fs.open_append(path))
        self.fs.fsync_dir(self.reader.dir)
        self.fd = self.fs.open_append(path)
        self.reset(base, 0, [])

    def close(self) -> None:
        """Close the descriptor, ignoring errors (idempotent)."""
        if self.fd >= 0:
            try:
                self.fs.close(self.fd)
            except OSError:
                pass
            self.fd = -1

    def unchanged(self) -> bool:
        """True when nobody appended to or sealed the file since this writer's last look (one ``fstat``)."""
        st = os.fstat(self.fd)
        return st.st_size == self.size and bool(st.st_mode & 0o200)

    def replaced(self) -> bool:
        """True when the path is no longer the file the descriptor is open on (an erasure rewrote it)."""
        if self.fd < 0:
            return False
        try:
            return os.stat(self.path).st_ino != os.fstat(self.fd).st_ino
        except FileNotFoundError:
            return True

    def write(self, data: bytes, first_seq: int, lines: list[bytes] | None) -> None:
        """Append one append's bytes (``lines``: a batch's lines, None for one line) and take index marks."""
        pos = self.size
        try:
            self.fs.write(self.fd, data)
        except OSError as e:
            raise self.failed("write failed", e) from e
        self.size = pos + len(data)
        if self.size > self.next_mark:  # a mark falls in these bytes (a batch may cross one mid-way)
            seq = first_seq
            for line in lines or (data,):
                if pos >= self.next_mark:
                    self.index.append((seq, pos))
                    self.next_mark = pos + INDEX_EVERY
                pos += len(line)
                seq += 1

    def failed(self, what: str, e: OSError) -> LogIOError:
        """Poison after a failed write; the error that refuses the append."""
        self.poisoned = f"{what}: {e}"
        return LogIOError(f"append not acknowledged: writing {self.name} failed: {e}")

    def sync(self, what: str = "fsync failed") -> None:
        """fdatasync the segment; nothing is left unsynced after it (``what``: the poison's reason on failure)."""
        try:
            self.fs.fsync(self.fd)
        except OSError as e:
            self.poisoned = f"{what}: {e}"
            raise LogIOError(f"append not acknowledged: {what} on {self.name}: {e}") from e
        self.unsynced = 0

    def roll(self, next_base: int) -> None:
        """Seal this segment (fsync, read-only mark, sparse index) and create the next one, ``next_base``."""
        self.sync("fsync before sealing failed")
        try:
            self.fs.seal(self.fd)
            self.save_index()
            self.fs.close(self.fd)
            self.fd = -1
            self.create(next_base)
        except OSError as e:
            self.poisoned = f"segment roll failed: {e}"
            raise LogIOError(f"append not acknowledged: rolling to {segment_name(next_base)} failed: {e}") from e

    def save_index(self) -> None:
        """Leave the segment's sparse index for readers (disposable, checked on use)."""
        self.fs.atomic_write(index_path(self.reader.dir, self.base), encode_index(self.base, self.size, self.index),
                             sync=False)
