"""A file-system layer for tests: crash simulation and injected I/O errors.

``SimFS`` is an ``eventlog.fsio.FileSystem`` that really writes to disk but remembers,
for every file it touched, the content that was durable at the last ``fsync`` and which
directory entries (creates, renames) were not yet made durable by ``fsync_dir``. fsync
itself is only recorded, not performed, so tests run fast.

``crash(rng)`` then does what INVARIANTS.md defines as a crash (after SQLite's test6.c):
for each file, the bytes written since its last fsync are kept, dropped, replaced by
random bytes, or cut to a random prefix; un-synced creates may vanish and un-synced
renames may be undone. ``fail_at = n`` makes the n-th mutating call raise ``EIO``
(optionally after writing part of the data, a torn write).
"""

from __future__ import annotations

import errno
import os
import random

from eventlog.fsio import FileSystem

CRASH_MODES = ("keep", "drop", "garbage", "prefix")


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


class SimFS(FileSystem):
    """Records durability state; can inject faults and simulate a crash (see module doc)."""

    def __init__(self) -> None:
        self.fd_path: dict[int, str] = {}
        self.durable: dict[str, bytes | None] = {}  # content at last fsync (None: never synced)
        self.unsynced_creates: set[str] = set()
        self.unsynced_renames: list[tuple[str, str, bytes | None]] = []  # (src, dst, dst's old durable content)
        self.calls = 0
        self.fail_at: int | None = None
        self.torn = False
        self.segment_writes: list[tuple[str, bytes]] = []
        self.fsyncs = 0

    # -- fault injection -------------------------------------------------------------

    def _tick(self, what: str) -> bool:
        """Count a mutating call; True if this one must fail."""
        self.calls += 1
        return self.fail_at is not None and self.calls == self.fail_at

    def _fail(self, what: str) -> OSError:
        return OSError(errno.EIO, f"injected I/O error in {what} (call {self.calls})")

    # -- tracking --------------------------------------------------------------------

    def _track(self, path: str) -> None:
        if path in self.durable:
            return
        content = _read(path)
        self.durable[path] = content
        if content is None:
            self.unsynced_creates.add(path)

    def open_append(self, path: str) -> int:
        if self._tick("open"):
            raise self._fail(f"open({path})")
        self._track(path)
        fd = super().open_append(path)
        self.fd_path[fd] = path
        return fd

    def open_trunc(self, path: str) -> int:
        if self._tick("open"):
            raise self._fail(f"open({path})")
        self._track(path)
        fd = super().open_trunc(path)
        self.fd_path[fd] = path
        return fd

    def write(self, fd: int, data: bytes) -> None:
        path = self.fd_path[fd]
        if self._tick("write"):
            if self.torn and len(data) > 1:
                super().write(fd, data[: len(data) // 2])
            raise self._fail(f"write({path})")
        if path.endswith(".jsonl"):
            self.segment_writes.append((path, bytes(data)))
        super().write(fd, data)

    def fsync(self, fd: int) -> None:
        path = self.fd_path[fd]
        if self._tick("fsync"):
            raise self._fail(f"fsync({path})")
        self.durable[path] = _read(path)
        self.fsyncs += 1

    def dup(self, fd: int) -> int:
        new = super().dup(fd)
        self.fd_path[new] = self.fd_path[fd]
        return new

    def close(self, fd: int) -> None:
        self.fd_path.pop(fd, None)
        super().close(fd)

    def seal(self, fd: int) -> None:
        if self._tick("seal"):
            raise self._fail(f"seal({self.fd_path[fd]})")
        super().seal(fd)

    def truncate(self, fd: int, size: int) -> None:
        if self._tick("truncate"):
            raise self._fail("truncate")
        super().truncate(fd, size)

    def rename(self, src: str, dst: str) -> None:
        if self._tick("rename"):
            raise self._fail(f"rename({src}, {dst})")
        self._track(src)
        self._track(dst)
        old = self.durable.get(dst)
        self.unsynced_renames.append((src, dst, old))
        super().rename(src, dst)
        self.durable[dst] = self.durable.pop(src, None)
        if src in self.unsynced_creates:
            self.unsynced_creates.discard(src)
            if old is None:  # a name that existed durably cannot vanish: a crash keeps the old file or the new one
                self.unsynced_creates.add(dst)

    def unlink(self, path: str) -> None:
        if self._tick("unlink"):
            raise self._fail(f"unlink({path})")
        super().unlink(path)
        self.durable.pop(path, None)

    def fsync_dir(self, path: str) -> None:
        if self._tick("fsync_dir"):
            raise self._fail(f"fsync_dir({path})")
        path = os.path.abspath(path)
        self.unsynced_creates = {p for p in self.unsynced_creates if os.path.dirname(os.path.abspath(p)) != path}
        self.unsynced_renames = [r for r in self.unsynced_renames if os.path.dirname(os.path.abspath(r[1])) != path]

    # -- queries ---------------------------------------------------------------------

    def durable_bytes(self, path: str) -> bytes:
        """What a crash now would keep of ``path`` at least (its last fsynced content)."""
        content = self.durable.get(path, _read(path))
        return content or b""

    # -- the crash -------------------------------------------------------------------

    def crash(self, rng: random.Random, modes: tuple[str, ...] = CRASH_MODES) -> list[str]:
        """Mutate un-synced state on disk as a power loss could; returns what was done."""
        done = []
        for src, dst, old in reversed(self.unsynced_renames):
            if rng.random() < 0.5:
                content = _read(dst)
                if content is not None:
                    with open(src, "wb") as f:
                        f.write(content)
                if old is None:
                    if content is not None:  # the same name may have been renamed over twice
                        os.unlink(dst)
                else:
                    with open(dst, "wb") as f:
                        f.write(old)
                done.append(f"undid rename {os.path.basename(src)} -> {os.path.basename(dst)}")
        for path, synced in list(self.durable.items()):
            current = _read(path)
            if current is None:
                continue
            if path in self.unsynced_creates and rng.random() < 0.3:
                os.unlink(path)
                done.append(f"lost create of {os.path.basename(path)}")
                continue
            base = synced or b""
            if not current.startswith(base) or len(current) == len(base):
                if current != base and rng.random() < 0.5:
                    _write(path, base)
                    done.append(f"reverted {os.path.basename(path)} to its synced content")
                continue
            tail = current[len(base) :]
            mode = rng.choice(modes)
            if mode == "keep":
                continue
            if mode == "drop":
                _write(path, base)
            elif mode == "garbage":
                _write(path, base + bytes(rng.getrandbits(8) for _ in range(len(tail))))
            else:
                _write(path, base + tail[: rng.randrange(len(tail))])
            done.append(f"{mode} {len(tail)} unsynced bytes of {os.path.basename(path)}")
        return done


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def abandon(log) -> None:  # noqa: ANN001
    """Stop a writer the way a killed process stops: no sync, no checkpoint, its locks released."""
    w = log.writer
    if w is None:
        return
    w.abandon()


def abandon_workspace(ws) -> None:  # noqa: ANN001
    """``abandon`` a workspace's writer: its projection flusher stops too, nothing is flushed."""
    ws._stop.set()  # noqa: SLF001
    if ws._flusher is not None:  # noqa: SLF001
        ws._flusher.join()  # noqa: SLF001
    abandon(ws.log)
    ws._flush_lock.close()  # noqa: SLF001
