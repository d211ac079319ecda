"""What a processor may use of a workspace: the narrow ``Context`` protocol and the typed ``Views``.

A processor never receives the whole ``Workspace`` (the composition root, which also
owns configuration files, project registration, flushing threads...): it receives a
``Context``, which ``eventlog.app.workspace.Workspace`` satisfies and a test can fake
(``tests/fake_context.py``). It gives:

* ``log`` (read records, dedup lookups, the write turn) and ``append`` (one atomic batch,
  folded into the views at once);
* ``config``: the settings processors read (``ProcessorConfig``);
* the typed projection ``views`` (``Views``: one field per projection, no name lookup),
  as caught up as the last ``catch_up()``; ``catch_up()`` reads what other writers
  appended and returns them. The per-view properties (``sessions``, ``memory``...) are the
  same objects, caught up on access, as the workspace has always given them;
* ``lock`` (this process's projections), ``processor_lock`` (one run of a processor at a
  time, across processes) and ``try_processor_lock`` (take it only if free: "busy" otherwise).

Nothing here imports the app layer: processors depend on this protocol, not on the workspace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import threading

    from eventlog.events import Event
    from eventlog.log import Log
    from projections.base import Projection
    from projections.compaction import CompactionProjection
    from projections.diary import DiaryProjection
    from projections.dream_runs import DreamRunsProjection
    from projections.history import HistoryProjection
    from projections.memory import MemoryProjection
    from projections.memory_entries import MemoryEntriesProjection
    from projections.offsets import OffsetsProjection
    from projections.sessions import SessionsProjection

T = TypeVar("T")
P = TypeVar("P", bound="Projection")


@dataclass(frozen=True)
class Views:
    """The workspace's projections, one typed field each (built once per projector)."""

    sessions: SessionsProjection
    history: HistoryProjection
    memory: MemoryProjection
    diary: DiaryProjection
    offsets: OffsetsProjection
    memory_entries: MemoryEntriesProjection
    dream_runs: DreamRunsProjection
    compaction: CompactionProjection

    @classmethod
    def of(cls, projections: Sequence[Projection]) -> Views:
        """Pick each view out of a projector's projections by its type (a missing one is a ValueError)."""
        from projections.compaction import CompactionProjection
        from projections.diary import DiaryProjection
        from projections.dream_runs import DreamRunsProjection
        from projections.history import HistoryProjection
        from projections.memory import MemoryProjection
        from projections.memory_entries import MemoryEntriesProjection
        from projections.offsets import OffsetsProjection
        from projections.sessions import SessionsProjection

        def one(kind: type[P]) -> P:
            match = [p for p in projections if isinstance(p, kind)]
            if len(match) != 1:
                raise ValueError(f"expected one {kind.__name__} among the projections, found {len(match)}")
            return match[0]

        return cls(sessions=one(SessionsProjection), history=one(HistoryProjection), memory=one(MemoryProjection),
                   diary=one(DiaryProjection), offsets=one(OffsetsProjection),
                   memory_entries=one(MemoryEntriesProjection), dream_runs=one(DreamRunsProjection),
                   compaction=one(CompactionProjection))


class ProcessorConfig(Protocol):
    """The settings processors read (``eventlog.app.workspace.Config`` has them all)."""

    diary_budget_bytes: int
    digest_batch_bytes: int
    stale_after_days: float
    dream_token_budget: int
    dream_daily_token_budget: int
    idle_minutes: float
    memory_max_lines: int
    memory_max_bytes: int
    schedule: dict[str, float]


class Context(Protocol):
    """What a processor receives (see the module docstring); ``Workspace`` satisfies it."""

    home: str
    log: Log
    lock: threading.RLock

    @property
    def config(self) -> ProcessorConfig: ...

    @property
    def writable(self) -> bool: ...

    @property
    def views(self) -> Views: ...

    def catch_up(self) -> Views: ...

    def append(self, events: Sequence[Event]) -> list[int]: ...

    def flush(self) -> None: ...

    def read_projection(self, fn: Callable[[], T]) -> T: ...

    def processor_lock(self, name: str) -> AbstractContextManager[None]: ...

    def try_processor_lock(self, name: str) -> AbstractContextManager[bool]: ...

    def path(self, *parts: str) -> str: ...

    # the views one at a time, caught up on access (what most processors read)
    @property
    def sessions(self) -> SessionsProjection: ...

    @property
    def history(self) -> HistoryProjection: ...

    @property
    def memory(self) -> MemoryProjection: ...

    @property
    def diary(self) -> DiaryProjection: ...

    @property
    def offsets(self) -> OffsetsProjection: ...

    @property
    def memory_entries(self) -> MemoryEntriesProjection: ...

    @property
    def dream_runs(self) -> DreamRunsProjection: ...

    @property
    def compaction(self) -> CompactionProjection: ...

