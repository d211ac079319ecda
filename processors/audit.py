"""Audit: what Dream did, and why a line is in MEMORY.md.

``dream_runs`` lists runs (time, model, input range, attempts, outcome, tokens, facts
added) from the ``dream_runs`` projection. ``why`` explains facts: for every fact whose
text contains the query (or whose id is given) it returns the run that produced it, the
run's prompt hash and model, and each history entry the fact cites, resolved down to the
source messages (session key, message id, timestamp, excerpt): digest entries through
the message seqs they carry, consolidator entries through their session key and message
ids, ``evlog remember`` notes as themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import re
from dataclasses import dataclass, field

from eventlog.events import MessageAppended
from projections.dream_runs import Run
from projections.history import HistoryEntry

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace

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


@dataclass
class SourceEntry:
    """A history entry a fact cites, with the messages behind it."""

    cursor: int
    source: str
    session_key: str
    excerpt: str
    messages: list[SourceMessage] = field(default_factory=list)


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
    sources: list[SourceEntry] = field(default_factory=list)


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


def dream_runs(ws: Workspace, n: int = 10) -> list[RunRow]:
    """The newest ``n`` Dream runs (all if 0), oldest first."""
    runs = ws.dream_runs.runs()  # type: ignore[attr-defined]
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


def why(ws: Workspace, query: str | None = None, *, fact_id: str | None = None) -> list[Explanation]:
    """Explain every fact matching ``query`` (case-insensitive substring) or ``fact_id``."""
    mem = ws.memory
    runs = ws.dream_runs.s.runs  # type: ignore[attr-defined]
    history = {e.cursor: e for e in ws.history.entries}  # type: ignore[attr-defined]
    out: list[Explanation] = []
    for project, facts in mem.files.items():  # type: ignore[attr-defined]
        for f in facts:
            if fact_id is not None and f.fact_id != fact_id:
                continue
            if query is not None and query.lower() not in f.text.lower():
                continue
            ev = ws.log.find(f.seq)
            cited = list(ev.event.sources) if ev is not None and hasattr(ev.event, "sources") else []
            run = runs.get(f.run_id) or Run(run_id=f.run_id)
            out.append(Explanation(
                fact_id=f.fact_id, text=f.text, file=project or "global", section=f.section, run_id=f.run_id,
                model=run.model, prompt_hash=run.prompt_hash, outcome=outcome_of(run), run_time=run.started_at,
                sources=[_entry(history[c]) for c in cited if c in history],
            ))
    _resolve_messages(ws, [s for e in out for s in e.sources])
    for ex in out:
        for src in ex.sources:
            src.messages = _closest(ex.text, src.messages)
    return out


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


def _resolve_messages(ws: Workspace, entries: list[SourceEntry]) -> None:
    """Fill in each entry's source messages (one pass over the log for id-based ones)."""
    history = {e.cursor: e for e in ws.history.entries}  # type: ignore[attr-defined]
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
    return SourceMessage(session_key=ev.session_key, message_id=ev.message_id, timestamp=ev.timestamp or ev.ts,
                         role=ev.role, excerpt=_excerpt(ev.content), seq=ev.seq)
