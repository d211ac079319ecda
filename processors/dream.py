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

**The guard.** Dream runs on the shared model-follower loop (``DreamFollower`` on
``processors.runner.run_model_follower``: plan -> claim -> call -> record). Before a call,
Dream appends in one atomic batch: ``cursor.advanced``
(the entries it claims), ``offset.committed`` (as far as every earlier entry is claimed)
and ``dream.started`` (model, prompt hash). So no entry is fed twice by accident, and a
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

One ``run_dream`` drains everything pending in as many calls as it takes, except that a
model which costs tokens stops for the UTC day once Dream spent ``dream_daily_token_budget``
(evlog.json; 0: no daily limit): the entries stay unclaimed and the report says why.
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
from eventlog.timeutil import now_iso, source_time
from processors import memory_budget
from processors.extract.llm import SYSTEM, parse_ops, relevant_facts, render_batches, render_entries
from processors.extract.model import Entry, ExistingFact, FactOp
from processors.extract.text import fact_key
from processors.llm import LLM, Completion, Prompt, estimate_tokens
from processors.memory_budget import existing_of
from processors.runner import IDLE_COMMIT_RECORDS, Claim, ModelFollower, run_model_follower, validate_offset
from projections.memory import Fact

if TYPE_CHECKING:
    from processors.context import Context

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
    stopped: str = ""  # why it stopped with inputs pending (the daily token budget), else ""
    sliced: bool = False  # it stopped at ``max_calls`` with inputs pending: run it again for the rest

    @property
    def failed(self) -> bool:
        """True when a call of this run failed (the command exits 1)."""
        return any(r.outcome == "failed" for r in self.runs)

    def summary(self) -> str:
        """One line for the daemon's log."""
        return (f"{len(self.runs)} run(s): " + ", ".join(f"{r.run_id} {r.outcome} +{len(r.facts)}" for r in self.runs)
                + (f"; stopped: {self.stopped}" if self.stopped else ""))


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


def existing_facts(ws: Context, project: str) -> list[ExistingFact]:
    """The facts an extractor may see and change for ``project``: the global file's and the project's, active."""
    mem = ws.memory
    facts = mem.facts("") + (mem.facts(project) if project else [])
    return [existing_of(f) for f in facts]


# --- the follower ----------------------------------------------------------------------------


def run_dream(ws: Context, llm: LLM, *, retry_failed: bool = False, max_calls: int | None = None) -> DreamReport:
    """Learn from everything pending (or re-run failed calls); see the module docstring."""
    report = DreamReport(llm=llm.name, model=llm.model)
    follower = DreamFollower(llm, retry_failed=retry_failed)
    report.runs = run_model_follower(ws, follower, max_calls=max_calls)
    report.stopped = follower.stopped
    if not retry_failed:
        report.pending_after = _pending(ws)
    report.sliced = bool(max_calls and len(report.runs) >= max_calls and report.pending_after and not follower.stopped)
    return report


#: Extractors that spend no tokens (the daily budget does not apply to them).
FREE_MODELS = ("offline", "replay")


def tokens_spent(runs: list[Any], day: str) -> int:
    """Tokens (prompt + answer) of the runs started on ``day`` (``YYYY-MM-DD``, UTC)."""
    return sum(r.input_tokens + r.output_tokens for r in runs if r.started_at[:10] == day)


@dataclass
class _Unit:
    """One planned call: its entries (one project), the prompt, the facts it shows, the run it records."""

    entries: list[Entry]
    project: str
    prompt: Prompt
    shown: list[ExistingFact]
    run: DreamRun


@dataclass
class _Outcome:
    """What the call(s) brought back: the last answer, its valid operations, the reasons to refuse, or an error."""

    last: Completion | None
    ops: list[FactOp]
    reasons: list[str]
    error: LLMError | None = None


class DreamFollower(ModelFollower[_Unit, _Outcome, DreamRun]):
    """Dream on the shared model-follower loop (``processors.runner.run_model_follower``).

    ``plan`` claims the next batch (``cursor.advanced``, ``offset.committed``) and starts its
    run (``dream.started``) in one append; ``call`` asks the model (a second time with the
    reasons, see the module docstring); ``record`` appends ``dream.completed`` with the fact
    events, or ``dream.failed``. With ``retry_failed`` it plans the failed runs again instead.
    """

    name = NAME

    def __init__(self, llm: LLM, *, retry_failed: bool = False, today: str | None = None) -> None:
        self.llm = llm
        self.retry_failed = retry_failed
        self.retries: list[Any] = []
        self.today = today or now_iso()[:10]
        self.stopped = ""

    def begin(self, ctx: Context) -> None:
        if ctx.writable:
            ctx.flush()  # a hand edit of MEMORY.md becomes events before Dream reads the facts
        if self.retry_failed:
            self.retries = [r for r in ctx.dream_runs.runs() if r.failed]

    def plan(self, ctx: Context) -> Claim[_Unit] | None:
        if self.retry_failed:
            while self.retries and not self._over_daily_budget(ctx):
                old = self.retries.pop(0)
                entries = _entries_at(ctx, old.input_cursors)
                if entries:
                    return self._start(ctx, entries, old.project, [], retry_of=old.run_id)
            return None
        planned = _plan(ctx, self.llm)
        if planned is None:
            return None
        entries, project, claim = planned
        if not entries:
            return Claim(claim, None)  # only the offset moves: nothing here is Dream's input
        if self._over_daily_budget(ctx):
            return None  # nothing claimed: the entries wait for tomorrow
        return self._start(ctx, entries, project, claim, retry_of="")

    def _over_daily_budget(self, ctx: Context) -> bool:
        """A model that costs tokens stops for the day once Dream spent ``dream_daily_token_budget`` of them."""
        limit = ctx.config.dream_daily_token_budget
        if not limit or self.llm.name in FREE_MODELS:
            return False
        spent = tokens_spent(ctx.dream_runs.runs(), self.today)
        if spent < limit:
            return False
        self.stopped = (f"the daily token budget is spent ({spent} of {limit} tokens on {self.today}); "
                        "the rest waits for tomorrow (dream_daily_token_budget in evlog.json)")
        return True

    def _start(self, ctx: Context, entries: list[Entry], project: str, claim: list[Event], *,
               retry_of: str) -> Claim[_Unit]:
        llm = self.llm
        prompt, shown = build_prompt(ctx, llm, entries, project)
        run_id = next((e.run_id for e in claim if isinstance(e, CursorAdvanced)), f"dream-{ctx.log.last_seq + 1}")
        started = DreamStarted(run_id=run_id, llm=llm.name, model=llm.model, prompt_hash=prompt.hash(),
                               input_cursors=[e.seq for e in entries], project=project,
                               token_budget=ctx.config.dream_token_budget, retry_of=retry_of)
        run = DreamRun(run_id, "failed", [e.seq for e in entries], project, retry_of=retry_of)
        return Claim([*claim, started], _Unit(entries, project, prompt, shown, run))

    def call(self, ctx: Context, work: _Unit) -> _Outcome:
        return _ask(ctx, self.llm, work)

    def record(self, ctx: Context, work: _Unit, outcome: _Outcome) -> tuple[list[Event], DreamRun]:
        run, last, prompt_hash = work.run, outcome.last, work.prompt.hash()
        if outcome.error is not None:
            why = f"model call failed: {outcome.error}"
            return _failure_events(run, prompt_hash, last, outcome.reasons, why, getattr(outcome.error, "kind", "other"))
        if last is None or (not outcome.ops and outcome.reasons and not _empty_answer(last.text)):
            why = "no usable operation in the answer" if last is not None else "no answer"
            return _failure_events(run, prompt_hash, last, outcome.reasons, why, "invalid_output")
        return _record_events(ctx, run, work.entries, prompt_hash, last, outcome.ops, outcome.reasons)


def _plan(ws: Context, llm: LLM) -> tuple[list[Entry], str, list[Event]] | None:
    """The next call: its entries (one project, oldest first), project, and the claim to append; None when done."""
    with ws.lock:
        ws.catch_up()  # what every writer appended
        runs = ws.dream_runs
        first = max(ws.log.log_start, runs.s.cursor + 1 if not ws.offsets.position(NAME).seq else 0)
        next_seq, reset = validate_offset(ws, NAME, "earliest", first)
        end = ws.log.last_seq
        if next_seq > end:
            if reset is not None:
                ws.append([reset])
            return None
        pending = _scan(ws, next_seq, min(end, next_seq + SCAN_RECORDS - 1), set(runs.s.claimed),
                        OFFLINE_BATCH if llm.name == "offline" else None)
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


def _scan(ws: Context, first: int, last: int, claimed: set[int], batch: int | None) -> list[tuple[Any, Entry | None]]:
    """(record, its entry, or None when it is not an unclaimed input) from ``first`` to ``last``.

    With ``batch`` (the offline extractor's entries per call) it stops at the first unclaimed
    input after the first project's ``batch`` entries: ``_plan`` takes nothing beyond, and its
    offset stops there at the latest, so what it plans is the same as over the whole stretch
    (which a 1M-message first round read again for each of its hundreds of calls).
    """
    project_of = {k: s.project for k, s in ws.sessions.index.items()}
    pending: list[tuple[Any, Entry | None]] = []
    project, mine = None, 0
    for rec in ws.log.records(first, until_seq=last):
        ev = rec.event
        entry = entry_of(ev, project_of) if _is_input(ev) and rec.seq not in claimed else None
        pending.append((rec, entry))
        if entry is None:
            continue
        if batch is not None and mine >= batch:
            break
        project = entry.project if project is None else project
        mine += entry.project == project
    return pending


def _offset(rec: Any) -> OffsetCommitted:
    return OffsetCommitted(processor=NAME, record_seq=rec.seq, segment=segment_name(rec.segment), position=rec.end,
                           fingerprint=rec.fingerprint)


def _pending(ws: Context) -> int:
    """Inputs after Dream's offset that no call claimed yet (bounded look: ``SCAN_RECORDS``)."""
    with ws.lock:
        pos = ws.offsets.position(NAME).seq
        claimed = set(ws.dream_runs.s.claimed)
        return sum(1 for rec in ws.log.records(pos + 1, until_seq=pos + SCAN_RECORDS)
                   if _is_input(rec.event) and rec.seq not in claimed)


def _entries_at(ws: Context, seqs: list[int]) -> list[Entry]:
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


def build_prompt(ws: Context, llm: LLM, entries: list[Entry], project: str,
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


def _ask(ws: Context, llm: LLM, unit: _Unit) -> _Outcome:
    """The call (and the one retry with the reasons a model's answer was refused)."""
    run, entries, project = unit.run, unit.entries, unit.project
    ids = {f.fact_id for f in existing_facts(ws, project)}
    pinned = {f.fact_id for f in unit.shown if f.pinned}
    outcome = _Outcome(None, [], [])
    current = unit.prompt
    try:
        for attempt in (1, 2):
            if estimate_tokens(current.system) + estimate_tokens(current.user) + current.max_tokens > ws.config.dream_token_budget \
                    and attempt == 2:
                outcome.reasons.append("retry skipped: it would exceed the token budget")
                break
            last = outcome.last = llm.complete(current)
            run.attempts = attempt
            run.input_tokens += last.input_tokens
            run.output_tokens += last.output_tokens
            ops, refused = parse_ops(last.text, ids, entries=entries, pinned=pinned)
            outcome.ops, refused = _guard_deletes(ops, refused, len(ids))
            if refused:
                outcome.reasons.extend(f"attempt {attempt}: {r}" for r in refused)
            if outcome.ops or not refused or llm.name == "offline":
                break  # usable (or empty on purpose); the rules would answer a retry the same way
            current, _shown = build_prompt(ws, llm, entries, project, previous=(last.text, refused))
    except LLMError as e:
        outcome.error = e
    return outcome


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


def _record_events(ws: Context, run: DreamRun, entries: list[Entry], prompt_hash: str, out: Completion,
                   ops: list[FactOp], reasons: list[str]) -> tuple[list[Event], DreamRun]:
    """``dream.completed`` and the fact events of a usable answer (the caller holds the lock and appends them)."""
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
    return [done, *events], run


def _failure_events(run: DreamRun, prompt_hash: str, out: Completion | None, reasons: list[str],
                    why: str, kind: str) -> tuple[list[Event], DreamRun]:
    run.outcome, run.reason = "failed", why
    return [DreamFailed(run_id=run.run_id, reason=why, attempts=run.attempts, model=out.model if out else "",
                        prompt_hash=prompt_hash, raw_output=out.text if out else "", validation=reasons,
                        error_kind=kind, input_tokens=run.input_tokens, output_tokens=run.output_tokens)], run


# --- operations -> events ----------------------------------------------------------------------


def new_fact_id(op: FactOp, project: str) -> str:
    """``fact-`` + 12 hex of scope, project, text and first source: the same fact from the same message, the same id."""
    key = fact_key(op.text)
    first = op.sources[0] if op.sources else ""
    return "fact-" + xxhash.xxh3_64_hexdigest(f"{op.scope}\0{project}\0{key}\0{first}".encode())[:12]


def fact_events(ws: Context, run_id: str, ops: list[FactOp], entries: list[Entry]) -> list[Event]:
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


def budget_events(ctx: Context, pending: list[Event]) -> list[Event]:
    """``memory.archived`` for the facts that must leave a MEMORY.md (``processors.memory_budget``)."""
    return memory_budget.budget_events(ctx.memory, ctx.config, pending)


# --- notes -------------------------------------------------------------------------------------


def remember(ws: Context, text: str, *, project: str = "", by: str = "user") -> int:
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


def replay_llm(ws: Context) -> LLM:
    """A model that answers with the outputs recorded in this log, found by prompt hash."""
    from processors.llm import ReplayLLM

    recorded = {ev.prompt_hash: Completion(text=ev.raw_output, model=ev.model, input_tokens=ev.input_tokens,
                                           output_tokens=ev.output_tokens)
                for ev in ws.log.read() if isinstance(ev, DreamCompleted)}
    return ReplayLLM(recorded)
