"""Short- and long-term memory entries: ``memory/short-term.md`` and ``memory/long-term.md``.

The digest adds short-term entries (``memory.stm.added``); the archive promotes the ones
still in use to long-term (``memory.ltm.promoted``) and drops stale ones
(``memory.stm.dropped``). An entry counts as *used* when an agent chose to use it
(``memory.recalled``: the entry itself, or a message it holds) or when a fact in MEMORY.md cites a message the entry holds (a
``memory.appended`` fact lists the seqs of its source messages; an entry, the seqs of the
messages its diary lines came from). Logs written before facts named their messages
linked entries through history: the old digest fed each entry to Dream as a
``history.appended`` event whose ``refs`` named the entry, and facts listed history
cursors; those links are still folded.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from eventlog.events import Event, HistoryAppended, LtmPromoted, MemoryAppended, MemoryRecalled, StmAdded, StmDropped
from eventlog.fsio import FileSystem
from projections.base import Projection

STM_FILE = os.path.join("memory", "short-term.md")
LTM_FILE = os.path.join("memory", "long-term.md")


class Entry(msgspec.Struct, kw_only=True):
    """One memory entry and where it came from."""

    entry_id: str
    tier: str  # "stm", "ltm" or "dropped"
    text: str
    created_at: str
    date: str = ""
    start: int = 0
    end: int = 0
    session_keys: list[str] = []
    message_seqs: list[int] = []
    recalled: int = 0
    cited_by: list[str] = []  # fact ids
    last_used: str = ""
    reason: str = ""  # why it was promoted or dropped
    seq: int = 0


class EntriesState(msgspec.Struct, kw_only=True):
    """Everything the projection keeps."""

    entries: dict[str, Entry] = {}
    history_to_entry: dict[str, str] = {}  # history cursor (as text) -> entry id


class MemoryEntriesProjection(Projection):
    """Short-term and long-term memory entries (see the module docstring)."""

    name = "memory_entries"
    consumes = frozenset({"memory.stm.added", "memory.ltm.promoted", "memory.stm.dropped", "memory.recalled",
                          "history.appended", "memory.appended"})

    def __init__(self, root: str, fs: FileSystem, *, live: bool = True) -> None:
        super().__init__(root, fs, live=live)
        self.load(None)

    def load(self, state: Any) -> None:
        self.s = EntriesState() if state is None else msgspec.convert(state, EntriesState)
        self.dirty = False

    def state(self) -> Any:
        return self.s

    def outputs(self) -> list[str]:
        return [STM_FILE, LTM_FILE] if self.s.entries else []

    def entries(self, tier: str | None = None) -> list[Entry]:
        """Entries of one tier (or all), oldest first."""
        return [e for e in self.s.entries.values() if tier is None or e.tier == tier]

    def apply(self, ev: Event) -> None:
        match ev:
            case StmAdded():
                self.s.entries[ev.entry_id] = Entry(entry_id=ev.entry_id, tier="stm", text=ev.text, created_at=ev.ts,
                                                    date=ev.date, start=ev.start, end=ev.end,
                                                    session_keys=list(ev.session_keys),
                                                    message_seqs=list(ev.message_seqs), seq=ev.seq)
            case LtmPromoted():
                self._move(ev.entry_id, "ltm", ev.reason)
            case StmDropped():
                self._move(ev.entry_id, "dropped", ev.reason)
            case MemoryRecalled():
                used = [self.s.entries.get(eid) for eid in ev.entry_ids]
                if ev.message_seqs:
                    wanted = set(ev.message_seqs)
                    used += [e for e in self.s.entries.values()
                             if e.tier == "stm" and e.entry_id not in ev.entry_ids and wanted.intersection(e.message_seqs)]
                for e in used:
                    if e is not None:
                        e.recalled += 1
                        e.last_used = ev.ts
            case HistoryAppended():
                eid = ev.refs.get("stm_entry")
                if isinstance(eid, str) and eid in self.s.entries:
                    self.s.history_to_entry[str(ev.seq)] = eid
                return
            case MemoryAppended():
                cited = [self.s.entries.get(self.s.history_to_entry.get(str(cursor), "")) for cursor in ev.sources]
                if ev.source_seqs:
                    wanted = set(ev.source_seqs)
                    cited += [e for e in self.s.entries.values() if e.tier == "stm" and wanted.intersection(e.message_seqs)]
                for e in cited:
                    if e is not None and ev.fact_id not in e.cited_by:
                        e.cited_by.append(ev.fact_id)
                        e.last_used = ev.ts
        self.dirty = True

    def _move(self, entry_id: str, tier: str, reason: str) -> None:
        e = self.s.entries.get(entry_id)
        if e is not None:
            e.tier, e.reason = tier, reason

    def flush(self) -> None:
        if not self.dirty:
            return
        for rel, tier, title in ((STM_FILE, "stm", "Short-term memory"), (LTM_FILE, "ltm", "Long-term memory")):
            items = [f"- [{e.entry_id}] {e.text.strip().splitlines()[0] if e.text.strip() else ''}"[:300]
                     for e in self.entries(tier)]
            self.write_file(rel, (f"# {title}\n\n" + "\n".join(items) + ("\n" if items else "")).encode())
        self.dirty = False
