"""Digest: diary -> short-term memory entries, incrementally by the diary's logical offset.

For every day's diary the digest keeps how far it has read, as a *logical* byte offset
(see ``projections.diary``: offsets survive trims). Each run first brings the diary
files up to date, then validates that position against the file: the file's size must
be what the projection says, the position must lie in the diary's ``[start, end)`` and
sit at a line boundary. A position before ``start`` means a trim dropped bytes the
digest had not read: that loss was already recorded by the ``diary.trimmed`` event, and
the digest records an ``offset.reset`` pointing at it and moves on to ``start``. Any
other position that does not hold is also reset with a recorded reason (to the start of
the diary: re-reading is preferred to skipping). Nothing is re-read or skipped silently.

Unread bytes are taken in batches of at most ``digest_batch_bytes`` (50 KB) cut at line
boundaries (a longer single line is a batch of its own). Each batch becomes, in one
atomic append: a ``memory.stm.added`` entry, one ``history.appended`` per session with
that session's user lines (what Dream reads; ``refs`` name the entry and diary range),
and a ``diary.digested`` event that moves the position.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import re

from eventlog.errors import EvlogError
from eventlog.events import DiaryDigested, Event, HistoryAppended, OffsetReset, StmAdded
from processors.runner import RunReport
from projections.diary import DiaryDay, diary_file

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace

HISTORY_CHARS = 1000
STM_CHARS = 4000
_LINE = re.compile(r"^(\d\d:\d\d:\d\d) \[(.*?)\] (\w+): (.*)$")


def run_digest(ws: Workspace) -> RunReport:
    """Digest every unread diary byte (see the module docstring)."""
    report = RunReport("digest")
    with ws.lock:
        ws.flush()
        diary = ws.diary
        offsets = ws.offsets
        report.offset_before = sum(offsets.s.digest.values())  # type: ignore[attr-defined]
        for date in sorted(diary.days):  # type: ignore[attr-defined]
            _digest_day(ws, diary.days[date], offsets.s.digest.get(date), report)  # type: ignore[attr-defined]
        report.offset_after = sum(ws.offsets.s.digest.values())  # type: ignore[attr-defined]
    return report


def _digest_day(ws: Workspace, day: DiaryDay, pos: int | None, report: RunReport) -> None:
    path = ws.path(diary_file(day.date))
    data = b""
    if day.size:
        with open(path, "rb") as f:
            data = f.read()
        if len(data) != day.size:
            raise EvlogError(f"{path}: {len(data)} bytes on disk where the diary projection says {day.size}; "
                             "it changed while the digest ran (or by hand): run 'evlog replay'")
    pos, reset = _validate(day, data, pos)
    events: list[Event] = [reset] if reset else []
    if reset:
        report.resets.append(reset.reason)
        report.lost_bytes += reset.lost_bytes
    while pos < day.end:
        rel = pos - day.start
        cut = _batch_end(data, rel, ws.config.digest_batch_bytes)
        chunk = data[rel:cut].decode("utf-8", "replace")
        sources = ws.diary.sources_between(day.date, pos, day.start + cut)  # type: ignore[attr-defined]
        projects = {k: s.project for k, s in ws.sessions.index.items()}  # type: ignore[attr-defined]
        events.extend(_batch_events(day.date, pos, day.start + cut, chunk, sources, projects))
        ws.append(events)
        report.count(events)
        report.entries_written += sum(1 for e in events if isinstance(e, StmAdded))
        report.events_read += chunk.count("\n")
        events = []
        pos = day.start + cut
    if events:
        ws.append(events)


def _validate(day: DiaryDay, data: bytes, pos: int | None) -> tuple[int, OffsetReset | None]:
    """Where to continue reading a day's diary, and the reset to record if ``pos`` did not hold."""
    if pos is None:
        pos = 0  # never read: from the diary's logical beginning
    if day.start <= pos <= day.end and (pos == day.start or data[pos - day.start - 1 : pos - day.start] == b"\n"):
        return pos, None
    if pos < day.start:
        why = (f"diary {day.date}: bytes {pos}..{day.start} were trimmed before the digest read them "
               "(recorded as lost by diary.trimmed)")
        to = day.start
    elif pos > day.end:
        why = f"diary {day.date}: position {pos} is past the diary's end {day.end}; reading it again from its start"
        to = day.start
    else:
        nl = data.find(b"\n", pos - day.start)
        to = day.start + nl + 1 if nl >= 0 else day.end
        why = f"diary {day.date}: position {pos} is inside a line; the rest of that line ({to - pos} bytes) is skipped"
    lost = to - pos if day.start < pos < day.end else 0  # trims record their own loss; re-reads lose nothing
    return to, OffsetReset(processor="digest", reason=why, policy="by-offset", date=day.date, from_offset=pos,
                           to_offset=to, lost_bytes=lost)


def _batch_end(data: bytes, rel: int, limit: int) -> int:
    """End (file position) of the batch starting at ``rel``: whole lines, at most ``limit`` bytes."""
    if len(data) - rel <= limit:
        return len(data)
    cut = data.rfind(b"\n", rel, rel + limit) + 1
    if cut <= rel:  # one line longer than the limit: it is a batch of its own
        cut = data.find(b"\n", rel) + 1 or len(data)
    return cut


def _batch_events(date: str, start: int, end: int, chunk: str, sources: list[int],
                  projects: dict[str, str]) -> list[Event]:
    entry_id = f"stm-{date}-{start}"
    lines = [ln for ln in chunk.splitlines() if ln.strip()]
    by_session: dict[str, list[str]] = {}
    seqs: dict[str, list[int]] = {}
    sessions: list[str] = []
    for i, ln in enumerate(lines):
        m = _LINE.match(ln)
        if not m:
            continue
        _time, session, role, text = m.groups()
        if session not in by_session:
            by_session[session] = []
            seqs[session] = []
            sessions.append(session)
        if role == "user":
            by_session[session].append(text.replace(" ⏎ ", "\n"))  # the diary joins a message's lines
            if i < len(sources):
                seqs[session].append(sources[i])
    summary = "\n".join(ln[:300] for ln in lines)[:STM_CHARS]
    events: list[Event] = [StmAdded(entry_id=entry_id, text=summary, date=date, start=start, end=end,
                                    session_keys=sessions)]
    for session in sessions:
        said = by_session[session]
        if said:
            events.append(HistoryAppended(text="\n".join(said)[:HISTORY_CHARS], source="digest", session_key=session,
                                          project=projects.get(session, ""),
                                          refs={"stm_entry": entry_id, "date": date, "start": start, "end": end,
                                                "message_seqs": seqs[session]}))
    events.append(DiaryDigested(date=date, start=start, end=end, entry_id=entry_id))
    return events
