"""For tests of ``evlog sync`` through the CLI without a database: one shared in-memory event store.

The ``sync_store`` fixture (tests/conftest.py, built by ``shared_store``) points the CLI's store
resolver at one ``MemoryEventStore`` (the contract's definition), so every ``--dsn`` the commands
are given reaches the same store and push/pull/share run end to end. ``home(tmp_path, name)``
makes a workspace.
"""

from __future__ import annotations

from eventlog.app import event_stores as stores
from eventlog.app.workspace import init_workspace
from eventlog.replication.store import MemoryEventStore

DSN = "mysql://evlog@127.0.0.1:3306/evlog"  # never connected to: the resolver answers the shared store


def shared_store(monkeypatch) -> MemoryEventStore:  # noqa: ANN001 - pytest's monkeypatch
    """One store that every DSN the CLI opens resolves to (undone with ``monkeypatch``)."""
    shared = MemoryEventStore()
    monkeypatch.setattr(stores, "_store_class", lambda where: (lambda *a: shared))
    return shared


def home(tmp_path, name: str) -> str:  # noqa: ANN001 - pytest's tmp_path
    """A new workspace under ``tmp_path``."""
    path = str(tmp_path / name)
    init_workspace(path)
    return path
