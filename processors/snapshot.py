"""Snapshot: messages -> lines of the day's diary, deduplicated, within the byte budget.

Every ``message.appended`` becomes one line (``HH:MM:SS [session] role: content``, content
on one line, cut at ``LINE_CHARS`` characters) in the diary of the message's UTC date. A
step writes the lines of each day as ``diary.lines`` events of up to ``EVENT_LINE_BYTES``
of lines each (one event per line, ``diary.appended``, was ~300 bytes of framing and keys
per message, and as many events to redact, frame and fold). The event also carries what
each line came from (session key, message id, role, the message's seq), so readers of the
diary never parse its text. Logs holding ``diary.appended`` events fold as they did.

The line's dedup key is ``xxh3_128`` of the canonical message (see ``canonical_message``:
session key, message id, role, content, timestamp, tool calls); the event lists it in
``dedup_keys``, which the log indexes to the event's seq and never accepts twice. So the
hash set lives in the log's dedup index, not in the diary: re-imports, offset resets and diary trims can never
bring a message into the diary twice (the seed's 2.6 MB diary with 114 repeated
snapshots came from deduplicating against the file after it had been trimmed), while
distinct messages that happen to read alike (parallel tool calls at the same time, two
"No files found" results) each keep their line. Logs written before key version 2 keyed
lines without the message id and tool calls; for messages the diary had already seen
under those keys (up to ``DiaryProjection.legacy_horizon``) the old key is checked too,
so an old log re-snapshotted after an offset reset gains no duplicate line.

In the same atomic batch the step trims every diary that would exceed its byte budget
(whole lines, oldest first, the newest line always kept; ``diary.trimmed`` says what
went), so a diary is never over budget, not even between two steps. The digest reads
the diary events, not the file, so a trim never takes anything from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import xxhash

from eventlog import codec
from eventlog.events import DiaryLines, DiaryTrimmed, Event, MessageAppended
from eventlog.timeutil import source_time
from processors.runner import Processor, RunReport

if TYPE_CHECKING:
    from processors.context import Context

LINE_CHARS = 2000
EVENT_LINE_BYTES = 64 * 1024  # a diary.lines event closes once its lines hold this many bytes
_h128 = xxhash.xxh3_128_intdigest
_canonical_json = codec.canonical_json
_HASH128_PREFIX = codec.HASH128_PREFIX


class _Day:
    """What a step has gathered for one day: every new line's byte length (for the trim) and the lines
    not yet in a ``diary.lines`` event, one row each (line, session key, message id, seq, role, key)."""

    __slots__ = ("lengths", "rows", "nbytes")

    def __init__(self) -> None:
        self.lengths: list[int] = []
        self.rows: list[tuple[str, str, str, int, str, str]] = []
        self.nbytes = 0  # bytes of ``rows``' lines

    def event(self, date: str) -> DiaryLines:
        """The rows as one event; the day then gathers the next event's rows."""
        lines, session_keys, message_ids, source_seqs, roles, keys = (list(column) for column in zip(*self.rows, strict=True))
        self.rows = []
        self.nbytes = 0
        return DiaryLines(date=date, lines=lines, session_keys=session_keys, message_ids=message_ids,
                          source_seqs=source_seqs, roles=roles, dedup_keys=keys)


def canonical_message(ev: MessageAppended) -> list:
    """What makes two messages "the same" for the diary (key version 2).

    ``["diary/2", session key, message id, role, content, timestamp, tool calls]``: its
    canonical JSON (``codec.canonical_json``) is what the xxh3_128 dedup hash is taken
    over; changing this form changes every hash (hence the version inside it).
    """
    return ["diary/2", ev.session_key, ev.message_id, ev.role, ev.content, ev.timestamp, ev.tool_calls]


def legacy_canonical_message(ev: MessageAppended) -> list[str]:
    """The key version 1 form (before message ids and tool calls were part of it)."""
    return [ev.session_key, ev.role, ev.content, ev.timestamp]


def diary_line(ev: MessageAppended, when: str) -> str:
    """The readable diary line of a message (``when`` is its normalised UTC time)."""
    text = ev.content.strip()
    if not text:
        names = _tool_names(ev)
        text = f"[tool calls: {', '.join(names)}]" if names else "(no text)"
    if not text.isprintable():  # a printable text is one line, its only white space " " (and stripped): as it is
        text = " ⏎ ".join(filter(None, map(str.strip, text.splitlines()))) or "(no text)"
    if len(text) > LINE_CHARS:
        text = text[: LINE_CHARS - 1] + "…"
    key, role = ev.session_key, ev.role
    return f"{when[11:19]} [{key if key.isprintable() else _one_line(key)}] {role if role.isprintable() else _one_line(role)}: {text}"


def _one_line(text: str) -> str:
    """``text`` without line breaks (a diary line is one line of its file)."""
    return text.replace("\r", " ").replace("\n", " ")


def _tool_names(ev: MessageAppended) -> list[str]:
    names = []
    for call in ev.tool_calls or []:
        if isinstance(call, dict):
            fn = call.get("function")
            names.append(str(call.get("name") or (fn.get("name") if isinstance(fn, dict) else "") or "?"))
    return names


def plan_trim(lengths: list[int], budget: int) -> tuple[int, int]:
    """(lines, bytes) to drop from the front so the rest fits ``budget``; the last line always stays."""
    total = sum(lengths)
    drop = dropped = 0
    while total - dropped > budget and drop < len(lengths) - 1:
        dropped += lengths[drop]
        drop += 1
    return drop, dropped


class Snapshot(Processor):
    """Messages to diary lines (see the module docstring)."""

    name = "snapshot"
    consumes = frozenset({"message.appended"})
    reset_policy = "earliest"  # safe: every line is deduplicated

    def begin(self, ws: Context, report: RunReport) -> None:
        self.ws = ws
        self.report = report
        self.budget = ws.config.diary_budget_bytes
        self.diary = ws.diary
        #: keys of this step's lines: the log's index holds them only once the step is appended, and holds
        #: every earlier step's, so a run's memory does not grow with the messages it has read
        self.seen: set[int] = set()
        self.legacy_horizon = self.diary.legacy_horizon  # messages up to this seq may carry a version 1 key
        self.lookup = ws.log.lookup_dedup_int
        self.days: dict[str, _Day] = {}  # date -> what this step gathered for it

    def policy(self, ev: Event) -> list[Event]:
        assert isinstance(ev, MessageAppended)
        lookup, seen = self.lookup, self.seen
        k = _h128(_canonical_json(canonical_message(ev)))
        if k in seen or lookup(k) is not None or (
                ev.seq <= self.legacy_horizon
                and lookup(_h128(_canonical_json(legacy_canonical_message(ev)))) is not None):
            self.report.duplicates_skipped += 1
            return []
        seen.add(k)
        when = source_time(ev.timestamp, ev.ts)
        line = diary_line(ev, when)
        date = when[:10]
        size = len(line.encode()) + 1
        day = self.days.get(date)
        if day is None:
            day = self.days[date] = _Day()
        day.lengths.append(size)
        day.rows.append((line, ev.session_key, ev.message_id, ev.seq, ev.role, f"{_HASH128_PREFIX}{k:032x}"))
        day.nbytes += size
        if day.nbytes < EVENT_LINE_BYTES:
            return []
        return [day.event(date)]

    def entries_in(self, outputs: list[Event]) -> int:
        return sum(len(ev.lines) if isinstance(ev, DiaryLines) else 1 for ev in outputs)  # lines, as before diary.lines

    def end_step(self) -> list[Event]:
        days, self.days = self.days, {}
        out: list[Event] = [day.event(date) for date, day in sorted(days.items()) if day.rows]  # lines before trims
        dates = set(days) | {d for d, day in self.diary.days.items() if day.size > self.budget}
        for date in sorted(dates):
            known = self.diary.days.get(date)
            new = days.get(date)
            lengths = (known.lengths if known else []) + (new.lengths if new else [])
            lines, nbytes = plan_trim(lengths, self.budget)
            if not lines:
                continue
            start = known.start if known else 0
            out.append(DiaryTrimmed(date=date, dropped_lines=lines, dropped_bytes=nbytes, start_before=start,
                                    start_after=start + nbytes, budget=self.budget))
            self.report.bytes_trimmed += nbytes
        self.seen = set()  # the runner appends this step's lines (and their keys) before the next step
        return out
