"""The history projection: ``memory/history.jsonl``, what feeds Dream.

One line per ``history.appended`` event, oldest first::

    {"cursor": <seq>, "ts", "source", "text", "session_key", "project", "message_ids", "refs"}

The cursor is the event's seq in the log, so cursors strictly increase and every entry
can be traced back to the event (and from there to its session and messages). An entry
received from another device (``eventlog.replication``) is a line like any other, at the
position it arrived, with its origin's time; ``converged()`` is what every device holding the
same entries shows byte for byte.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from eventlog.events import Event, HistoryAppended
from eventlog.fsio import FileSystem
from eventlog.replication.clock import event_time
from projections.base import Projection

HISTORY_FILE = os.path.join("memory", "history.jsonl")


class HistoryEntry(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One line of history.jsonl."""

    cursor: int
    ts: str
    source: str
    text: str
    session_key: str = ""
    project: str = ""
    message_ids: list[str] = []
    refs: dict[str, Any] = {}


_encoder = msgspec.json.Encoder(order="deterministic")  # refs' keys sorted, whatever built the dict


def converged(entries: list[HistoryEntry]) -> bytes:
    """The history every device that holds the same entries shows byte for byte: its lines without their
    cursor (a position in one device's log, Dream's input), ordered by time, source, session and text."""
    rows = sorted(((e.ts, e.source, e.session_key, e.text), _encoder.encode(msgspec.structs.replace(e, cursor=0)))
                  for e in entries)
    return b"".join(line + b"\n" for _k, line in rows)


def read_entries(data: bytes) -> list[HistoryEntry]:
    """The entries of a history.jsonl file's bytes."""
    return [msgspec.json.decode(line, type=HistoryEntry) for line in data.splitlines() if line.strip()]


class HistoryProjection(Projection):
    """``memory/history.jsonl`` (see the module docstring)."""

    name = "history"
    consumes = frozenset({"history.appended"})

    def __init__(self, root: str, fs: FileSystem, *, live: bool = True) -> None:
        super().__init__(root, fs, live=live)
        self.load(None)

    def load(self, state: Any) -> None:
        self.entries: list[HistoryEntry] = [] if state is None else msgspec.convert(state, list[HistoryEntry])
        self.dirty = False

    def state(self) -> Any:
        return self.entries

    def outputs(self) -> list[str]:
        return [HISTORY_FILE] if self.entries else []

    def apply(self, ev: Event) -> None:
        assert isinstance(ev, HistoryAppended)
        self.entries.append(HistoryEntry(
            cursor=ev.seq, ts=event_time(ev), source=ev.source, text=ev.text, session_key=ev.session_key,
            project=ev.project, message_ids=list(ev.message_ids), refs=dict(ev.refs),
        ))
        self.dirty = True

    def since(self, cursor: int) -> list[HistoryEntry]:
        """Entries with a cursor greater than ``cursor``, oldest first."""
        lo, hi = 0, len(self.entries)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.entries[mid].cursor <= cursor:
                lo = mid + 1
            else:
                hi = mid
        return self.entries[lo:]

    def converged(self) -> bytes:
        """``converged(self.entries)``."""
        return converged(self.entries)

    def flush(self) -> None:
        if self.dirty:
            self.write_file(HISTORY_FILE, b"".join(_encoder.encode(e) + b"\n" for e in self.entries))
            self.dirty = False
