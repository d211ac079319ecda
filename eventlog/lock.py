"""Taking turns: the write lock of a log directory, and other short-held file locks.

Writers share a log the way SQLite's WAL writers do: each holds the exclusive ``flock`` on
``log/LOCK`` only for one append (or batch, or a short exclusive session) and its
bookkeeping, then releases it. A writer that finds the lock taken waits, polling with a
short, growing sleep, up to its timeout; only then does it fail with ``LockedError``
naming the holder. The kernel drops a lock when its process dies, so a crashed writer
never leaves a stale lock. Readers never lock.

The lock file holds nothing (no pid, no command line, no arguments: a command line may
carry a password). Who holds the lock is found when it matters, on a timeout: on Linux
``/proc/locks`` names the holder's pid, and ``/proc/<pid>`` its command name and start
time; elsewhere the message just says another process holds it.

**Waiting is visible.** A lock made with ``announce=True`` (the log's) has a companion file
(``LOCK.wait``): a process that has to wait holds a shared ``flock`` on it while it polls,
so the holder can ask ``others_waiting()`` (one non-blocking exclusive ``flock`` of that
file) and hand the lock over instead of keeping it. The log's writer uses this to keep
its turn for a short lease between cheap appends (see ``eventlog.writer``).

``FileLock`` is the same primitive for other short critical sections (the projection
flush, one run of a processor), with shared mode for readers that need a stable view.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time

from eventlog.errors import LockedError

LOCK_NAME = "LOCK"
WAIT_SUFFIX = ".wait"
_FIRST_SLEEP = 0.00005
MAX_POLL_SECONDS = 0.0005  # a waiter looks again at least every half millisecond: its wait is the holder's turn, not our backoff


class FileLock:
    """An ``flock`` on one file, taken and released many times (see the module docstring)."""

    def __init__(self, path: str, *, what: str = "", announce: bool = False) -> None:
        self.path = path
        self.what = what or path
        self._fd: int | None = None
        self.held = False
        self._wait_path = path + WAIT_SUFFIX if announce else ""
        self._wait_fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            try:
                try:
                    self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
                except FileNotFoundError:  # its directory was deleted (state/ is disposable): make it again
                    os.makedirs(os.path.dirname(self.path), exist_ok=True)
                    self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except PermissionError:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)  # a read-only workspace: shared locks still work
        return self._fd

    def acquire(self, timeout: float, *, shared: bool = False) -> float:
        """Take the lock, waiting up to ``timeout`` seconds; returns the seconds waited."""
        fd = self._open()
        mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
        try:
            fcntl.flock(fd, mode)
            self.held = True
            return 0.0
        except BlockingIOError:
            pass
        start = time.monotonic()
        deadline = start + max(timeout, 0.0)
        sleep = _FIRST_SLEEP
        announced = False
        try:
            while True:
                if not announced and timeout > 0:
                    announced = self._announce()  # retried: the holder may be checking this very moment
                now = time.monotonic()
                if now >= deadline:
                    waited = f" after waiting {timeout:g}s" if timeout > 0 else ""
                    raise LockedError(f"{self.what} is busy: {holder_of(self.path)} holds it{waited}; "
                                      "retry later (readers such as 'evlog tail' need no lock)")
                time.sleep(min(sleep, deadline - now))
                sleep = min(sleep * 2, MAX_POLL_SECONDS)
                try:
                    fcntl.flock(fd, mode)
                    self.held = True
                    return time.monotonic() - start
                except BlockingIOError:
                    continue
        finally:
            if announced:
                fcntl.flock(self._wait_descriptor(), fcntl.LOCK_UN)

    def _announce(self) -> bool:
        """Hold a shared lock on the companion file while waiting (see the module docstring); False if unable."""
        if not self._wait_path:
            return False
        try:
            fcntl.flock(self._wait_descriptor(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False  # the holder is checking this very moment: the caller retries
        except OSError:
            self._wait_path = ""  # a read-only workspace (nobody can write anyway): wait unannounced
            return False

    def others_waiting(self) -> bool:
        """True if another process (or another lock object) announced it waits for this lock, or if unsure."""
        try:
            fd = self._wait_descriptor()
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # taken (BlockingIOError: someone waits), or cannot tell: assume someone waits
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False

    def _wait_descriptor(self) -> int:
        """The companion file's descriptor, opened (and the file created) on first use."""
        if self._wait_fd is None:
            self._wait_fd = os.open(self._wait_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        return self._wait_fd

    def try_acquire(self) -> bool:
        """Take the lock if it is free right now; True if taken."""
        try:
            fcntl.flock(self._open(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        self.held = True
        return True

    def release(self) -> None:
        """Unlock (idempotent); the file stays open for the next turn."""
        if self._fd is not None and self.held:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            self.held = False

    def close(self) -> None:
        """Unlock and close the files."""
        self.release()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._wait_fd is not None:
            os.close(self._wait_fd)
            self._wait_fd = None


def holder_of(path: str) -> str:
    """Who holds an ``flock`` on ``path``: 'pid N (command, since T) on HOST', as far as the OS tells."""
    try:
        ino = os.stat(path).st_ino
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            rows = f.read().splitlines()
    except OSError:
        return "another process"
    pids = []
    for row in rows:
        parts = row.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5].rsplit(":", 1)[-1] == str(ino):
            pids.append(parts[4])
    if not pids:
        return "another process"
    return ", ".join(_describe_pid(pid) for pid in dict.fromkeys(pids))


def _describe_pid(pid: str) -> str:
    """'pid N (evlog daemon, since T) on HOST': the command's name and subcommand, never its arguments."""
    name = ""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
        words = [os.path.basename(a) for a in argv[:3]]
        if words and words[0].startswith("python") and len(words) > 1 and not words[1].startswith("-"):
            words = words[1:]  # python script.py: the script is the command
        name = words[0] if words else ""
        if len(words) > 1 and words[1].isalpha():
            name += " " + words[1]  # a subcommand ('evlog daemon'); options and values are never shown
    except OSError:
        pass
    since = ""
    try:
        started = os.stat(f"/proc/{pid}").st_mtime
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    except OSError:
        pass
    detail = ", ".join(x for x in (name, f"since {since}" if since else "") if x)
    return f"pid {pid}" + (f" ({detail})" if detail else "") + f" on {socket.gethostname()}"
