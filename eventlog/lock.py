"""The single-writer lock of a log directory.

One process at a time may write a log. The writer holds an exclusive ``flock`` on
``log/LOCK`` for as long as it is open; the kernel drops the lock when the process dies,
so a crashed writer never leaves a stale lock behind. The holder writes its pid, host
and command into the file so a second writer can say who is in the way. Readers never
lock. ``timeout=0`` fails fast; a positive timeout polls until the lock frees up.
"""

from __future__ import annotations

import fcntl
import os
import socket
import sys
import time

from eventlog.errors import LockedError

LOCK_NAME = "LOCK"


class WriterLock:
    """An acquired writer lock; ``release()`` (or process exit) frees it."""

    def __init__(self, directory: str, *, timeout: float = 0.0):
        self.path = os.path.join(directory, LOCK_NAME)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    os.close(fd)
                    waited = f" after waiting {timeout:g}s" if timeout > 0 else ""
                    raise LockedError(
                        f"{directory} is locked by another writer ({holder}){waited}; "
                        "stop it or retry later (readers such as 'evlog tail' need no lock)"
                    ) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, _holder_line().encode(), 0)
        self._fd: int | None = fd

    def release(self) -> None:
        """Unlock; idempotent."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _holder_line() -> str:
    cmd = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200]
    return f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, command: {cmd}\n"


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "holder unknown"
