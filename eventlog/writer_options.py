"""The options of a log writer, validated once: durability, segment size, group commit, lock, lease.

``LogOptions`` is built by ``Log.open`` (and by ``LogWriter.open`` when called directly) and
checked in its constructor, so a bad value is refused before anything is created or
locked, with one message whichever door it came through. The writer's parts read their
settings from it and never check them again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from eventlog.errors import InvalidEventError

Durability = Literal["fsync", "group", "none"]
DURABILITY_POLICIES: tuple[str, ...] = ("fsync", "group", "none")
DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024
MIN_SEGMENT_BYTES = 1024
DEFAULT_GROUP_COMMIT_INTERVAL = 0.010
DEFAULT_LOCK_TIMEOUT = 10.0
DEFAULT_LEASE_SECONDS = 0.001  # see "Leases" in eventlog.writer_turns
MAX_LEASE_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class LogOptions:
    """How a writer writes; raises ``InvalidEventError`` naming the option when a value is out of range."""

    durability: Durability = "fsync"
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    group_commit_interval: float = DEFAULT_GROUP_COMMIT_INTERVAL
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    lease_seconds: float = DEFAULT_LEASE_SECONDS

    def __post_init__(self) -> None:
        if self.durability not in DURABILITY_POLICIES:
            raise InvalidEventError(f"unknown durability {self.durability!r}; "
                                    f"choose one of {', '.join(DURABILITY_POLICIES)}", field="durability")
        if self.segment_bytes < MIN_SEGMENT_BYTES:
            raise InvalidEventError(f"segment_bytes must be at least {MIN_SEGMENT_BYTES}, got {self.segment_bytes}",
                                    field="segment_bytes")
        if not self.group_commit_interval > 0:
            raise InvalidEventError(f"group_commit_interval must be above 0 seconds, got {self.group_commit_interval}",
                                    field="group_commit_interval")
        if not 0 <= self.lease_seconds <= MAX_LEASE_SECONDS:
            raise InvalidEventError(f"lease_seconds must be between 0 and 1, got {self.lease_seconds}",
                                    field="lease_seconds")

    @property
    def lease(self) -> float:
        """The lease a writer takes: none under ``fsync`` (an fdatasync costs far more than a turn)."""
        return self.lease_seconds if self.durability != "fsync" else 0.0
