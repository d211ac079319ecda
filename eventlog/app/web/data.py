"""The web app's ONE adapter to evlog's memory, audit, recall and processor APIs (local mode).

Every page that shows what Dream learned, why, from which messages, what the processors
are doing, or searches, gets its data from here and nowhere else, as plain view objects
(dataclasses below). The fact model and recall are being reworked (facts get a subject, a
date, exact source message ids, a state and a supersede chain; recall becomes the ranked
index ``projections.recall``): switching the web app to them means changing this module
only. Where the current API has nothing yet (a fact's state and supersede chain), the
views carry empty values the templates already show.

Everything here only reads: a workspace opened read-only, the recall index opened
read-only if some other process built it. Callers serialise calls per workspace (the web
app holds a lock), because a read-only workspace catches its projections up in place.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from eventlog.app.workspace import Workspace
from eventlog.events import DreamCompleted, DreamFailed, MemoryAppended, MessageAppended, SessionCreated
from eventlog.timeutil import normalize_time

SEARCH_LIMIT = 50
NO_PROJECT = ""


# --------------------------------------------------------------------------- views


@dataclass
class FactView:
    """One line of a MEMORY.md."""

    fact_id: str
    text: str
    section: str
    run_id: str
    seq: int
    state: str = "active"  # active, superseded, forgotten, archived (new fact model); today always active
    subject: str = ""
    date: str = ""
    project: str = ""  # "" for the global file
    reason: str = ""  # why it left MEMORY.md (forgotten, archived)
    changed_by: str = ""
    author: str = ""  # the gateway account that pushed it (a teammate's fact, in a shared project)


@dataclass
class MemoryFileView:
    """A MEMORY.md: the global one (project "") or a project's, as sections of facts."""

    project: str
    path: str  # where the file lives, for display
    sections: list[tuple[str, list[FactView]]]
    facts: int
    bytes: int


@dataclass
class SourceMessageView:
    session_key: str
    message_id: str
    role: str
    timestamp: str
    excerpt: str
    seq: int


@dataclass
class SourceEntryView:
    cursor: int
    source: str
    session_key: str
    excerpt: str
    messages: list[SourceMessageView] = field(default_factory=list)


@dataclass
class ChainLink:
    """One version of a fact in its supersede chain (new fact model)."""

    fact_id: str
    text: str
    state: str
    run_id: str


@dataclass
class WhyView:
    """Why a fact is in MEMORY.md: its run (model, prompt hash, tokens), the exact messages it came from (older
    facts: the history entries they cite), its supersede chain."""

    fact: FactView
    file: str  # "global" or the project path
    run_id: str
    run_time: str
    outcome: str
    model: str
    llm: str
    prompt_hash: str
    input_tokens: int
    output_tokens: int
    sources: list[SourceEntryView]
    chain: list[ChainLink]
    messages: list[SourceMessageView] = field(default_factory=list)
    subject: str = ""
    when: str = ""
    by: str = ""
    history: list[Any] = field(default_factory=list)  # processors.audit.HistoryStep: every change, oldest first


@dataclass
class RunView:
    """One Dream run."""

    run_id: str
    time: str
    llm: str
    model: str
    prompt_hash: str
    project: str
    first_cursor: int
    last_cursor: int
    entries: int
    attempts: int
    outcome: str
    input_tokens: int
    output_tokens: int
    facts_added: int
    reason: str
    retry_of: str
    retried_by: str

    @property
    def failed(self) -> bool:
        return self.outcome in ("failed", "interrupted") and not self.retried_by


@dataclass
class OffsetView:
    processor: str
    seq: int
    lag: int
    committed_at: str
    resets: int
    lost_bytes: int
    lost_records: int
    detail: str


@dataclass
class SearchHit:
    """A message (or session) a search found, with where it is."""

    session_key: str
    message_id: str
    role: str
    time: str
    snippet: str
    project: str
    score: float = 0.0
    parts: list[tuple[str, bool]] = field(default_factory=list)  # the snippet in pieces, True where it matched

    def __post_init__(self) -> None:
        if not self.parts:
            self.parts = [(self.snippet, False)]


_MARKED = re.compile(r"\[([^\[\]]+)\]")


def marked_parts(snippet: str) -> list[tuple[str, bool]]:
    """Recall's snippet (matches in ``[ ]``) as (text, matched) pieces."""
    parts: list[tuple[str, bool]] = []
    pos = 0
    for m in _MARKED.finditer(snippet):
        if m.start() > pos:
            parts.append((snippet[pos:m.start()], False))
        parts.append((m.group(1), True))
        pos = m.end()
    if pos < len(snippet):
        parts.append((snippet[pos:], False))
    return parts


def query_parts(text: str, query: str) -> list[tuple[str, bool]]:
    """``text`` in pieces, True where it contains ``query`` (case-insensitive)."""
    q = query.casefold()
    low = text.casefold()
    if not q or len(low) != len(text):
        return [(text, False)]
    parts: list[tuple[str, bool]] = []
    pos = 0
    while (i := low.find(q, pos)) >= 0:
        if i > pos:
            parts.append((text[pos:i], False))
        parts.append((text[i:i + len(q)], True))
        pos = i + len(q)
    if pos < len(text):
        parts.append((text[pos:], False))
    return parts


@dataclass
class FactHit:
    """A MEMORY.md fact (any state) a search found."""

    fact_id: str
    text: str
    project: str  # "" for the global file
    section: str
    state: str
    parts: list[tuple[str, bool]]


@dataclass
class SearchView:
    engine: str  # "recall" (the ranked index) or "substring"
    hits: list[SearchHit]
    note: str = ""
    searched_messages: bool = True  # False: no message was searched (only the session list is filtered)
    facts: list[FactHit] = field(default_factory=list)  # facts holding every word of the query (local mode)


def words_parts(text: str, words: list[str]) -> list[tuple[str, bool]]:
    """``text`` in pieces, True where it holds one of ``words`` (case-insensitive)."""
    if not words:
        return [(text, False)]
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.IGNORECASE)
    parts: list[tuple[str, bool]] = []
    pos = 0
    for m in pattern.finditer(text):
        if m.start() > pos:
            parts.append((text[pos:m.start()], False))
        parts.append((m.group(), True))
        pos = m.end()
    if pos < len(text):
        parts.append((text[pos:], False))
    return parts


def fact_hits(ws: Workspace, query: str, *, project: str | None = None, limit: int = 20) -> list[FactHit]:
    """Facts of every state whose text holds every word of ``query``: active ones first, newest first."""
    words = [w for w in query.casefold().split() if w]
    if not words:
        return []
    found = [f for f in ws.memory.all_facts(None)
             if all(w in f.text.casefold() for w in words) and (project is None or f.target == project)]
    found.sort(key=lambda f: (f.state != "active", -f.seq))
    return [FactHit(f.fact_id, f.text, f.target, f.section, f.state, words_parts(f.text, words)) for f in found[:limit]]


def past_facts(ws: Workspace) -> list[tuple[str, list[FactView]]]:
    """Facts out of MEMORY.md: (state, facts newest first) for forgotten, archived and superseded ones."""
    out = []
    for state in ("forgotten", "archived", "superseded"):
        facts = sorted(ws.memory.all_facts(state), key=lambda f: -f.seq)
        out.append((state, [_fact(f) for f in facts]))
    return out


@dataclass
class Series:
    """Daily values for plots: {series name: {day: value}}."""

    days: list[str]
    values: dict[str, dict[str, float]]


@dataclass
class PlotsView:
    messages: Series  # messages per day, one series per project
    tokens: Series  # Dream tokens per day: "input" and "output"
    memory: Series  # MEMORY.md facts and kilobytes over time (cumulative)


# --------------------------------------------------------------------------- memory and audit


def memory_files(ws: Workspace) -> list[MemoryFileView]:
    """Every MEMORY.md: the global one first, then each project's, facts grouped by section."""
    return file_views(ws.memory.files)


def file_views(files: dict[str, list[Any]]) -> list[MemoryFileView]:
    """``MemoryFileView``s of facts by file ("" the global one, else the project), the global one first."""
    out = []
    for project in sorted(files, key=lambda p: (p != "", p)):
        facts = files[project]
        sections: dict[str, list[FactView]] = {}
        size = 0
        for f in facts:
            sections.setdefault(f.section, []).append(_fact(f))
            size += len(f.text.encode()) + 3
        path = "memory/MEMORY.md" if not project else os.path.join(project, "memory", "MEMORY.md")
        out.append(MemoryFileView(project, path, list(sections.items()), len(facts), size))
    return out


def _fact(f: Any) -> FactView:
    return FactView(fact_id=f.fact_id, text=f.text, section=f.section, run_id=getattr(f, "run_id", ""),
                    seq=getattr(f, "seq", 0),
                    state=getattr(f, "state", "active") or "active", subject=getattr(f, "subject", "") or "",
                    date=getattr(f, "date", "") or "", project=getattr(f, "target", "") or "",
                    reason=getattr(f, "reason", "") or "", changed_by=getattr(f, "changed_by", "") or "",
                    author=getattr(f, "author", "") or "")


def why(ws: Workspace, fact_id: str) -> WhyView | None:
    """The explanation of one fact in any state (``processors.audit.why``), with its run's tokens; None if no such fact."""
    from processors.audit import why as audit_why

    found = audit_why(ws, fact_id=fact_id)
    f = ws.memory.get(fact_id)
    if not found or f is None:
        return None
    ex = found[0]
    fact = _fact(f)
    run = ws.dream_runs.s.runs.get(ex.run_id)

    def message(m: Any) -> SourceMessageView:
        return SourceMessageView(session_key=m.session_key, message_id=m.message_id, role=m.role, timestamp=m.timestamp,
                                 excerpt=m.excerpt, seq=m.seq)

    sources = [SourceEntryView(cursor=s.cursor, source=s.source, session_key=s.session_key, excerpt=s.excerpt,
                               messages=[message(m) for m in s.messages]) for s in ex.sources]
    return WhyView(fact=fact, file=ex.file, run_id=ex.run_id, run_time=ex.run_time, outcome=ex.outcome,
                   model=ex.model, llm=run.llm if run is not None else "", prompt_hash=ex.prompt_hash,
                   input_tokens=ex.input_tokens, output_tokens=ex.output_tokens, sources=sources,
                   chain=[ChainLink(c.fact_id, c.text, c.state, c.run_id) for c in ex.chain],
                   messages=[message(m) for m in ex.messages], subject=ex.subject, when=ex.when, by=ex.by,
                   history=ex.history)


def dream_runs(ws: Workspace) -> list[RunView]:
    """Every Dream run, newest first."""
    from processors.audit import dream_runs as audit_runs

    out = []
    for r in audit_runs(ws, 0):
        cur = r.input_cursors
        out.append(RunView(run_id=r.run_id, time=r.time, llm=r.llm, model=r.model, prompt_hash=r.prompt_hash,
                           project=r.project, first_cursor=min(cur) if cur else 0, last_cursor=max(cur) if cur else 0,
                           entries=len(cur), attempts=r.attempts, outcome=r.outcome, input_tokens=r.input_tokens,
                           output_tokens=r.output_tokens, facts_added=r.facts_added, reason=r.reason,
                           retry_of=r.retry_of, retried_by=r.retried_by))
    return out[::-1]


RETRY_COMMAND = "evlog run dream --retry-failed"


def offsets(ws: Workspace) -> list[OffsetView]:
    """Every processor's position and lag (``processors.offsets``)."""
    import processors

    return [OffsetView(r.processor, r.seq, r.lag, r.committed_at, r.resets, r.lost_bytes, r.lost_records, r.detail)
            for r in processors.offsets(ws)]


# --------------------------------------------------------------------------- search


def recall_index_path(ws: Workspace) -> str:
    from projections.recall.workspace import index_path

    return index_path(ws.home)


def search(ws: Workspace, query: str, *, project: str | None = None) -> SearchView:
    """Messages matching ``query``, ranked by the recall index if one was built (else none: the page then
    lists the sessions whose title, preview or key contains it)."""
    path = recall_index_path(ws)
    if os.path.exists(path):
        from eventlog.app.recall import semantic_ranker
        from eventlog.errors import EvlogError
        from projections.recall import RecallIndex, recall

        try:
            with RecallIndex(path, readonly=True) as ix:  # hybrid where the model is loaded (eventlog.app.recall.warm)
                hits = recall(ix, query, scope="messages", project=project or None, limit=SEARCH_LIMIT,
                              semantic=semantic_ranker(ws, None))
                behind = ws.log.last_seq - ix.seq
        except EvlogError as e:
            return SearchView("recall", [], note=str(e))
        note = f"the search index is {behind} events behind the log" if behind > 0 else ""
        return SearchView("recall", [SearchHit(h.session_key, h.message_id, h.role, h.time, h.snippet, h.project,
                                               h.score, marked_parts(h.snippet)) for h in hits], note,
                          facts=fact_hits(ws, query, project=project))
    return SearchView("substring", [], "no search index in this workspace yet: the list below matches session titles, "
                                        "previews and keys", searched_messages=False,
                      facts=fact_hits(ws, query, project=project))


# --------------------------------------------------------------------------- plots


class Stats:
    """Daily counts folded from the log, kept up to date incrementally (one per web app)."""

    def __init__(self) -> None:
        self.seq = 0
        self.lock = threading.Lock()
        self.project_of: dict[str, str] = {}
        self.messages: dict[str, dict[str, int]] = {}  # project -> day -> messages
        self.tokens: dict[str, dict[str, int]] = {"input": {}, "output": {}}
        self.facts: dict[str, int] = {}  # day -> facts added
        self.fact_bytes: dict[str, int] = {}

    def update(self, ws: Workspace) -> None:
        with self.lock:
            for ev in ws.log.read(self.seq + 1):
                self.seq = ev.seq
                if isinstance(ev, MessageAppended):
                    day = (normalize_time(ev.timestamp) or ev.ts)[:10]
                    per = self.messages.setdefault(self.project_of.get(ev.session_key, NO_PROJECT), {})
                    per[day] = per.get(day, 0) + 1
                elif isinstance(ev, SessionCreated):
                    self.project_of[ev.session_key] = ev.project
                elif isinstance(ev, DreamCompleted | DreamFailed):
                    day = ev.ts[:10]
                    self.tokens["input"][day] = self.tokens["input"].get(day, 0) + ev.input_tokens
                    self.tokens["output"][day] = self.tokens["output"].get(day, 0) + ev.output_tokens
                elif isinstance(ev, MemoryAppended):
                    day = ev.ts[:10]
                    self.facts[day] = self.facts.get(day, 0) + 1
                    self.fact_bytes[day] = self.fact_bytes.get(day, 0) + len(ev.text.encode()) + 3

    def view(self) -> PlotsView:
        with self.lock:
            msg_days = sorted({d for per in self.messages.values() for d in per})
            messages = Series(msg_days, {p: dict(per) for p, per in self.messages.items()})
            tok_days = sorted(set(self.tokens["input"]) | set(self.tokens["output"]))
            tokens = Series(tok_days, {k: dict(v) for k, v in self.tokens.items()})
            mem_days = sorted(self.facts)
            total, size = 0, 0
            facts: dict[str, float] = {}
            kb: dict[str, float] = {}
            for d in mem_days:
                total += self.facts[d]
                size += self.fact_bytes[d]
                facts[d], kb[d] = total, round(size / 1024, 1)
            return PlotsView(messages, tokens, Series(mem_days, {"facts": facts, "kilobytes": kb}))
