"""Audit: what Dream did, and why a line is in MEMORY.md.

``dream_runs`` lists runs (time, model, input range, attempts, outcome, tokens, facts
added) from the ``dream_runs`` projection. ``why`` explains facts: for every fact whose
text contains the query (or whose id is given) it returns who added it and when, the run
that produced it (model, prompt hash, tokens), the exact messages it came from (session
key, message id, speaker, time, text), its supersede chain (the facts it replaced and
the one that replaced it) and its history (``fact_history``: learned, edited by whom with the
text before, pinned, archived, superseded, forgotten, unforgotten, each with its time). Facts learned before facts named their messages cite history
entries instead; those are resolved down to messages as before (digest entries through
the message seqs they carry, consolidator entries through their message ids, notes as
themselves).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eventlog.events import (
    Event,
    HistoryAppended,
    MemoryAppended,
    MemoryArchived,
    MemoryEdited,
    MemoryForgotten,
    MemoryPinned,
    MemoryRestored,
    MemorySuperseded,
    MessageAppended,
)
from processors.dream import AGENT_NOTE_SOURCE
from processors.extract.notes import is_agent_proposed
from projections.dream_runs import Run
from projections.history import HistoryEntry

if TYPE_CHECKING:
    from processors.context import Context

EXCERPT = 160


@dataclass
class SourceMessage:
    """A message a fact traces back to."""

    session_key: str
    message_id: str
    timestamp: str
    role: str
    excerpt: str
    seq: int
    speaker: str = ""


@dataclass
class SourceEntry:
    """A history entry a fact cites, with the messages behind it."""

    cursor: int
    source: str
    session_key: str
    excerpt: str
    messages: list[SourceMessage] = field(default_factory=list)


@dataclass
class ChainLink:
    """One fact of a supersede chain."""

    fact_id: str
    text: str
    state: str
    run_id: str
    by: str


@dataclass
class HistoryStep:
    """One change of a fact, from the log: what happened, when, by whom, and the text before and after."""

    seq: int
    time: str
    action: str  # learned, edited, pinned, unpinned, archived, superseded, replaced, forgotten, unforgotten
    by: str = ""  # dream, user, agent, hand-edit, budget...
    text: str = ""  # learned: its text; edited: the new text; superseded / replaced: the other fact's text
    old_text: str = ""  # edited: the text before
    detail: str = ""  # learned: its run; otherwise the reason given
    other: str = ""  # superseded: the fact that replaced it; replaced: the fact it replaced


@dataclass
class Explanation:
    """Why one line is in a MEMORY.md."""

    fact_id: str
    text: str
    file: str  # "global" or the project path
    section: str
    run_id: str
    model: str
    prompt_hash: str
    outcome: str
    run_time: str
    subject: str = ""
    when: str = ""
    state: str = "active"
    by: str = ""
    author: str = ""  # the gateway account that pushed it, for a fact a teammate's or another device's agent wrote
    input_tokens: int = 0
    output_tokens: int = 0
    messages: list[SourceMessage] = field(default_factory=list)  # the exact messages it came from
    sources: list[SourceEntry] = field(default_factory=list)  # history entries (facts learned before messages were named)
    chain: list[ChainLink] = field(default_factory=list)
    history: list[HistoryStep] = field(default_factory=list)  # every change, oldest first
    proposed: str = ""  # "agent, not confirmed" / "agent, confirmed by the user" for a fact from an agent's note


@dataclass
class RunRow:
    """One Dream run as ``evlog audit`` lists it (human and JSON show the same fields)."""

    run_id: str
    time: str
    llm: str
    model: str
    prompt_hash: str
    project: str
    input_cursors: list[int]
    attempts: int
    outcome: str  # valid, fallback, noop, failed, interrupted (or running, in this process)
    input_tokens: int
    output_tokens: int
    facts_added: int
    fact_ids: list[str]
    reason: str
    retry_of: str
    retried_by: str


def outcome_of(run: Run) -> str:
    """A run's outcome; a run that claimed its input but never ended was interrupted."""
    return "interrupted" if run.status in ("claimed", "started") else run.status


def dream_runs(ws: Context, n: int = 10) -> list[RunRow]:
    """The newest ``n`` Dream runs (all if 0), oldest first."""
    runs = ws.dream_runs.runs()
    runs = runs[-n:] if n else runs
    return [RunRow(run_id=r.run_id, time=r.started_at, llm=r.llm, model=r.model, prompt_hash=r.prompt_hash,
                   project=r.project,
                   input_cursors=list(r.input_cursors), attempts=r.attempts, outcome=outcome_of(r),
                   input_tokens=r.input_tokens, output_tokens=r.output_tokens, facts_added=len(r.fact_ids),
                   fact_ids=list(r.fact_ids), reason=r.reason, retry_of=r.retry_of, retried_by=r.retried_by)
            for r in runs]


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"


def why(ws: Context, query: str | None = None, *, fact_id: str | None = None,
        states: tuple[str, ...] = ("active",)) -> list[Explanation]:
    """Explain every fact matching ``query`` (case-insensitive substring) in one of ``states``, or ``fact_id``
    (in any state); each explanation has the fact's history (``fact_history``)."""
    mem = ws.memory
    runs = ws.dream_runs.s.runs
    history = {e.cursor: e for e in ws.history.entries}
    out: list[Explanation] = []
    for f in mem.all_facts():
        if fact_id is not None:
            if f.fact_id != fact_id:
                continue
        elif f.state not in states or (query is not None and query.lower() not in f.text.lower()):
            continue
        run = runs.get(f.run_id) or Run(run_id=f.run_id)
        ex = Explanation(
            fact_id=f.fact_id, text=f.text, file=f.target or "global", section=f.section, run_id=f.run_id,
            model=run.model, prompt_hash=run.prompt_hash, outcome=outcome_of(run) if f.run_id else "",
            run_time=run.started_at, subject=f.subject, when=f.when, state=f.state, by=f.by, author=f.author,
            input_tokens=run.input_tokens, output_tokens=run.output_tokens,
            sources=[_entry(history[c]) for c in f.sources if c in history],
            chain=[ChainLink(c.fact_id, c.text, c.state, c.run_id, c.by) for c in mem.chain(f.fact_id)],
        )
        for seq in f.source_seqs:
            rec = ws.log.find(seq)
            if rec is not None and isinstance(rec.event, MessageAppended):
                ex.messages.append(_message(rec.event))
            elif rec is not None and isinstance(rec.event, HistoryAppended):
                if rec.event.source == AGENT_NOTE_SOURCE:
                    ex.proposed = "agent, confirmed by the user"
                ex.messages.append(SourceMessage(session_key="", message_id=f"note {seq}", timestamp=rec.event.ts,
                                                 role="note", excerpt=_excerpt(rec.event.text), seq=seq))
        if is_agent_proposed(f.text):
            ex.proposed = "agent, not confirmed by the user ('evlog memory confirm')"
        out.append(ex)
    _resolve_messages(ws, [s for e in out for s in e.sources])
    histories = fact_history(ws, [e.fact_id for e in out])
    for ex in out:
        ex.history = histories.get(ex.fact_id, [])
    for ex in out:
        for src in ex.sources:
            src.messages = _closest(ex.text, src.messages)
    return out


def fact_history(ws: Context, fact_ids: list[str]) -> dict[str, list[HistoryStep]]:
    """Every change of these facts, oldest first, read from the log (from the oldest fact's ``memory.appended`` on).

    An edit gives the text before and after and who made it; ``superseded`` names the fact
    that replaced this one and ``replaced`` the one this fact replaced.
    """
    wanted = {fid: f for fid in fact_ids if (f := ws.memory.get(fid)) is not None}
    if not wanted:
        return {}
    out: dict[str, list[HistoryStep]] = {fid: [] for fid in wanted}
    texts: dict[str, str] = {}  # the text of every fact seen so far (this one's, and those that supersede it)
    for f in ws.memory.all_facts():  # a superseding fact can be appended after the event that names it
        texts[f.fact_id] = f.text
    for rec in ws.log.records(min(f.seq for f in wanted.values())):
        ev = rec.event
        if isinstance(ev, MemoryAppended):
            texts[ev.fact_id] = ev.text
        if isinstance(ev, MemorySuperseded) and ev.by_fact_id in wanted:
            out[ev.by_fact_id].append(HistoryStep(ev.seq, ev.ts, "replaced", ev.by or "dream", texts.get(ev.fact_id, ""),
                                                  detail=ev.reason, other=ev.fact_id))
        fid = getattr(ev, "fact_id", None)
        if isinstance(fid, str) and fid in wanted and (step := _step(ev, texts)) is not None:
            out[fid].append(step)
        if isinstance(ev, MemoryEdited):
            texts[ev.fact_id] = ev.text
    return out


def _step(ev: Event, texts: dict[str, str]) -> HistoryStep | None:
    """The step ``ev`` is in the history of the fact it names (None: not a change of a fact)."""
    match ev:
        case MemoryAppended():
            where = f"run {ev.run_id}" if ev.run_id else ""
            return HistoryStep(ev.seq, ev.ts, "learned", ev.by or "dream", ev.text, detail=where)
        case MemoryEdited():
            return HistoryStep(ev.seq, ev.ts, "edited", ev.by, ev.text, old_text=texts.get(ev.fact_id, ""))
        case MemoryPinned():
            return HistoryStep(ev.seq, ev.ts, "pinned" if ev.pinned else "unpinned")
        case MemoryArchived():
            return HistoryStep(ev.seq, ev.ts, "archived", "budget", detail=ev.reason)
        case MemorySuperseded():
            return HistoryStep(ev.seq, ev.ts, "superseded", ev.by or "dream", texts.get(ev.by_fact_id, ""),
                               detail=ev.reason, other=ev.by_fact_id)
        case MemoryForgotten():
            return HistoryStep(ev.seq, ev.ts, "forgotten", ev.by, detail=ev.reason)
        case MemoryRestored():
            return HistoryStep(ev.seq, ev.ts, "unforgotten", ev.by)
    return None


def _closest(fact: str, messages: list[SourceMessage]) -> list[SourceMessage]:
    """The messages that share the most words (or, for CJK, characters) with the fact; all if none does."""
    words = set(re.findall(r"\w{3,}", fact.lower()))
    if re.search(r"[\u4e00-\u9fff]", fact):
        words = {c for c in fact if "\u4e00" <= c <= "\u9fff"}
    if not words or len(messages) <= 1:
        return messages
    scores = [len(words & (set(re.findall(r"\w{3,}", m.excerpt.lower())) | set(m.excerpt))) for m in messages]
    best = max(scores)
    return [m for m, sc in zip(messages, scores, strict=True) if sc == best] if best else messages


def _entry(h: HistoryEntry) -> SourceEntry:
    return SourceEntry(cursor=h.cursor, source=h.source, session_key=h.session_key, excerpt=_excerpt(h.text))


def _resolve_messages(ws: Context, entries: list[SourceEntry]) -> None:
    """Fill in each entry's source messages (one pass over the log for id-based ones)."""
    history = {e.cursor: e for e in ws.history.entries}
    wanted: dict[tuple[str, str], list[SourceEntry]] = {}
    for entry in entries:
        h = history[entry.cursor]
        for seq in h.refs.get("message_seqs", []) or []:
            rec = ws.log.find(int(seq))
            if rec is not None and isinstance(rec.event, MessageAppended):
                entry.messages.append(_message(rec.event))
        for mid in h.message_ids:
            wanted.setdefault((h.session_key, mid), []).append(entry)
    if not wanted:
        return
    for ev in ws.log.read():
        if isinstance(ev, MessageAppended) and (ev.session_key, ev.message_id) in wanted:
            for entry in wanted.pop((ev.session_key, ev.message_id)):
                entry.messages.append(_message(ev))
            if not wanted:
                break


def _message(ev: MessageAppended) -> SourceMessage:
    speaker = ev.extra.get("speaker") if isinstance(ev.extra.get("speaker"), str) else ""
    return SourceMessage(session_key=ev.session_key, message_id=ev.message_id, timestamp=ev.timestamp or ev.ts,
                         role=ev.role, excerpt=_excerpt(ev.content), seq=ev.seq, speaker=speaker or ev.role)
