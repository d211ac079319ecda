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
