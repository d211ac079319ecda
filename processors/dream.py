"""Dream: history entries + current MEMORY.md -> a model -> new facts in MEMORY.md.

Phase 1 (prompt). The history entries after Dream's cursor (at most ``MAX_ENTRIES``,
all of one project, each cut to ``ENTRY_CHARS``) and the existing memory (global file
plus the project's, first ``MEMORY_CHARS``) go into a prompt that asks for two sections,
``## User Profile`` and ``## Project Context``. Before that, text that came from memory
injected into a conversation (a ``<memory>`` or ``<system-reminder>`` block, a pasted
MEMORY.md section, a line equal to a known fact) is cut out of the entries, so memory
never re-learns itself (mem0's 97.8% junk was largely that). The prompt is trimmed to
the run's token budget.

Phase 2 (guard). The output must be non-empty, long enough, carry both headings and
have lines under each. A rejected output is retried once with the previous output and
the reason attached (if the token budget allows); a second rejection falls back to the
raw output if it is long enough to hold facts, else the run fails and nothing is
written. Facts already in memory are dropped; if nothing new is left the run is a no-op.

Everything is recorded, in this order: ``cursor.advanced`` and ``dream.started``
(before the model is called, so no entry is fed twice by accident), then either
``dream.completed`` (outcome valid / fallback / noop, attempts, validation reasons,
token usage and the raw output) together with one ``memory.appended`` per fact (scope,
project, section, text, run id and the history cursors it came from) in ONE atomic
batch, or ``dream.failed``. A failed or interrupted run keeps its range visible in
``evlog audit``; ``retry_failed=True`` re-runs those ranges on purpose. Because facts are
events, replay rebuilds MEMORY.md without calling any model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING

import xxhash

from eventlog.errors import LLMError
from eventlog.events import CursorAdvanced, DreamCompleted, DreamFailed, DreamStarted, Event, MemoryAppended
from processors.llm import LLM, Completion, Prompt, estimate_tokens
from projections.history import HistoryEntry
from projections.memory import PROJECT_SECTION, USER_SECTION, render, route_layered

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace

MAX_ENTRIES = 30
ENTRY_CHARS = 1000
MEMORY_CHARS = 3000
MAX_OUTPUT_TOKENS = 1024
MIN_OUTPUT_CHARS = 20
FALLBACK_MIN_CHARS = 40
MAX_RUNS = 20  # per invocation
PLACEHOLDERS = frozenset({"(nothing new)", "(nothing)", "nothing", "nothing new", "n/a", "none", "-", "(none)"})

SYSTEM = """You maintain the long-term memory of an AI assistant about its user and the user's projects.
From the conversation history entries, extract durable facts: stated preferences, habits, tools,
decisions, and project conventions. Answer ONLY in this format:

## User Profile
- <one fact about the user per line>

## Project Context
- <one fact about the project per line>

Write "(nothing new)" under a heading that has no new facts. Do not repeat facts that are already
in the existing memory, and never copy text that is itself memory shown to the assistant."""

_INJECTED_BLOCKS = re.compile(r"<(memory|system-reminder|long-term-memory)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_MEMORY_HEADINGS = re.compile(r"^#{1,3}\s*(user profile|project context|memory)\s*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


@dataclass
class DreamRun:
    """What one run did."""

    run_id: str
    outcome: str  # valid, fallback, noop, failed
    cursors: list[int]
    project: str
    attempts: int = 0
    facts: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    reason: str = ""
    retry_of: str = ""


@dataclass
class DreamReport:
    """What ``run_dream`` did: one entry per run."""

    processor: str = "dream"
    llm: str = ""
    model: str = ""
    runs: list[DreamRun] = field(default_factory=list)
    pending_after: int = 0


def fact_key(text: str) -> str:
    """How facts are compared: no bullet, lowercase, single spaces, no trailing punctuation."""
    text = _BULLET.sub("", text.strip())
    return " ".join(text.lower().split()).rstrip(".。!！;；,，")


def known_fact_keys(ws: Workspace, project: str) -> set[str]:
    """Keys of every fact in the global MEMORY.md and the project's."""
    mem = ws.memory
    facts = mem.facts("") + (mem.facts(project) if project else [])  # type: ignore[attr-defined]
    return {fact_key(f.text) for f in facts}


def memory_text(ws: Workspace, project: str) -> str:
    """The existing memory a prompt shows: the global file, then the project's."""
    mem = ws.memory
    text = render(mem.facts("")).decode() if mem.facts("") else ""  # type: ignore[attr-defined]
    if project and mem.facts(project):  # type: ignore[attr-defined]
        text += "\n" + render(mem.facts(project)).decode()  # type: ignore[attr-defined]
    return text[:MEMORY_CHARS]


def strip_injected(text: str, known: set[str]) -> str:
    """Cut memory that was injected into a conversation out of a history entry."""
    text = _INJECTED_BLOCKS.sub(" ", text.replace(" ⏎ ", "\n"))
    kept, in_memory_section = [], False
    for line in text.splitlines():
        if _MEMORY_HEADINGS.match(line.strip()):
            in_memory_section = True
            continue
        if in_memory_section and (not line.strip() or _BULLET.match(line)):
            continue  # the bullets of a pasted MEMORY.md section
        in_memory_section = False
        if fact_key(line) in known:
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def build_prompt(entries: list[HistoryEntry], memory: str, known: set[str], budget: int | None,
                 previous: tuple[str, str] | None = None) -> tuple[Prompt, list[HistoryEntry]]:
    """The Dream prompt for these entries and the entries it covers.

    Entries left empty by ``strip_injected`` are covered without being shown. With a
    ``budget``, the newest entries are dropped until the prompt and its answer fit; the
    dropped ones are not covered (they stay pending for the next run).
    """
    items = [{"cursor": e.cursor, "text": strip_injected(e.text, known)[:ENTRY_CHARS],
              "session_key": e.session_key} for e in entries]
    shown = [i for i in items if i["text"]]
    while budget is not None and len(shown) > 1:
        user = _user_text(shown, memory, previous)
        if estimate_tokens(SYSTEM) + estimate_tokens(user) + MAX_OUTPUT_TOKENS <= budget:
            break
        shown.pop()  # drop the newest entries first: they stay pending for the next run
    if len(shown) < len([i for i in items if i["text"]]):
        first_dropped = next(i for i in items if i["text"] and i not in shown)["cursor"]
        covered = [e for e in entries if e.cursor < first_dropped]
    else:
        covered = list(entries)
    prompt = Prompt(purpose="dream", system=SYSTEM, user=_user_text(shown, memory, previous),
                    max_tokens=MAX_OUTPUT_TOKENS,
                    inputs={"entries": [{"cursor": i["cursor"], "text": i["text"]} for i in shown], "memory": memory})
    return prompt, covered


def _user_text(items: list[dict[str, Any]], memory: str, previous: tuple[str, str] | None) -> str:
    parts = ["## Existing memory", memory.strip() or "(empty)", "", "## History entries"]
    for i in items:
        where = f" (session {i['session_key']})" if i["session_key"] else ""
        parts.append(f"[{i['cursor']}]{where} {i['text']}")
    if previous is not None:
        text, reason = previous
        parts += ["", f"## Your previous answer (rejected: {reason})", text, "",
                  "Answer again, exactly in the required format."]
    return "\n".join(parts)


def validate(text: str) -> str | None:
    """Why an output is unusable, or None if it is valid (see the module docstring)."""
    body = text.strip()
    if not body:
        return "empty output"
    if len(body) < MIN_OUTPUT_CHARS:
        return f"too short ({len(body)} characters)"
    headings = [m.group(1).strip().lower() for m in re.finditer(r"^##\s+(.+)$", body, re.MULTILINE)]
    for need in (USER_SECTION, PROJECT_SECTION):
        if need.lower() not in headings:
            return f"missing the '## {need}' heading"
    for scope_section in (USER_SECTION, PROJECT_SECTION):
        if not _section_lines(body, scope_section):
            return f"nothing under '## {scope_section}'"
    return None


def _section_lines(text: str, section: str) -> list[str]:
    for _scope, sec, part in route_layered(text):
        if sec == section:
            return [ln for ln in part.splitlines() if ln.strip()]
    return []


def parse_facts(text: str) -> list[tuple[str, str, str]]:
    """``(scope, section, fact)`` for every fact line in an output (placeholders dropped).

    When the output has headings, text before the first one is the model's preamble
    ("Sure! Here is what I learned:"), not a fact; without headings (a fallback) every
    line counts and goes to the user's file, as the seed's routing does.
    """
    out = []
    first_heading = re.search(r"^##\s+\S", text, re.MULTILINE)
    if first_heading:
        text = text[first_heading.start() :]
    for scope, section, part in route_layered(text):
        for line in part.splitlines():
            fact = _BULLET.sub("", line.strip()).strip()
            if fact and fact.lower() not in PLACEHOLDERS and not fact.startswith("#"):
                out.append((scope, section, fact))
    return out


def _sources(fact: str, entries: list[HistoryEntry]) -> list[int]:
    """The entries a fact most likely came from (word overlap); all of them if none stands out."""
    words = {w for w in re.findall(r"\w{3,}", fact.lower())}
    if not words:
        return [e.cursor for e in entries]
    scored = [(len(words & set(re.findall(r"\w{3,}", e.text.lower()))), e.cursor) for e in entries]
    best = max((s for s, _c in scored), default=0)
    if best * 2 < len(words) and not re.search(r"[\u4e00-\u9fff]", fact):
        return [e.cursor for e in entries]
    if best == 0:  # Chinese text has no spaces: match on the fact's characters instead
        chars = set(fact)
        scored = [(len(chars & set(e.text)), e.cursor) for e in entries]
        best = max((s for s, _c in scored), default=0)
    return [c for s, c in scored if s == best and s > 0] or [e.cursor for e in entries]


class _Budget:
    def __init__(self, total: int) -> None:
        self.total, self.used = total, 0

    def allows(self, prompt: Prompt) -> bool:
        return self.used + estimate_tokens(prompt.system) + estimate_tokens(prompt.user) + prompt.max_tokens <= self.total

    def spend(self, c: Completion) -> None:
        self.used += c.input_tokens + c.output_tokens


def run_dream(ws: Workspace, llm: LLM, *, retry_failed: bool = False, max_runs: int = MAX_RUNS) -> DreamReport:
    """Run Dream over pending history entries (or re-run failed ranges); see the module docstring."""
    report = DreamReport(llm=llm.name, model=llm.model)
    runs = ws.dream_runs
    history = ws.history
    if retry_failed:
        for old in [r for r in runs.runs() if r.failed]:  # type: ignore[attr-defined]
            wanted = set(old.input_cursors)
            entries = [e for e in history.entries if e.cursor in wanted]  # type: ignore[attr-defined]
            report.runs.append(_one_run(ws, llm, entries, old.project, claim=False, retry_of=old.run_id))
        return report
    for _ in range(max_runs):
        pending = history.since(runs.s.cursor)  # type: ignore[attr-defined]
        if not pending:
            break
        project = pending[0].project
        batch = []
        for e in pending:
            if e.project != project or len(batch) == MAX_ENTRIES:
                break
            batch.append(e)
        report.runs.append(_one_run(ws, llm, batch, project, claim=True))
    report.pending_after = len(history.since(runs.s.cursor))  # type: ignore[attr-defined]
    return report


def _one_run(ws: Workspace, llm: LLM, entries: list[HistoryEntry], project: str, *, claim: bool,
             retry_of: str = "") -> DreamRun:
    budget = _Budget(ws.config.dream_token_budget)
    with ws.lock:
        known = known_fact_keys(ws, project)
        memory = memory_text(ws, project)
        # half the budget for the first prompt and answer: the retry (same entries plus the
        # rejected answer) must fit in the rest, so a retry never shows fewer entries
        prompt, entries = build_prompt(entries, memory, known, budget.total // 2)
        cursors = [e.cursor for e in entries]
        run_id = f"dream-{ws.log.last_seq + 1}"
        claims: list[Event] = []
        if claim:
            start = ws.dream_runs.s.cursor  # type: ignore[attr-defined]
            claims.append(CursorAdvanced(processor="dream", run_id=run_id, from_cursor=start, to_cursor=max(cursors),
                                         cursors=cursors))
        claims.append(DreamStarted(run_id=run_id, llm=llm.name, model=llm.model, prompt_hash=prompt.hash(),
                                   input_cursors=cursors, project=project, token_budget=budget.total,
                                   retry_of=retry_of))
        ws.append(claims)
    run = DreamRun(run_id, "failed", cursors, project, retry_of=retry_of)
    if not prompt.inputs["entries"]:  # everything was injected memory: nothing to ask a model
        return _record_facts(ws, run, entries, prompt.hash(), Completion(text="", model=llm.model), [],
                             known, fallback=False)
    reasons: list[str] = []
    last: Completion | None = None
    current = prompt
    try:
        for attempt in (1, 2):
            if attempt == 2 and not budget.allows(current):
                reasons.append("retry skipped: it would exceed the token budget")
                break
            last = llm.complete(current)
            run.attempts = attempt
            budget.spend(last)
            run.input_tokens += last.input_tokens
            run.output_tokens += last.output_tokens
            reason = validate(last.text)
            if reason is None:
                return _record_facts(ws, run, entries, prompt.hash(), last, reasons, known, fallback=False)
            reasons.append(f"attempt {attempt}: {reason}")
            # the retry shows the same entries (never fewer): if it does not fit, it is skipped
            current, _same = build_prompt(entries, memory, known, None, previous=(last.text, reason))
    except LLMError as e:
        return _record_failure(ws, run, prompt.hash(), last, reasons, f"model call failed: {e}",
                               getattr(e, "kind", "other"))
    if last is not None and len(last.text.strip()) >= FALLBACK_MIN_CHARS and parse_facts(last.text):
        return _record_facts(ws, run, entries, prompt.hash(), last, reasons, known, fallback=True)
    why = "output rejected twice and too short to fall back on" if last is not None else "no output"
    return _record_failure(ws, run, prompt.hash(), last, reasons, why, "invalid_output")


def _record_facts(ws: Workspace, run: DreamRun, entries: list[HistoryEntry], prompt_hash: str, out: Completion,
                  reasons: list[str], known: set[str], *, fallback: bool) -> DreamRun:
    facts: list[Event] = []
    seen = set(known)
    for scope, section, text in parse_facts(out.text):
        key = fact_key(text)
        if not key or key in seen:
            continue
        seen.add(key)
        project = run.project if scope == "project" else ""
        fid = "fact-" + xxhash.xxh3_64_hexdigest(f"{scope}\0{project}\0{key}".encode())[:12]
        facts.append(MemoryAppended(fact_id=fid, scope=scope, section=section, text=text, project=project,
                                    run_id=run.run_id, sources=_sources(text, entries),
                                    dedup=f"fact:{scope}:{project}:{key}"))
    run.outcome = "noop" if not facts else "fallback" if fallback else "valid"
    run.facts = [f.fact_id for f in facts]  # type: ignore[attr-defined]
    done = DreamCompleted(run_id=run.run_id, outcome=run.outcome, attempts=run.attempts, model=out.model,
                          prompt_hash=prompt_hash, raw_output=out.text, validation=reasons, fallback_used=fallback,
                          input_tokens=run.input_tokens, output_tokens=run.output_tokens, fact_ids=run.facts)
    ws.append([done, *facts])
    return run


def _record_failure(ws: Workspace, run: DreamRun, prompt_hash: str, out: Completion | None, reasons: list[str],
                    why: str, kind: str) -> DreamRun:
    run.outcome, run.reason = "failed", why
    ws.append([DreamFailed(run_id=run.run_id, reason=why, attempts=run.attempts, model=out.model if out else "",
                           prompt_hash=prompt_hash, raw_output=out.text if out else "", validation=reasons,
                           error_kind=kind, input_tokens=run.input_tokens, output_tokens=run.output_tokens)])
    return run


def remember(ws: Workspace, text: str, *, project: str = "") -> int:
    """Add a note to Dream's input (``evlog remember``); returns its history cursor."""
    from eventlog.errors import InvalidEventError
    from eventlog.events import HistoryAppended

    if not text.strip():
        raise InvalidEventError("nothing to remember: the text is empty")
    return ws.append([HistoryAppended(text=text.strip(), source="remember", project=project)])[0]


def replay_llm(ws: Workspace) -> LLM:
    """A model that answers with the outputs recorded in this log, found by prompt hash."""
    from eventlog.events import DreamCompleted as Done
    from processors.llm import ReplayLLM

    recorded = {ev.prompt_hash: Completion(text=ev.raw_output, model=ev.model, input_tokens=ev.input_tokens,
                                           output_tokens=ev.output_tokens)
                for ev in ws.log.read() if isinstance(ev, Done)}
    return ReplayLLM(recorded)
