"""``FoldingLog``: a workspace's log as a bulk writer (``ingest_paths``) uses it, with every batch
folded into the workspace's projections as it is written.

``ingest_paths`` takes any object with the ``Log`` calls it makes (``turn``, ``append_batch``,
``lookup_dedup``, ``find``, ``last_seq``, ``sync``). Given the plain log, what it appended is
read back and decoded when the workspace closes (its projections catch up: ~a quarter of an
ingest's time); given this facade, each batch goes through ``Workspace.append``, which folds
the events it just wrote without reading them back. A turn takes the workspace's lock before
the log's write lock, the order every other path takes them in (the background flush holds
the workspace's lock and then asks the log), so the two never wait for each other.

Memory stays bounded whether or not the background flush gets the lock between two files (a
thread that releases a lock may take it again before a waiting one runs): after every
``FLUSH_EVERY`` events folded, the projection files are written at the end of that turn, the
bound a writer catching up uses (``projections.projector.REBUILD_FLUSH_EVENTS``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

#: events folded between two writes of the projection files (at most; the background flush may write sooner)
FLUSH_EVERY = 200_000

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace
    from eventlog.events import Event
    from eventlog.reader import Record


class FoldingLog:
    """The calls ``ingest_paths`` makes on a log, on ``ws.log``, with appends folded in memory."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.unflushed = 0  # events folded since this facade last wrote the projection files
        ws.catch_up()  # built once: every batch after this is folded as it is written

    @contextmanager
    def turn(self) -> Iterator[FoldingLog]:
        """The workspace's lock, then the log's write lock (see the module docstring); the projection
        files are written after it when ``FLUSH_EVERY`` events were folded since they last were."""
        with self.ws.lock, self.ws.log.turn():
            yield self
        if self.unflushed >= FLUSH_EVERY:
            self.unflushed = 0
            self.ws.flush()

    def append_batch(self, events: Sequence[Event], *, sync: bool = True) -> list[int]:
        """``Log.append_batch``, and the batch folded into the projections (``Workspace.append``)."""
        seqs = self.ws.append(list(events), sync=sync)
        self.unflushed += len(seqs)
        return seqs

    def lookup_dedup(self, key: str) -> int | None:
        """``Log.lookup_dedup``."""
        return self.ws.log.lookup_dedup(key)

    def find(self, seq: int) -> Record | None:
        """``Log.find``."""
        return self.ws.log.find(seq)

    @property
    def last_seq(self) -> int:
        """``Log.last_seq``."""
        return self.ws.log.last_seq

    def sync(self) -> None:
        """``Log.sync``."""
        self.ws.log.sync()
