"""Consolidator: summarise a session's older messages into history (what Dream reads).

It follows the session's ``message.appended`` events by seq: its position is the seq of
the last message it summarised (``session.consolidated.up_to_seq``, kept by the compaction
projection), validated like a follower's offset (in the log, in the session, one of its
messages) before it reads on. A position an older evlog recorded as a message count (or
one that no longer holds) is converted: the seq of that many-th message of the session.
Messages after the position that are older than the session's newest ``KEEP_RECENT`` (8)
go to the model (at most ``MAX_MESSAGES`` per summary, oldest first, with their latest
``message.updated`` content; evlog's values, never a source's numeric ids), each cut to
``MESSAGE_CHARS`` (300) characters at a word boundary after injected text and memory
pasted into the conversation are cut out (``processors.extract.text.without_injected``);
the summary is recorded as a ``history.appended`` entry (with the session key and message
ids) and the session's ``session.consolidated`` mark (up to which message: seq and
count), in one atomic batch. A failure is recorded as ``consolidation.failed`` (AutoCompact
backs off on it). Only one consolidation per session runs at a time, across threads and
processes: it holds the session's processor lock (``consolidate.<hash of the key>``; a
second caller does not wait, it reports ``busy``), and the check that nobody recorded the
range meanwhile and the append are one write turn of the log, so a range is recorded once.
Rerunning with no new old messages does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eventlog.errors import LLMError, NotFound
from eventlog.events import (
    ConsolidationFailed,
    HistoryAppended,
    MessageAppended,
    MessageUpdated,
    RecordErased,
    SessionConsolidated,
)
from processors.llm import LLM, Prompt
from projections.sessions import Message

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
    """(first, end): positions (by count, from the projection) of the messages old enough and not yet consolidated."""
    s = ws.sessions.index.get(key)
    if s is None:
        raise NotFound(f"no session {key!r}")
    return s.last_consolidated, max(s.count - KEEP_RECENT, s.last_consolidated)


@dataclass(frozen=True)
class Position:
    """Where the consolidator is in a session: after message ``seq``, ``count`` messages in."""

    seq: int
    count: int
    note: str = ""  # why the recorded position was converted, if it was


def position(ws: Context, key: str) -> Position:
    """The session's validated position (see ``position_holds``); a count-only one is converted to a seq.

    The recorded seq is used when it holds; a mark an older evlog wrote (a count, no seq),
    a projection checkpointed before positions were kept, a session a sync pull rebuilt (its
    mark is a count), or a seq that no longer holds is converted from the count: the seq of
    that many-th ``message.appended`` of the session.
    """
    state = ws.sessions.index.get(key)
    if state is None:
        raise NotFound(f"no session {key!r}")
    rec = ws.compaction.positions.get(key)
    count = state.last_consolidated  # the sessions projection's count (a deleted and re-created session restarts it)
    if rec is not None and rec.seq and rec.count == count:
        problem = position_problem(ws, key, rec.seq, state.created_seq)
        if problem is None:
            return Position(rec.seq, rec.count)
        note = f"position seq {rec.seq} does not hold ({problem}); converted from the count {count}"
    elif count:
        note = f"position recorded as a count ({count}); converted to a seq"
    else:
        return Position(max(state.created_seq - 1, 0), 0)
    return Position(_seq_of_count(ws, key, state.created_seq, count), count, note)


def position_problem(ws: Context, key: str, seq: int, created_seq: int) -> str | None:
    """Why ``seq`` is not a valid position in this session (None if it is): like a follower's offset,
    it must be in the log, at or after the session's creation, and be one of its messages."""
    if not created_seq <= seq <= ws.log.last_seq:
        return f"seq {seq} is outside the session (from seq {created_seq}) or past the end ({ws.log.last_seq})"
    rec = ws.log.find(seq)
    ev = rec.event if rec is not None else None
    if isinstance(ev, RecordErased) and ev.was == "message.appended":
        return None
    if not isinstance(ev, MessageAppended) or ev.session_key != key:
        return f"seq {seq} is {'gone' if ev is None else ev.type}, not a message of the session"
    return None


def _seq_of_count(ws: Context, key: str, created_seq: int, count: int) -> int:
    """The seq of the session's ``count``-th ``message.appended`` (its last one if it has fewer)."""
    n, seq = 0, max(created_seq - 1, 0)
    for rec in ws.log.records(max(created_seq, 1)):
        if isinstance(rec.event, MessageAppended) and rec.event.session_key == key:
            n, seq = n + 1, rec.seq
            if n >= count:
                break
    return seq


def pending_after(ws: Context, key: str, after_seq: int) -> list[tuple[int, Message]]:
    """The session's messages after ``after_seq`` that are older than its newest ``KEEP_RECENT``
    (at most ``MAX_MESSAGES``, oldest first), with their seqs and their latest content."""
    msgs: list[tuple[int, Message]] = []
    by_id: dict[str, Message] = {}
    for rec in ws.log.records(after_seq + 1):
        ev = rec.event
        if isinstance(ev, MessageAppended) and ev.session_key == key:
            m = Message(id=ev.message_id, session_key=key, role=ev.role, content=ev.content, timestamp=ev.timestamp)
            msgs.append((rec.seq, m))
            by_id[m.id] = m
        elif isinstance(ev, MessageUpdated) and ev.session_key == key and ev.message_id in by_id:
            by_id[ev.message_id].content = ev.content  # an update always follows its message
    return msgs[: max(len(msgs) - KEEP_RECENT, 0)][:MAX_MESSAGES]


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
        pos = position(ws, key)
        picked = pending_after(ws, key, pos.seq)
        if not picked:
            return ConsolidationResult(key, "nothing-to-do", reason=pos.note)
        project = ws.sessions.index[key].project
        known = {fact_key(f.text) for f in ws.memory.facts("") + (ws.memory.facts(project) if project else [])}
    msgs = [m for _, m in picked]
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
    upto = pos.count + len(msgs)
    with ws.lock, ws.log.turn():  # the write turn: no other process can record this session between check and append
        now_first, _ = pending_messages(ws, key)
        if now_first != first:  # someone consolidated meanwhile: do not record twice
            return ConsolidationResult(key, "busy", reason="consolidated by another caller meanwhile")
        ws.append([
            HistoryAppended(text=out.text.strip(), source="consolidator", session_key=key, project=project,
                            message_ids=[m.id for m in msgs], refs={"from_count": pos.count, "to_count": upto}),
            SessionConsolidated(session_key=key, up_to_count=upto, up_to_message_id=msgs[-1].id,
                                up_to_seq=picked[-1][0], run_id=run_id, model=out.model,
                                input_tokens=out.input_tokens, output_tokens=out.output_tokens),
        ])
    return ConsolidationResult(key, "consolidated", len(msgs), upto, reason=pos.note)


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
