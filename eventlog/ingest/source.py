"""Opening an input path (a transcript named by a user, a hook payload or a watched folder): one door.

Every read of a transcript (``evlog ingest``, ``evlog watch``, the Claude Code hooks, the
library's ``ingest_paths`` / ``ingest_file``) opens it with ``open_source``, which

* **refuses the files of an evlog workspace** (``RefusedInput``): in a directory holding
  ``evlog.json`` and ``log/`` (this workspace or another one), the workspace itself, its
  ``evlog.json`` and everything under the folders evlog writes there (``WORKSPACE_DIRS``:
  ``log``, ``sessions``, ``state``, ``memory``, ``diary``) are projections of a log, not
  transcripts: its session files would come back as duplicate messages. Other files a user
  keeps beside them are not evlog's and stay readable (a workspace at ``~`` or in a project
  folder does not hide everything under it). ``workspace_of`` is the test; folders being
  walked skip those folders (``is_workspace_folder``).
* **never blocks**: the path is opened with ``O_NONBLOCK`` (a FIFO, or a symlink swapped to
  one after any earlier check, opens at once instead of waiting for a writer), and the
  *opened descriptor* is checked with ``fstat``: anything but a regular file is closed and
  refused (``IngestError`` naming what it is). ``O_NONBLOCK`` is then cleared, so reads of
  the regular file behave as usual. Symlinks to regular files are followed on purpose
  (people link transcripts); what is checked is what was opened, not the path.
"""

from __future__ import annotations

import fcntl
import os
import stat
from typing import BinaryIO

from eventlog.errors import IngestError, NotFound, RefusedInput

WORKSPACE_CONFIG = "evlog.json"
WORKSPACE_LOG = "log"
#: The folders evlog writes in a workspace (the log, projections, state): never inputs.
WORKSPACE_DIRS = frozenset({WORKSPACE_LOG, "sessions", "state", "memory", "diary"})
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def is_workspace(directory: str) -> bool:
    """True when ``directory`` looks like an evlog workspace (``evlog.json`` and ``log/``)."""
    return (os.path.isfile(os.path.join(directory, WORKSPACE_CONFIG))
            and os.path.isdir(os.path.join(directory, WORKSPACE_LOG)))


def is_workspace_folder(directory: str) -> bool:
    """True when ``directory`` is one of the folders evlog writes in a workspace (``WORKSPACE_DIRS``)."""
    return os.path.basename(directory) in WORKSPACE_DIRS and is_workspace(os.path.dirname(directory))


def workspace_of(path: str) -> str | None:
    """The evlog workspace whose own files ``path`` (resolved) is among (see the module docstring), or None."""
    cur = os.path.realpath(path)
    if is_workspace(cur) or (os.path.basename(cur) == WORKSPACE_CONFIG and is_workspace(os.path.dirname(cur))):
        return cur if is_workspace(cur) else os.path.dirname(cur)
    while True:
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        if is_workspace_folder(cur):
            return parent
        cur = parent


def refuse_workspace_files(path: str) -> None:
    """Raise ``RefusedInput`` if ``path`` is (inside) an evlog workspace (see the module docstring)."""
    ws = workspace_of(path)
    if ws is not None:
        raise RefusedInput(f"{path}: refused: it is inside the evlog workspace {ws}, whose files are projections "
                           "of its log (ingesting them would duplicate messages); ingest the agent's own "
                           "transcripts instead", path=path)


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words ("a FIFO (named pipe)", ...)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_source(path: str) -> BinaryIO:
    """``path`` opened for binary reading, if it is a regular file outside every workspace; never blocks.

    Raises ``NotFound`` (no such file), ``RefusedInput`` (a workspace's file) or ``IngestError``
    (not a regular file, cannot be read), each naming the path.
    """
    refuse_workspace_files(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise NotFound(f"no such transcript: {path}") from None
    except OSError as e:
        raise IngestError(f"{path}: cannot read: {e.strerror or e}", path=path) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise IngestError(f"{path}: is {kind_of(mode)}, not a transcript file; skipped", path=path)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
