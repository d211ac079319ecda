"""Two processes creating the recall index at once (found by tools/chaos.py).

The daemon's recall job and an MCP ``recall`` both open ``state/recall.sqlite``; when the
file is new (a fresh workspace, or after a rebuild removed it) both saw it empty and both
ran its DDL, and the second died with ``table meta already exists``. The creation is now one
``BEGIN IMMEDIATE`` transaction, and whoever finds the tables made meanwhile uses them.
"""

from __future__ import annotations

import sqlite3
import threading

from projections.recall import index as recall_index
from projections.recall.index import RecallIndex


class _Paused:
    """A connection whose first ``executescript`` (the DDL) waits until both creators got there."""

    def __init__(self, db: sqlite3.Connection, barrier: threading.Barrier) -> None:
        self._db, self._barrier = db, barrier

    def executescript(self, script: str) -> object:
        self._barrier.wait(timeout=10)
        return self._db.executescript(script)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def test_two_creators_of_a_new_index_at_once_both_open_it(tmp_path, monkeypatch):
    path = tmp_path / "recall.sqlite"
    barrier = threading.Barrier(2)
    real_connect = sqlite3.connect
    monkeypatch.setattr(recall_index.sqlite3, "connect",
                        lambda *a, **k: _Paused(real_connect(*a, **k), barrier))
    opened: list[RecallIndex] = []
    errors: list[BaseException] = []

    def open_index() -> None:
        try:
            opened.append(RecallIndex(path))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=open_index) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    monkeypatch.undo()
    try:
        assert errors == [] and len(opened) == 2
    finally:
        for ix in opened:
            ix.close()
    with RecallIndex(path) as ix:
        assert ix.seq == 0



class _SwitchRefusedOnce:
    """A connection whose switch to WAL is refused once, as SQLite refuses a second creator's switch
    while the first one's WAL connection is open ("database is locked" at once, no busy wait)."""

    refused = 0

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, *args: object) -> object:
        if sql == "PRAGMA journal_mode = WAL" and not _SwitchRefusedOnce.refused:
            _SwitchRefusedOnce.refused += 1
            raise sqlite3.OperationalError("database is locked")
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def test_a_creator_whose_switch_to_wal_is_refused_opens_the_file_again(tmp_path, monkeypatch):
    """The race above failed in CI (and 2 runs in 12 here) with that refusal: the second creator
    now opens the file again (it is WAL by then) instead of failing."""
    real_connect = sqlite3.connect
    monkeypatch.setattr(_SwitchRefusedOnce, "refused", 0)
    monkeypatch.setattr(recall_index.sqlite3, "connect", lambda *a, **k: _SwitchRefusedOnce(real_connect(*a, **k)))
    ix = RecallIndex(tmp_path / "recall.sqlite")
    refused = _SwitchRefusedOnce.refused
    monkeypatch.undo()
    try:
        assert refused == 1 and ix.stats()["messages"] == 0 and ix.verify() == []
    finally:
        ix.close()


def test_the_embedding_cache_opens_when_its_switch_to_wal_is_refused(tmp_path, monkeypatch):
    """The same refusal for the other SQLite file recall creates (the daemon's embed child and a warm server)."""
    from projections.recall import embeddings

    real_connect = sqlite3.connect
    monkeypatch.setattr(_SwitchRefusedOnce, "refused", 0)
    monkeypatch.setattr(embeddings.sqlite3, "connect", lambda *a, **k: _SwitchRefusedOnce(real_connect(*a, **k)))
    cache = embeddings.EmbeddingCache(tmp_path / "emb.sqlite")
    refused = _SwitchRefusedOnce.refused
    monkeypatch.undo()
    assert refused == 1 and cache.covered("m") == 0
