"""The file-system calls that change durable state, behind one small seam.

Everything that writes, syncs, renames or truncates a file goes through a ``FileSystem``
object, so tests can replace it: one that raises ``OSError`` at the n-th call (INVARIANTS
I20) and one that remembers which bytes were never fsynced and mangles them to simulate
a crash (I1, I18). Reads use plain ``open()``: a crash changes what is on disk, not how
it is read.

``atomic_write`` is the one way evlog replaces a whole file (checkpoints, projections,
indexes): temp file in the same directory, write, fsync, rename over the target, fsync
the directory. A reader sees the old file or the new one, never a mix or an empty file.
"""

from __future__ import annotations

import os
import shutil

TMP_SUFFIX = ".tmp"


class FileSystem:
    """Real POSIX calls. Subclasses in tests inject faults or simulate crashes."""

    def open_append(self, path: str) -> int:
        """Open (creating if needed) ``path`` for appending; returns a file descriptor."""
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)

    def open_trunc(self, path: str) -> int:
        """Create or empty ``path`` for writing; returns a file descriptor."""
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)

    def write(self, fd: int, data: bytes) -> None:
        """Write all of ``data`` (retrying short writes)."""
        n = os.write(fd, data)
        if n != len(data):
            view = memoryview(data)[n:]
            while view:
                view = view[os.write(fd, view) :]

    def fsync(self, fd: int) -> None:
        """Make the file's data durable (``fdatasync`` where the OS has it)."""
        os.fdatasync(fd) if hasattr(os, "fdatasync") else os.fsync(fd)

    def dup(self, fd: int) -> int:
        """A second descriptor of the same open file (the group-commit fsync uses one outside the writer's lock)."""
        return os.dup(fd)

    def close(self, fd: int) -> None:
        """Close a descriptor."""
        os.close(fd)

    def truncate(self, fd: int, size: int) -> None:
        """Cut the file behind ``fd`` to ``size`` bytes."""
        os.ftruncate(fd, size)

    def seal(self, fd: int) -> None:
        """Make a segment read-only: it is sealed, and other writers see the roll with one ``fstat``."""
        os.fchmod(fd, 0o444)

    def unseal(self, path: str) -> None:
        """Make a read-only segment writable again (the newest one, after a roll that did not finish)."""
        os.chmod(path, 0o644)

    def rename(self, src: str, dst: str) -> None:
        """Atomically replace ``dst`` with ``src``."""
        os.replace(src, dst)

    def unlink(self, path: str) -> None:
        """Remove a file."""
        os.unlink(path)

    def fsync_dir(self, path: str) -> None:
        """Make a directory's entries (creates, renames, unlinks) durable."""
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def atomic_write(self, path: str, data: bytes, *, sync: bool = True) -> None:
        """Replace ``path`` with ``data`` so readers and crashes see old or new, never a mix.

        ``sync=False`` skips the fsyncs: for disposable files (indexes) that are
        validated on use and rebuilt when wrong.
        """
        tmp = path + TMP_SUFFIX
        fd = self.open_trunc(tmp)
        try:
            self.write(fd, data)
            if sync:
                self.fsync(fd)
        finally:
            self.close(fd)
        self.rename(tmp, path)
        if sync:
            self.fsync_dir(os.path.dirname(path) or ".")


    def write_file(self, path: str, data: bytes) -> None:
        """``atomic_write``, creating the directory first: how projections write their files."""
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.atomic_write(path, data)

    def remove_tree(self, path: str) -> None:
        """Delete a directory and everything in it, if it exists."""
        shutil.rmtree(path, ignore_errors=True)


class ScratchFS(FileSystem):
    """Writes files in place without syncing: for throwaway trees (``replay --check`` compares one, then deletes it)."""

    def atomic_write(self, path: str, data: bytes, *, sync: bool = True) -> None:
        with open(path, "wb") as f:
            f.write(data)


class MemoryFS(FileSystem):
    """Files kept in a dict instead of on disk: for rebuilding projections only to compare them."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def write_file(self, path: str, data: bytes) -> None:
        self.files[path] = data

    def atomic_write(self, path: str, data: bytes, *, sync: bool = True) -> None:
        self.files[path] = data

    def unlink(self, path: str) -> None:
        if path not in self.files:
            raise FileNotFoundError(path)
        del self.files[path]

    def remove_tree(self, path: str) -> None:
        prefix = path.rstrip(os.sep) + os.sep
        for name in [p for p in self.files if p.startswith(prefix)]:
            del self.files[name]


OS_FS = FileSystem()


def remove_stray_temp_files(directory: str) -> list[str]:
    """Delete ``*.tmp`` left in ``directory`` by a crash mid-``atomic_write``; returns their names."""
    removed: list[str] = []
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return removed
    for name in names:
        if name.endswith(TMP_SUFFIX):
            try:
                os.unlink(os.path.join(directory, name))
                removed.append(name)
            except FileNotFoundError:
                pass
    return removed
