"""Consolidator: summarise a session's older messages into history (what Dream reads).

A session's messages older than its newest ``KEEP_RECENT`` (8) that are not consolidated
yet go to the model (at most ``MAX_MESSAGES`` per summary, oldest first; messages older
than the session file's 2000 are read from the log), each cut to ``MESSAGE_CHARS`` (300)
characters at a word boundary after injected text and memory pasted into the conversation
are cut out (``processors.extract.text.without_injected``); the summary is
recorded as a ``history.appended`` entry (with the session key and message ids) and the
session's ``session.consolidated`` mark (up to which message), in one atomic batch. A
failure is recorded as ``consolidation.failed`` (AutoCompact backs off on it). Only one
consolidation per session runs at a time, across threads and processes: it holds the
session's processor lock (``consolidate.<hash of the key>``; a second caller does not wait,
it reports ``busy``), and the check that nobody recorded the range meanwhile and the append
are one write turn of the log, so a range is recorded once. Rerunning with no new old
messages does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eventlog.errors import LLMError, NotFound
from eventlog.events import ConsolidationFailed, HistoryAppended, MessageAppended, SessionConsolidated
from processors.llm import LLM, Prompt
from projections.sessions import Message, parse_message_line

if TYPE_CHECKING:
    from processors.context import Context

KEEP_RECENT = 8
MESSAGE_CHARS = 300
MAX_MESSAGES = 200  # per summary; a longer backlog is summarised over several runs
MAX_OUTPUT_TOKENS = 600

SYSTEM = """Summarise this part of a conversation between a user and an AI assistant in a few sentences.
Keep what matters later: what the user wanted, decided or prefers, and what was done. No preamble."""



@dataclass
class ConsolidationResult:
    """What happened to one session."""

    session_key: str
    status: str  # consolidated, nothing-to-do, busy, failed
    messages: int = 0
    up_to_count: int = 0
    reason: str = ""


@dataclass
class ConsolidateReport:
    """What ``run_consolidate`` did."""

    processor: str = "consolidate"
    results: list[ConsolidationResult] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """False: a failed summary is recorded (``consolidation.failed``) and AutoCompact backs off on it."""
        return False

    def summary(self) -> str:
        """One line for the daemon's log."""
        return f"{len(self.results)} consolidation(s): " + ", ".join(f"{r.session_key} {r.status}" for r in self.results)


def lock_name(key: str) -> str:
    """The processor lock of one session's consolidation (a hash: a key may hold any character)."""
    import xxhash

    return f"consolidate.{xxhash.xxh3_64_hexdigest(key.encode())}"


def is_consolidating(ws: Context, key: str) -> bool:
    """True while a caller (this process or another) consolidates this session."""
    with ws.try_processor_lock(lock_name(key)) as free:
        return not free


def pending_messages(ws: Context, key: str) -> tuple[int, int]:
    """(first, end): indexes of the messages that are old enough and not yet consolidated."""
    s = ws.sessions.index.get(key)
    if s is None:
        raise NotFound(f"no session {key!r}")
    return s.last_consolidated, max(s.count - KEEP_RECENT, s.last_consolidated)


def consolidate_session(ws: Context, llm: LLM, key: str) -> ConsolidationResult:
    """Consolidate one session (see the module docstring)."""
    with ws.try_processor_lock(lock_name(key)) as held:
        if not held:
            return ConsolidationResult(key, "busy", reason="another consolidation of this session is running")
        return _consolidate(ws, llm, key)


def _consolidate(ws: Context, llm: LLM, key: str) -> ConsolidationResult:
    from processors.digest import cut_at_word
    from processors.extract.text import fact_key, without_injected

    with ws.lock:
        first, end = pending_messages(ws, key)
        if end <= first:
            return ConsolidationResult(key, "nothing-to-do")
        end = min(end, first + MAX_MESSAGES)
        sessions = ws.sessions
        state = sessions.index[key]
        lines = ws.read_projection(lambda: sessions.lines(key))
        window_start = state.count - len(lines)  # the file keeps the newest 2000
        msgs = _from_log(ws, key, state.created_seq, first, min(end, window_start)) if first < window_start else []
        msgs += [parse_message_line(ln) for ln in lines[max(first - window_start, 0) : end - window_start]]
        project = state.project
        known = {fact_key(f.text) for f in ws.memory.facts("") + (ws.memory.facts(project) if project else [])}
    run_id = f"consolidate-{ws.log.last_seq + 1}"
    items = [{"role": m.role, "content": cut_at_word(without_injected(m.content, known), MESSAGE_CHARS)} for m in msgs]
    user = "\n".join(f"{i['role']}: {i['content']}" for i in items)
    prompt = Prompt(purpose="consolidate", system=SYSTEM, user=user, max_tokens=MAX_OUTPUT_TOKENS,
                    inputs={"messages": items})
    try:
        out = llm.complete(prompt)
        if not out.text.strip():
            raise LLMError("the model returned an empty summary")
    except LLMError as e:
        ws.append([ConsolidationFailed(session_key=key, reason=str(e)[:500], run_id=run_id)])
        return ConsolidationResult(key, "failed", len(msgs), reason=str(e)[:200])
    last_id = msgs[-1].id if msgs else ""
    with ws.lock, ws.log.turn():  # the write turn: no other process can record this session between check and append
        now_first, _ = pending_messages(ws, key)
        if now_first != first:  # someone consolidated meanwhile: do not record twice
            return ConsolidationResult(key, "busy", reason="consolidated by another caller meanwhile")
        ws.append([
            HistoryAppended(text=out.text.strip(), source="consolidator", session_key=key, project=project,
                            message_ids=[m.id for m in msgs], refs={"from_count": first, "to_count": end}),
            SessionConsolidated(session_key=key, up_to_count=end, up_to_message_id=last_id, run_id=run_id,
                                model=out.model, input_tokens=out.input_tokens, output_tokens=out.output_tokens),
        ])
    return ConsolidationResult(key, "consolidated", len(msgs), end)


def _from_log(ws: Context, key: str, created_seq: int, first: int, end: int) -> list[Message]:
    """Messages ``first``..``end`` (by position in the session) read from the log itself."""
    out: list[Message] = []
    n = 0
    for ev in ws.log.read(created_seq):
        if isinstance(ev, MessageAppended) and ev.session_key == key:
            if first <= n < end:
                out.append(Message(id=ev.message_id, session_key=key, role=ev.role, content=ev.content,
                                   timestamp=ev.timestamp))
            n += 1
            if n >= end:
                break
    return out


def run_consolidate(ws: Context, llm: LLM, key: str | None = None) -> ConsolidateReport:
    """Consolidate one session, or every session with old unconsolidated messages."""
    report = ConsolidateReport()
    keys = [key] if key is not None else sorted(ws.sessions.index)
    for k in keys:
        first, end = pending_messages(ws, k)
        if key is None and end <= first:
            continue
        report.results.append(consolidate_session(ws, llm, k))
    return report
