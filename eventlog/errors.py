"""Every exception the evlog library raises on purpose.

The command line turns these (and only these) into a one-line message and an exit
status (see ``eventlog.cli``); anything else is a bug and keeps its traceback.
Backend exceptions (OSError, PyMySQL, anthropic) are re-raised as one of these with
``from e`` where the caller can do something about them.
"""

from __future__ import annotations


class EvlogError(Exception):
    """Base class of every error evlog raises on purpose."""


class WorkspaceNotFound(EvlogError):
    """The workspace directory does not exist or was never initialised."""


class ConfigError(EvlogError):
    """The workspace configuration or an argument is invalid."""


class LockedError(EvlogError):
    """Another process holds the workspace's writer lock."""


class CorruptionError(EvlogError):
    """The log holds damaged bytes that recovery may not cut off silently."""

    def __init__(self, message: str, *, segment: str = "", offset: int = -1, seq: int = -1):
        super().__init__(message)
        self.segment = segment
        self.offset = offset
        self.seq = seq


class WriterClosedError(EvlogError):
    """The writer failed an I/O call (or was closed) and refuses appends until reopened."""


class LogIOError(EvlogError):
    """An I/O call failed during an append; it was not acknowledged and the writer is now closed."""


class ProjectionWriteError(EvlogError):
    """The log holds the events, but writing projection files failed (they are written again later)."""


class ConflictError(EvlogError):
    """An append's expected last seq did not match the log's (optimistic concurrency)."""


class DuplicateInBatchError(EvlogError):
    """An atomic batch carried the same dedup key twice; nothing was written."""


class InvalidEventError(EvlogError):
    """An event given to the log (or read from input) does not fit the event catalogue."""

    def __init__(self, message: str, *, source: str = "", line: int = 0, field: str = ""):
        super().__init__(message)
        self.source = source
        self.line = line
        self.field = field


class OffsetInvalidError(EvlogError):
    """A processor offset does not hold and the processor's policy is 'error'."""


class IngestError(EvlogError):
    """A transcript file could not be ingested (names path, line and reason)."""

    def __init__(self, message: str, *, path: str = "", line: int = 0):
        super().__init__(message)
        self.path = path
        self.line = line


class NotFound(EvlogError):
    """A session, fact or other named thing does not exist."""


class LLMError(EvlogError):
    """The language model could not be reached or answered unusably."""


class BackendError(EvlogError):
    """A storage backend (MySQL) failed; the message never contains credentials."""


class RefusedInput(IngestError):
    """An input path is one evlog itself writes (a workspace's files): ingesting it would duplicate messages."""
