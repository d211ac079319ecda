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

The state is bounded by the number of entries, not by what they hold (issue 25): an
entry's text stays in the log, in its ``memory.stm.added`` event (``Entry.seq``), and the
state keeps only the line the entry gets in its tier's file; the seqs of its messages are
kept as runs of consecutive seqs (a day's lines come from messages in log order, so an
entry holds a few runs, not one number per message); session keys are interned, one
string per session however many entries name it. ``entries_with_text`` reads the texts
back from the log for whoever shows them (``evlog memory --tier``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from eventlog.events import Event, HistoryAppended, LtmPromoted, MemoryAppended, MemoryRecalled, StmAdded, StmDropped
from eventlog.fsio import FileSystem
from projections.base import Projection

if TYPE_CHECKING:
    from eventlog.log import Log

STM_FILE = os.path.join("memory", "short-term.md")
LTM_FILE = os.path.join("memory", "long-term.md")


ITEM_CHARS = 300  # an entry's line in memory/*.md is cut at this many characters


def seq_runs(seqs: Iterable[int]) -> list[int]:
    """``seqs`` as ``[first, count, first, count, ...]``: runs of consecutive seqs, in their order."""
    runs: list[int] = []
    for s in seqs:
        if runs and s == runs[-2] + runs[-1]:
            runs[-1] += 1
        else:
            runs += (s, 1)
    return runs


def expand_runs(runs: list[int]) -> list[int]:
    """The seqs ``seq_runs`` made ``runs`` of (the same list, order and repeats kept)."""
    return [s for i in range(0, len(runs), 2) for s in range(runs[i], runs[i] + runs[i + 1])]


def runs_hold_any(runs: list[int], wanted: set[int]) -> bool:
    """True if a seq of ``wanted`` is in one of ``runs``."""
    for i in range(0, len(runs), 2):
        first, end = runs[i], runs[i] + runs[i + 1]
        if end - first <= len(wanted):
            if not wanted.isdisjoint(range(first, end)):
                return True
        elif any(first <= w < end for w in wanted):
            return True
    return False


def file_item(entry_id: str, text: str) -> str:
    """An entry's line in its tier's file: its id and the first line of its text."""
    return f"- [{entry_id}] {text.strip().splitlines()[0] if text.strip() else ''}"[:ITEM_CHARS]


class Entry(msgspec.Struct, kw_only=True):
    """One memory entry and where it came from; its text is in the log (event ``seq``)."""

    entry_id: str
    tier: str  # "stm", "ltm" or "dropped"
    item: str  # its line in its tier's file (``file_item``)
    created_at: str
    date: str = ""
    start: int = 0
    end: int = 0
    session_keys: list[str] = []
    runs: list[int] = []  # the seqs of its messages (``seq_runs``)
    recalled: int = 0
    cited_by: list[str] = []  # fact ids
    last_used: str = ""
    reason: str = ""  # why it was promoted or dropped
    seq: int = 0  # its memory.stm.added event

    @property
    def message_seqs(self) -> list[int]:
        """The seqs of the messages its diary lines came from."""
        return expand_runs(self.runs)


class EntryWithText(msgspec.Struct, kw_only=True):
    """An entry as ``evlog memory --tier ... --json`` shows it: with its text, read from the log."""

    entry_id: str
    tier: str
    text: str
    created_at: str
    date: str = ""
    start: int = 0
    end: int = 0
    session_keys: list[str] = []
    message_seqs: list[int] = []
    recalled: int = 0
    cited_by: list[str] = []
    last_used: str = ""
    reason: str = ""
    seq: int = 0


def entries_with_text(entries: Iterable[Entry], log: Log) -> Iterator[EntryWithText]:
    """``entries`` with their texts, each read from its event in ``log`` (a log that no longer holds the
    event, trimmed before the entry's seq, leaves its file line's text)."""
    for e in entries:
        rec = log.find(e.seq) if e.seq else None
        ev = rec.event if rec is not None else None
        text = ev.text if isinstance(ev, StmAdded) and ev.entry_id == e.entry_id else e.item.partition("] ")[2]
        yield EntryWithText(entry_id=e.entry_id, tier=e.tier, text=text, created_at=e.created_at, date=e.date,
                            start=e.start, end=e.end, session_keys=e.session_keys, message_seqs=e.message_seqs,
                            recalled=e.recalled, cited_by=e.cited_by, last_used=e.last_used, reason=e.reason, seq=e.seq)


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
        for e in self.s.entries.values():
            e.session_keys = [sys.intern(k) for k in e.session_keys]
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
                self.s.entries[ev.entry_id] = Entry(entry_id=ev.entry_id, tier="stm", item=file_item(ev.entry_id, ev.text),
                                                    created_at=ev.ts, date=ev.date, start=ev.start, end=ev.end,
                                                    session_keys=[sys.intern(k) for k in ev.session_keys],
                                                    runs=seq_runs(ev.message_seqs), seq=ev.seq)
            case LtmPromoted():
                self._move(ev.entry_id, "ltm", ev.reason)
            case StmDropped():
                self._move(ev.entry_id, "dropped", ev.reason)
            case MemoryRecalled():
                used = [self.s.entries.get(eid) for eid in ev.entry_ids]
                if ev.message_seqs:
                    wanted = set(ev.message_seqs)
                    used += [e for e in self.s.entries.values()
                             if e.tier == "stm" and e.entry_id not in ev.entry_ids and runs_hold_any(e.runs, wanted)]
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
                    cited += [e for e in self.s.entries.values() if e.tier == "stm" and runs_hold_any(e.runs, wanted)]
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
            items = [e.item for e in self.entries(tier)]
            self.write_file(rel, (f"# {title}\n\n" + "\n".join(items) + ("\n" if items else "")).encode())
        self.dirty = False
