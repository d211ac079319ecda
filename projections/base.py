"""What a projection is: a pure fold of log events into files, with a saved state.

A projection keeps an in-memory state that ``apply(event)`` updates (cheaply: no file
I/O) and ``flush()`` renders into its files, each replaced atomically. ``state()``
returns the state as msgspec-encodable data and ``load(state)`` restores it; the
``Projector`` saves all states with the seq they cover in one checkpoint, so a restart
continues from there instead of from seq 1. Because files are rendered from the state
alone, applying the same events to the same state always writes the same bytes: that
is what makes incremental updates and a full replay byte-identical (INVARIANTS I8).

``outputs()`` lists the files a projection owns (relative to its root), so ``replay
--check`` can compare them and a rebuild can remove files that should no longer exist.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import msgspec

from eventlog.events import Event
from eventlog.fsio import FileSystem


class ProjectionDrift(Exception):  # noqa: N818 - internal signal, never leaves the projector
    """A projection file does not match the saved state; the projector rebuilds from the log."""


class Projection(ABC):
    """Base class; see the module docstring for the contract."""

    name: ClassVar[str]
    #: Event types this projection reacts to (the projector skips others cheaply).
    consumes: ClassVar[frozenset[str]]
    #: The type ``state()`` returns, when the checkpoint's JSON can be decoded straight into it (one pass,
    #: where decoding to dicts and lists and then ``load``'s ``msgspec.convert`` took two); None: plain JSON.
    checkpoint_type: ClassVar[Any] = None

    def __init__(self, root: str, fs: FileSystem, *, live: bool = True) -> None:
        self.root = root
        self.fs = fs
        self.live = live  # False when rebuilding elsewhere (replay --to/--check): no side effects outside root

    @abstractmethod
    def apply(self, ev: Event) -> None:
        """Fold one event into the in-memory state (no file I/O)."""

    @abstractmethod
    def flush(self) -> None:
        """Write every file whose content changed since the last flush, atomically."""

    @abstractmethod
    def state(self) -> Any:
        """The state to checkpoint (msgspec-encodable)."""

    @abstractmethod
    def load(self, state: Any) -> None:
        """Restore a state returned by ``state()`` (raises ValueError/TypeError if unusable)."""

    @abstractmethod
    def outputs(self) -> list[str]:
        """Relative paths of every file this projection should hold now."""

    def owned_dirs(self) -> list[str]:
        """Directories (relative) whose files all belong to this projection."""
        return []

    @classmethod
    def fresh_like(cls, other: Projection, root: str) -> Projection:
        """An empty projection of the same kind and settings rooted at ``root``, with no side effects outside it."""
        return cls(root, other.fs, live=False)

    def after_rebuild(self) -> None:  # noqa: B027 - optional hook
        """Called when a rebuild swapped fresh files in (e.g. to refresh copies kept outside the root)."""

    def path(self, *parts: str) -> str:
        """An absolute path under the projection root."""
        return os.path.join(self.root, *parts)

    def write_file(self, rel: str, data: bytes) -> None:
        """Replace one output file atomically (creating its directory)."""
        self.fs.write_file(self.path(rel), data)

    def remove_file(self, rel: str) -> None:
        """Delete one output file if it exists."""
        try:
            self.fs.unlink(self.path(rel))
        except FileNotFoundError:
            pass


class StateProjection(Projection):
    """A projection with no files: just a msgspec ``state_type`` kept as ``self.s``.

    For state the processors and commands read (offsets, Dream's runs, backoffs); it is
    checkpointed and rebuilt like any projection.
    """

    state_type: ClassVar[type]

    def __init__(self, root: str, fs: FileSystem, *, live: bool = True) -> None:
        super().__init__(root, fs, live=live)
        self.load(None)

    def load(self, state: Any) -> None:
        self.s = self.state_type() if state is None else msgspec.convert(state, self.state_type)

    def state(self) -> Any:
        return self.s

    def outputs(self) -> list[str]:
        return []

    def flush(self) -> None:
        pass
