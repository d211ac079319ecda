"""Dream: what people said -> fact operations -> facts in MEMORY.md. A log follower.

**Input.** Dream follows the log from its committed offset (validated like every
processor's, ``processors.runner``): every ``message.appended`` of a live session and
every note given with ``evlog remember`` (``history.appended``, source ``remember``).
Each becomes an ``Entry`` (``processors.extract.model``): dated, attributed (speaker and
time), its whole text, the source's extra fields. Which entries can be sources (not
tool output, not injected, skill or meta text) is the extractor's rule
(``processors.extract.text.skip_reason``).

**A call.** Entries go to the model one project at a time, in log order, in batches
(``processors.extract.llm.render_batches``, ~12,000 characters, never cutting a
message; the offline extractor takes a whole project's pending entries at once), with
the facts it may change: for a model the 50 active facts most related to the batch
(``relevant_facts``), for the offline extractor all active facts of the global file
and the project's. The model answers with ADD / UPDATE / DELETE / NOOP operations as
JSON (``processors.extract.llm.SYSTEM``); the offline extractor answers the same way
(its operations formatted as that JSON), so both are validated by ``parse_ops`` (ids
exist and are not pinned, text non-empty and whole, scope legal, sources among the
batch's messages, at most 3 deletes) and recorded alike.

**The guard.** Before a call, Dream appends in one atomic batch: ``cursor.advanced``
(the entries it claims), ``dream.started`` (model, prompt hash) and ``offset.committed``
(as far as every earlier entry is claimed). So no entry is fed twice by accident, and a
crash during the call leaves a started run that ``evlog audit`` lists as interrupted and
``run dream --retry-failed`` re-runs. An answer with no valid operation and reasons to
refuse some is retried once with the reasons attached (a model only; the rules would
answer the same); refused items are dropped and the run is ``partial``; an answer that
cannot be used at all fails the run (``dream.failed``, kept for a retry).

**The result**, in one atomic batch: ``dream.completed`` (outcome, attempts, reasons,
token usage, the raw answer) with the fact events: ``memory.appended`` for an ADD
(subject, date, exact source messages; never a fact whose text or sources a user made
Dream forget), ``memory.appended`` + ``memory.superseded`` for an UPDATE,
``memory.forgotten`` for a DELETE, and ``memory.archived`` for the least valuable facts
when a MEMORY.md would exceed its budget (``memory_max_lines``, ``memory_max_bytes``).
Because every answer and every fact is an event, replay rebuilds MEMORY.md without a
model, and ``evlog audit why`` shows each fact's messages and supersede chain.

One ``run_dream`` drains everything pending in as many calls as it takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import xxhash

from eventlog.errors import LLMError
from eventlog.events import (
    CursorAdvanced,
    DreamCompleted,
    DreamFailed,
    DreamStarted,
    Event,
    HistoryAppended,
    MemoryAppended,
    MemoryArchived,
    MemoryForgotten,
    MemorySuperseded,
    MessageAppended,
    OffsetCommitted,
)
from eventlog.segments import segment_name
from eventlog.timeutil import source_time
from processors.extract.budget import apply_split_budget
from processors.extract.llm import SYSTEM, parse_ops, relevant_facts, render_batches, render_entries
from processors.extract.model import Entry, ExistingFact, FactOp
from processors.extract.notes import is_agent_proposed
from processors.extract.text import fact_key
from processors.llm import LLM, Completion, Prompt, estimate_tokens
from processors.runner import IDLE_COMMIT_RECORDS, validate_offset
from projections.memory import HEADER, Fact, fact_line

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace

NAME = "dream"
MAX_OUTPUT_TOKENS = 2048
OFFLINE_BATCH = 2000  # entries per offline call
MODEL_BATCH_CHARS = 12_000
SCAN_RECORDS = 100_000  # log records looked at to find one call's entries
RELEVANT_FACTS = 50
NOTE_SOURCE = "remember"
#: The source of a note an agent wrote (MCP ``remember``): kept as agent-proposed, never as the user's words.
AGENT_NOTE_SOURCE = "agent-remember"
NOTE_SOURCES = (NOTE_SOURCE, AGENT_NOTE_SOURCE)

RETRY = """Your previous answer could not be used: {reasons}
Answer again with the JSON operations only, following the rules."""


@dataclass
class DreamRun:
    """What one call did."""

    run_id: str
    outcome: str  # valid, partial, noop, failed
    cursors: list[int]
    project: str
    attempts: int = 0
    facts: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    reason: str = ""
    retry_of: str = ""


@dataclass
class DreamReport:
    """What ``run_dream`` did: one entry per call."""

    processor: str = "dream"
    llm: str = ""
    model: str = ""
    runs: list[DreamRun] = field(default_factory=list)
    pending_after: int = 0

    @property
    def failed(self) -> bool:
        """True when a call of this run failed (the command exits 1)."""
        return any(r.outcome == "failed" for r in self.runs)


# --- entries ----------------------------------------------------------------------------------


def entry_of(ev: Event, project_of: dict[str, str]) -> Entry | None:
    """The Dream entry of an input event, or None if it is not Dream's input."""
    if isinstance(ev, MessageAppended):
        if ev.session_key not in project_of:
            return None  # a deleted session: the user took it back
        speaker = ev.extra.get("speaker") if isinstance(ev.extra.get("speaker"), str) else ""
        return Entry(ref=f"{ev.session_key}#{ev.message_id}", seq=ev.seq, session_key=ev.session_key,
                     message_id=ev.message_id, project=project_of[ev.session_key], speaker=speaker or ev.role,
                     role=ev.role, time=source_time(ev.timestamp, ev.ts), text=ev.content,
                     meta={**ev.extra, "tool_calls": ev.tool_calls} if ev.tool_calls else dict(ev.extra))
    if isinstance(ev, HistoryAppended) and ev.source in NOTE_SOURCES:
        return note_entry(ev)
    return None


def note_entry(ev: HistoryAppended) -> Entry:
    """The entry of a note: the user's (``evlog remember``), or an agent's (``meta["by"] == "agent"``)."""
    meta = {"by": "agent"} if ev.source == AGENT_NOTE_SOURCE else {}
    return Entry(ref=f"note#{ev.seq}", seq=ev.seq, session_key=ev.session_key, message_id=str(ev.seq),
                 project=ev.project, speaker="user", role="note", time=ev.ts, text=ev.text, meta=meta)


def _is_input(ev: Event) -> bool:
    return isinstance(ev, MessageAppended) or (isinstance(ev, HistoryAppended) and ev.source in NOTE_SOURCES)


def existing_facts(ws: Workspace, project: str) -> list[ExistingFact]:
    """The facts an extractor may see and change for ``project``: the global file's and the project's, active."""
    mem = ws.memory
    facts = mem.facts("") + (mem.facts(project) if project else [])
    return [existing_of(f) for f in facts]


def existing_of(f: Fact) -> ExistingFact:
    """A projection fact as the extractor's ``ExistingFact``."""
    return ExistingFact(fact_id=f.fact_id, text=f.text, subject=f.subject or ("project" if f.project else "user"),
                        scope="project" if f.scope == "project" else "global", project=f.project, section=f.section,
                        when=f.when, sources=list(f.source_refs), state=f.state, pinned=f.pinned)


# --- the follower ----------------------------------------------------------------------------


def run_dream(ws: Workspace, llm: LLM, *, retry_failed: bool = False, max_calls: int | None = None) -> DreamReport:
    """Learn from everything pending (or re-run failed calls); see the module docstring."""
    report = DreamReport(llm=llm.name, model=llm.model)
    with ws.processor_lock(NAME):
        if ws.writable:
            ws.flush()  # a hand edit of MEMORY.md becomes events before Dream reads the facts
        if retry_failed:
            for old in [r for r in ws.dream_runs.runs() if r.failed]:
                entries = _entries_at(ws, old.input_cursors)
                if entries:
                    report.runs.append(_call(ws, llm, entries, old.project, claim=None, retry_of=old.run_id))
            return report
        calls = 0
        while max_calls is None or calls < max_calls:
            planned = _plan(ws, llm)
            if planned is None:
                break
            entries, project, claim = planned
            if not entries:
                with ws.lock:
                    ws.append(claim)  # only the offset moves: nothing here is Dream's input
                break
            report.runs.append(_call(ws, llm, entries, project, claim=claim))
            calls += 1
        report.pending_after = _pending(ws)
    return report


def _plan(ws: Workspace, llm: LLM) -> tuple[list[Entry], str, list[Event]] | None:
    """The next call: its entries (one project, oldest first), project, and the claim to append; None when done."""
    with ws.lock:
        ws.projections  # noqa: B018 - catch up with every writer
        runs = ws.dream_runs
        first = max(ws.log.log_start, runs.s.cursor + 1 if not ws.offsets.position(NAME).seq else 0)
        next_seq, reset = validate_offset(ws, NAME, "earliest", first)
        end = ws.log.last_seq
        if next_seq > end:
            if reset is not None:
                ws.append([reset])
            return None
        claimed = set(runs.s.claimed)
        project_of = {k: s.project for k, s in ws.sessions.index.items()}
        pending: list[tuple[Any, Entry | None]] = []  # (record, entry or None for a non-input record)
        for rec in ws.log.records(next_seq, until_seq=min(end, next_seq + SCAN_RECORDS - 1)):
            ev = rec.event
            entry = entry_of(ev, project_of) if _is_input(ev) and rec.seq not in claimed else None
            pending.append((rec, entry))
        inputs = [e for _r, e in pending if e is not None]
        if not inputs:  # nothing to learn here: move the offset only past a long stretch (never for its own events)
            last = pending[-1][0]
            if reset is None and last.seq - next_seq + 1 < IDLE_COMMIT_RECORDS:
                return None
            return [], "", [*([reset] if reset else []), _offset(last)]
        project = inputs[0].project
        mine = [e for e in inputs if e.project == project]
        if llm.name == "offline":
            batch = mine[:OFFLINE_BATCH]
        else:
            batch = render_batches(mine, [], max_chars=MODEL_BATCH_CHARS)[0][0]
        taken = {e.seq for e in batch}
        # the offset moves past every record before the first input still unclaimed after this claim
        last_done = None
        for rec, entry in pending:
            if entry is not None and entry.seq not in taken:
                break
            last_done = rec
        run_id = f"dream-{end + 1}"
        claim: list[Event] = [*([reset] if reset else [])]
        claim.append(CursorAdvanced(processor=NAME, run_id=run_id, from_cursor=max(next_seq - 1, 0),
                                    to_cursor=batch[-1].seq, cursors=[e.seq for e in batch]))
        if last_done is not None:
            claim.append(_offset(last_done))
        return batch, project, claim


def _offset(rec: Any) -> OffsetCommitted:
    return OffsetCommitted(processor=NAME, record_seq=rec.seq, segment=segment_name(rec.segment), position=rec.end,
                           fingerprint=rec.fingerprint)


def _pending(ws: Workspace) -> int:
    """Inputs after Dream's offset that no call claimed yet (bounded look: ``SCAN_RECORDS``)."""
    with ws.lock:
        pos = ws.offsets.position(NAME).seq
        claimed = set(ws.dream_runs.s.claimed)
        return sum(1 for rec in ws.log.records(pos + 1, until_seq=pos + SCAN_RECORDS)
                   if _is_input(rec.event) and rec.seq not in claimed)


def _entries_at(ws: Workspace, seqs: list[int]) -> list[Entry]:
    """The entries of a failed run, read again from the log (history cursors of old runs included)."""
    project_of = {k: s.project for k, s in ws.sessions.index.items()}
    out = []
    for seq in sorted(set(seqs)):
        rec = ws.log.find(seq)
        if rec is None:
            continue
        ev = rec.event
        if isinstance(ev, HistoryAppended):  # runs from before Dream read messages fed it history entries
            out.append(note_entry(ev))
            continue
        entry = entry_of(ev, project_of)
        if entry is not None:
            out.append(entry)
    return out


# --- one call ----------------------------------------------------------------------------------


def build_prompt(ws: Workspace, llm: LLM, entries: list[Entry], project: str,
                 previous: tuple[str, list[str]] | None = None) -> tuple[Prompt, list[ExistingFact]]:
    """The prompt of one call and the facts it shows (all of them to the offline extractor)."""
    every = existing_facts(ws, project)
    shown = every if llm.name == "offline" else relevant_facts(entries, every, RELEVANT_FACTS)
    user = render_entries(entries, shown)
    if previous is not None:
        text, reasons = previous
        user += "\n## Your previous answer\n" + text + "\n\n" + RETRY.format(reasons="; ".join(reasons[:10]))
    inputs = {"entries": [msgspec.to_builtins(e) for e in entries], "existing": [msgspec.to_builtins(f) for f in every]}
    return Prompt(purpose="facts", system=SYSTEM, user=user, max_tokens=MAX_OUTPUT_TOKENS, inputs=inputs), shown


def _call(ws: Workspace, llm: LLM, entries: list[Entry], project: str, *, claim: list[Event] | None,
          retry_of: str = "") -> DreamRun:
    with ws.lock:
        prompt, shown = build_prompt(ws, llm, entries, project)
        run_id = next((e.run_id for e in claim or [] if isinstance(e, CursorAdvanced)), f"dream-{ws.log.last_seq + 1}")
        started = DreamStarted(run_id=run_id, llm=llm.name, model=llm.model, prompt_hash=prompt.hash(),
                               input_cursors=[e.seq for e in entries], project=project,
                               token_budget=ws.config.dream_token_budget, retry_of=retry_of)
        ws.append([*(claim or []), started])
    run = DreamRun(run_id, "failed", [e.seq for e in entries], project, retry_of=retry_of)
    ids = {f.fact_id for f in existing_facts(ws, project)}
    pinned = {f.fact_id for f in shown if f.pinned}
    reasons: list[str] = []
    last: Completion | None = None
    ops: list[FactOp] = []
    current = prompt
    try:
        for attempt in (1, 2):
            if estimate_tokens(current.system) + estimate_tokens(current.user) + current.max_tokens > ws.config.dream_token_budget \
                    and attempt == 2:
                reasons.append("retry skipped: it would exceed the token budget")
                break
            last = llm.complete(current)
            run.attempts = attempt
            run.input_tokens += last.input_tokens
            run.output_tokens += last.output_tokens
            ops, refused = parse_ops(last.text, ids, entries=entries, pinned=pinned)
            ops, refused = _guard_deletes(ops, refused, len(ids))
            if refused:
                reasons.extend(f"attempt {attempt}: {r}" for r in refused)
            if ops or not refused or llm.name == "offline":
                break  # usable (or empty on purpose); the rules would answer a retry the same way
            current, _shown = build_prompt(ws, llm, entries, project, previous=(last.text, refused))
    except LLMError as e:
        return _record_failure(ws, run, prompt.hash(), last, reasons, f"model call failed: {e}", getattr(e, "kind", "other"))
    if last is None or (not ops and reasons and not _empty_answer(last.text)):
        why = "no usable operation in the answer" if last is not None else "no answer"
        return _record_failure(ws, run, prompt.hash(), last, reasons, why, "invalid_output")
    return _record(ws, run, entries, prompt.hash(), last, ops, reasons)


def _guard_deletes(ops: list[FactOp], refused: list[str], known: int) -> tuple[list[FactOp], list[str]]:
    """Refuse every delete of an answer that would forget half or more of the facts it was shown (at least two)."""
    deletes = [o for o in ops if o.op == "delete"]
    if len(deletes) >= 2 and len(deletes) * 2 >= known:
        why = f"{len(deletes)} deletes would forget {len(deletes)} of the {known} facts shown: all deletes refused"
        return [o for o in ops if o.op != "delete"], [*refused, why]
    return ops, refused


def _empty_answer(text: str) -> bool:
    ops, refused = parse_ops(text, set())
    return not ops and not refused


def _record(ws: Workspace, run: DreamRun, entries: list[Entry], prompt_hash: str, out: Completion,
            ops: list[FactOp], reasons: list[str]) -> DreamRun:
    with ws.lock:
        events = fact_events(ws, run.run_id, ops, entries)
        for ev in events:
            if isinstance(ev, MemoryAppended):
                run.facts.append(ev.fact_id)
            elif isinstance(ev, MemorySuperseded):
                run.superseded.append(ev.fact_id)
            elif isinstance(ev, MemoryForgotten):
                run.forgotten.append(ev.fact_id)
        events += budget_events(ws, events)
        run.archived = [e.fact_id for e in events if isinstance(e, MemoryArchived)]
        changed = [e for e in events if not isinstance(e, MemoryArchived)]
        run.outcome = "noop" if not changed else "partial" if reasons else "valid"
        done = DreamCompleted(run_id=run.run_id, outcome=run.outcome, attempts=run.attempts, model=out.model,
                              prompt_hash=prompt_hash, raw_output=out.text, validation=reasons,
                              fallback_used=bool(reasons) and bool(changed), input_tokens=run.input_tokens,
                              output_tokens=run.output_tokens, fact_ids=run.facts)
        ws.append([done, *events])
    return run


def _record_failure(ws: Workspace, run: DreamRun, prompt_hash: str, out: Completion | None, reasons: list[str],
                    why: str, kind: str) -> DreamRun:
    run.outcome, run.reason = "failed", why
    with ws.lock:
        ws.append([DreamFailed(run_id=run.run_id, reason=why, attempts=run.attempts, model=out.model if out else "",
                               prompt_hash=prompt_hash, raw_output=out.text if out else "", validation=reasons,
                               error_kind=kind, input_tokens=run.input_tokens, output_tokens=run.output_tokens)])
    return run


# --- operations -> events ----------------------------------------------------------------------


def new_fact_id(op: FactOp, project: str) -> str:
    """``fact-`` + 12 hex of scope, project, text and first source: the same fact from the same message, the same id."""
    key = fact_key(op.text)
    first = op.sources[0] if op.sources else ""
    return "fact-" + xxhash.xxh3_64_hexdigest(f"{op.scope}\0{project}\0{key}\0{first}".encode())[:12]


def fact_events(ws: Workspace, run_id: str, ops: list[FactOp], entries: list[Entry]) -> list[Event]:
    """The fact events of validated operations (see the module docstring)."""
    mem = ws.memory
    by_ref = {e.ref: e for e in entries}
    forgotten = [f for f in mem.all_facts("forgotten")]
    out: list[Event] = []
    gone: set[str] = set()
    active_keys = {fact_key(f.text) for f in mem.all_facts("active")}
    for op in ops:
        if op.op == "delete":
            f = mem.get(op.fact_id)
            if f is not None and f.state == "active" and op.fact_id not in gone:
                gone.add(op.fact_id)
                out.append(MemoryForgotten(fact_id=op.fact_id, by="dream", reason=op.reason or "asked to forget",
                                           run_id=run_id))
            continue
        if op.op not in ("add", "update"):
            continue
        project = (op.project or next((by_ref[s].project for s in op.sources if s in by_ref), "")) \
            if op.scope == "project" else ""
        key = fact_key(op.text)
        if _blocked(op, forgotten) or (op.op == "add" and key in active_keys):
            continue
        fid = new_fact_id(op, project)
        srcs = [by_ref[s] for s in op.sources if s in by_ref]
        out.append(MemoryAppended(
            fact_id=fid, scope="project" if op.scope == "project" and project else "user", section=op.section,
            text=op.text, project=project, run_id=run_id, subject=op.subject, when=op.when,
            source_refs=[s.ref for s in srcs], source_seqs=[s.seq for s in srcs], by="dream",
            dedup=f"fact:{fid}",
        ))
        active_keys.add(key)
        if op.op == "update":
            old = mem.get(op.fact_id)
            if old is not None and old.state == "active" and op.fact_id not in gone:
                gone.add(op.fact_id)
                out.append(MemorySuperseded(fact_id=op.fact_id, by_fact_id=fid, run_id=run_id,
                                            reason=op.reason or "corrected", by="dream"))
    return out


def _blocked(op: FactOp, forgotten: list[Fact]) -> bool:
    """A fact the user made Dream forget is never learned again from the same messages.

    Said again in a new message, it may be learned again: that is the user saying it again.
    """
    srcs = set(op.sources)
    return bool(srcs) and any(srcs & set(f.source_refs) for f in forgotten)


def budget_events(ws: Workspace, pending: list[Event]) -> list[Event]:
    """``memory.archived`` for the facts that must leave a MEMORY.md to keep it within its budget.

    ``pending`` are fact events about to be appended with them (their effect is counted).
    """
    mem = ws.memory
    cfg = ws.config
    added = [e for e in pending if isinstance(e, MemoryAppended)]
    leaving = {e.fact_id for e in pending if isinstance(e, MemorySuperseded | MemoryForgotten)}
    targets = {f.target for f in mem.all_facts("active")} | {(e.project if e.scope == "project" else "") for e in added}
    out: list[Event] = []
    for target in sorted(targets):
        facts = [existing_of(f) for f in mem.facts(target) if f.fact_id not in leaving]
        facts += [ExistingFact(fact_id=e.fact_id, text=e.text, subject=e.subject, scope=e.scope, project=e.project,
                               section=e.section, when=e.when or e.ts, sources=list(e.source_refs), pinned=e.pinned)
                  for e in added if (e.project if e.scope == "project" else "") == target]
        cited = {f.fact_id: len(f.sources) for f in facts}
        recalled = {f.fact_id: mem.get(f.fact_id).recalled if mem.get(f.fact_id) else 0 for f in facts}  # type: ignore[union-attr]
        _kept, archived = apply_split_budget(facts, is_agent=lambda f: is_agent_proposed(f.text),
                                             max_lines=cfg.memory_max_lines, max_bytes=cfg.memory_max_bytes,
                                             cited=cited, recalled=recalled, header=HEADER,
                                             line=lambda f: fact_line(f.text))
        out += [MemoryArchived(fact_id=f.fact_id, reason=f"over the budget of {cfg.memory_max_lines} lines / "
                               f"{cfg.memory_max_bytes} bytes") for f in archived]
    return out


# --- notes -------------------------------------------------------------------------------------


def remember(ws: Workspace, text: str, *, project: str = "", by: str = "user") -> int:
    """Add a note for Dream to learn from (``evlog remember``; ``by="agent"`` for MCP); returns its seq.

    Idempotent: remembering the same text for the same project again returns the first
    note's seq and appends nothing (so a retried command never duplicates it). An
    agent's note is recorded with the source ``AGENT_NOTE_SOURCE``: Dream keeps it as
    agent-proposed, in its project only, never as the user's words. A note that would be
    refused (``processors.extract.notes``: a secret, a request for work; for an agent,
    an order or a claim about the user) raises ``InvalidEventError`` with the reason and
    writes nothing; an agent's note without a project is written but never becomes a
    fact (Dream records why).
    """
    from eventlog.errors import InvalidEventError
    from processors.extract import notes

    text = text.strip()
    if not text:
        raise InvalidEventError("nothing to remember: the text is empty")
    if by not in ("user", "agent"):
        raise InvalidEventError(f"a note is written by the user or an agent, not {by!r}")
    agent = by == "agent"
    verdict = notes.agent_note_verdict(text, project or "(any)") if agent else notes.note_verdict(text)
    if not verdict.kept:  # an agent's note without a project is written, and Dream keeps it out of memory
        raise InvalidEventError(f"note {verdict.reason}")
    key = xxhash.xxh3_128_hexdigest(msgspec.json.encode([project, " ".join(text.split()), *(["agent"] if agent else [])]))
    return ws.append([HistoryAppended(text=text, source=AGENT_NOTE_SOURCE if agent else NOTE_SOURCE, project=project,
                                      dedup=f"note:{key}")])[0]


def replay_llm(ws: Workspace) -> LLM:
    """A model that answers with the outputs recorded in this log, found by prompt hash."""
    from processors.llm import ReplayLLM

    recorded = {ev.prompt_hash: Completion(text=ev.raw_output, model=ev.model, input_tokens=ev.input_tokens,
                                           output_tokens=ev.output_tokens)
                for ev in ws.log.read() if isinstance(ev, DreamCompleted)}
    return ReplayLLM(recorded)
