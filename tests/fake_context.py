"""A fake ``processors.context.Context``: a real log and the projections, nothing else of a workspace.

No ``evlog.json``, no flushing thread, no erasure roll-forward, no project registration,
no redaction: what a processor may rely on is exactly the protocol, and a follower that
reached past it (into the ``Workspace``) would fail here. ``fail_appends_after`` makes the
n-th next append raise before writing (a crash between a run's steps).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from eventlog.events import Event
from eventlog.fsio import OS_FS
from eventlog.lock import FileLock
from eventlog.log import Log
from processors.context import Views
from projections import default_projections
from projections.projector import Projector

T = TypeVar("T")


class Crash(RuntimeError):
    """The fake's append failed on purpose (nothing of that batch was written)."""


@dataclass
class FakeConfig:
    """The settings processors read (``processors.context.ProcessorConfig``)."""

    diary_budget_bytes: int = 200_000
    digest_batch_bytes: int = 50_000
    stale_after_days: float = 7.0
    dream_token_budget: int = 20_000
    dream_daily_token_budget: int = 400_000
    idle_minutes: float = 30.0
    memory_max_lines: int = 200
    memory_max_bytes: int = 25_000
    schedule: dict[str, float] = field(default_factory=dict)


class FakeContext:
    """A log in ``root/log`` and the default projections rooted at ``root`` (see the module docstring)."""

    def __init__(self, root: str, config: FakeConfig | None = None) -> None:
        self.home = root
        self.log = Log.open(os.path.join(root, "log"), writable=True, create=True, durability="none")
        self.lock = threading.RLock()
        self._config = config or FakeConfig()
        self._projector = Projector(self.log, root, default_projections(root, OS_FS, live=True), OS_FS, checkpoint=False)
        self._views = Views.of(self._projector.projections)
        self.fail_appends_after: int | None = None
        self.appends = 0

    @property
    def config(self) -> FakeConfig:
        return self._config

    @property
    def writable(self) -> bool:
        return True

    @property
    def views(self) -> Views:
        return self._views

    def catch_up(self) -> Views:
        with self.lock:
            self._projector.catch_up()
            return self._views

    def append(self, events: Sequence[Event]) -> list[int]:
        with self.lock:
            if self.fail_appends_after is not None:
                if self.fail_appends_after <= 0:
                    raise Crash("append refused by the test")
                self.fail_appends_after -= 1
            seqs = self.log.append_batch(list(events))
            self.appends += 1
            self._projector.catch_up()
            return seqs

    def flush(self) -> None:
        with self.lock:
            self._projector.flush()

    def read_projection(self, fn: Callable[[], T]) -> T:
        self.flush()
        return fn()

    @contextmanager
    def processor_lock(self, name: str) -> Iterator[None]:
        lock = FileLock(self.path("locks", f"{name}.lock"))
        lock.acquire(5.0)
        try:
            yield
        finally:
            lock.close()

    @contextmanager
    def try_processor_lock(self, name: str) -> Iterator[bool]:
        lock = FileLock(self.path("locks", f"{name}.lock"))
        try:
            yield lock.try_acquire()
        finally:
            lock.close()

    def path(self, *parts: str) -> str:
        return os.path.join(self.home, *parts)

    def close(self) -> None:
        self.log.close()

    @property
    def sessions(self):  # noqa: ANN201
        return self.catch_up().sessions

    @property
    def history(self):  # noqa: ANN201
        return self.catch_up().history

    @property
    def memory(self):  # noqa: ANN201
        return self.catch_up().memory

    @property
    def diary(self):  # noqa: ANN201
        return self.catch_up().diary

    @property
    def offsets(self):  # noqa: ANN201
        return self.catch_up().offsets

    @property
    def memory_entries(self):  # noqa: ANN201
        return self.catch_up().memory_entries

    @property
    def dream_runs(self):  # noqa: ANN201
        return self.catch_up().dream_runs

    @property
    def compaction(self):  # noqa: ANN201
        return self.catch_up().compaction
