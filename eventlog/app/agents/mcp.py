"""``evlog mcp``: evlog as an MCP server over stdio (the official ``mcp`` SDK).

Tools (every result is a JSON object, described by the tool's output schema, within a
token budget; lists that do not fit end with a ``more`` cursor to pass back):

* ``recall(query, scope?, project?, session?, since?, until?, limit?, cursor?)``: ranked
  hits over every message, history entry and fact, each with its source (session,
  message id, time, fact id); each hit's text is packed into the result's budget around
  the query's words (``projections.recall.pack``), given once (no snippet repeating it).
  Searching records nothing.
* ``facts(project?, section?, state?, limit?, cursor?)``: MEMORY.md facts by file
  ("global" or a project) and section, in file order; no query needed.
* ``recent(since?, project?, limit?, cursor?)``: the sessions active and the facts learned
  since a time (default the last 7 days), newest first.
* ``edit_fact(fact_id, text)`` and ``pin_fact(fact_id, pinned?)``: ``eventlog.app.memory``'s
  edit and pin, by "agent"; an edit follows the rules of an agent's note
  (``processors.extract.notes.agent_note_verdict``: a project fact, no secret, no
  instruction, nothing about the user).
* ``remember(text, project?)``: a note Dream will learn from; the same note again
  appends nothing (``new`` says which).
* ``forget(fact_id | match, reason?)``: forget facts (they leave MEMORY.md and are never
  learned again from the same messages); ``match`` forgets the active facts containing a
  text, at most ``MAX_FORGET_MATCHES`` at once (more: the error lists them).
* ``why(text | fact_id, cursor?)``: the audit trail of MEMORY.md lines: who added the
  fact, the Dream run, the exact source messages, the supersede chain.
* ``sessions(limit?, project?, cursor?)``: sessions, newest first.
* ``session_messages(key, limit?, before?)``: a session's messages, oldest first, the
  newest ``limit`` before message id ``before``.

Every tool's description says when to call it; an empty result carries a ``hint`` with
what to try next; ``serverInfo.version`` is ``eventlog.__version__``.

Resources: ``evlog://memory`` (the global MEMORY.md: facts about the user) and
``evlog://memory/project/{+path}`` (a project's MEMORY.md; ``path`` is the project's
absolute directory without its leading ``/``); ``resources/list`` names every project
that has facts.

**Errors.** A failure a caller can act on (an unknown session or fact, a query with
nothing to search for, a bad cursor, a workspace that is locked, damaged or not
initialised) is an MCP tool error (``isError: true``) whose text says what went wrong and
what to do; arguments that do not fit a tool's input schema are refused by the SDK the
same way. A resource that does not exist is the protocol error -32602. No failure stops
the server: the next call opens the workspace again if it has to.

**Sharing the workspace.** The server opens the workspace as one more writer
(``lock_timeout`` short) and holds no lock between calls, so the daemon, hooks, ``evlog
watch`` and other servers keep writing; every call first catches up with what they
appended. Calls are served one at a time.

**A workspace that cannot be written** (a read-only disk or mount, no permission): the read
tools and resources (recall, facts, recent, why, sessions, session_messages, the MEMORY.md resources) open
it as a reader each call and answer as usual (recall searches an in-memory copy of an index
it cannot update); the write tools (remember, forget, edit_fact, pin_fact) fail with a tool error saying the
workspace is read-only.
"""

from __future__ import annotations

import os
import threading
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,  # pydantic needs it for schemas on Python < 3.12
)

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import CallToolResult, Resource, TextContent, ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict

from eventlog.app.agents.bounded import (
    BYTES_PER_TOKEN,
    DEFAULT_RESULT_TOKENS,
    CursorError,
    clip,
    fit,
    make_cursor,
    read_cursor,
    request_hash,
)
from eventlog.errors import EvlogError, NotFound, WriterClosedError

SERVER_NAME = "evlog"
DEFAULT_LOCK_TIMEOUT = 2.0
MAX_FORGET_MATCHES = 5
MAX_REMEMBER_CHARS = 20_000
MAX_RECALL = 50
MAX_FACT_CHARS = 1000
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
HIT_FIELD_TOKENS = 50  # a hit's JSON besides its text (kind, score, seq, time, session, message id...)
INSTRUCTIONS = (
    "evlog keeps the memory of past agent sessions (Claude Code, Codex, nanobot...) in an append-only log. "
    "Starting or resuming work: call facts (what is known about this project and the user) and recent (what "
    "happened lately). Use recall to search what was said, decided or learned (every hit names its source), "
    "remember to note a project fact worth keeping (Dream turns notes into MEMORY.md facts), why to see where a "
    "fact came from, edit_fact / pin_fact / forget to correct, keep or remove one, and sessions / "
    "session_messages to read past conversations. "
    "Results are bounded: pass a result's 'more' value back as 'cursor' (or 'before') for the rest."
)


# --- result shapes (the tools' output schemas) ----------------------------------------------------


class RecallHit(TypedDict):
    """One search hit and its source (empty fields are left out)."""

    kind: str  # message, history or fact
    score: float
    seq: int  # the log seq of the event that holds it
    time: str
    text: str  # the hit's text, trimmed around what the query asked about to fit the budget
    text_truncated: bool  # True: the text was cut (session_messages or why show it whole)
    session_key: NotRequired[str]
    message_id: NotRequired[str]
    role: NotRequired[str]
    speaker: NotRequired[str]
    project: NotRequired[str]
    fact_id: NotRequired[str]  # facts: pass it to why or forget
    section: NotRequired[str]
    state: NotRequired[str]
    source: NotRequired[str]  # history entries: what wrote them (remember, digest, ...)


class RecallResult(TypedDict):
    hits: list[RecallHit]
    more: str | None  # pass back as cursor for the next hits
    hint: NotRequired[str]  # on an empty result: what to try next


class RememberResult(TypedDict):
    seq: int  # the note's seq in the log
    new: bool  # False: the same note was already there (nothing appended)
    note: str


class ForgottenFact(TypedDict):
    fact_id: str
    text: str
    file: str  # "global" or the project


class ForgetResult(TypedDict):
    forgotten: list[ForgottenFact]
    already_forgotten: list[str]


class SourceMessage(TypedDict):
    session_key: str
    message_id: str
    role: str
    time: str
    excerpt: str
    seq: int


class ChainLink(TypedDict):
    fact_id: str
    text: str
    state: str


class Explanation(TypedDict):
    fact_id: str
    text: str
    file: str
    section: str
    state: str
    added_by: str
    subject: str
    since: str
    run_id: str
    run_time: str
    model: str
    prompt_hash: str
    outcome: str
    messages: list[SourceMessage]
    history: list[SourceMessage]
    chain: list[ChainLink]


class WhyResult(TypedDict):
    explanations: list[Explanation]
    more: str | None


class SessionRow(TypedDict):
    key: str
    title: str
    preview: str
    project: str
    created_at: str
    updated_at: str
    message_count: int
    source_format: str


class SessionsResult(TypedDict):
    sessions: list[SessionRow]
    more: str | None
    hint: NotRequired[str]  # on an empty result: what to try next


class FactRow(TypedDict):
    fact_id: str  # pass it to why, edit_fact, pin_fact or forget
    text: str
    file: str  # "global" (facts about the user) or the project's directory
    section: str
    state: str  # active, superseded, forgotten or archived
    pinned: bool
    added_by: str
    learned_at: str  # when the fact was written to the log
    edits: int


class FactsResult(TypedDict):
    facts: list[FactRow]
    total: int  # how many facts match, on every page
    more: str | None
    hint: NotRequired[str]


class RecentResult(TypedDict):
    since: str  # the time the window starts (UTC)
    sessions: list[SessionRow]  # active since then, most recent first
    facts: list[FactRow]  # learned since then, newest first
    more: str | None
    hint: NotRequired[str]


class EditResult(TypedDict):
    fact_id: str
    text: str
    changed: bool  # False: the fact already read so (nothing appended)
    file: str


class PinResult(TypedDict):
    fact_id: str
    pinned: bool
    state: str
    changed: bool  # False: it was already so (nothing appended)


class ToolCallRow(TypedDict):
    name: str
    arguments: str
    arguments_truncated: bool


class MessageRow(TypedDict):
    id: str
    role: str
    timestamp: str
    content: str
    content_truncated: bool
    tool_calls: list[ToolCallRow]


class MessagesResult(TypedDict):
    session_key: str
    messages: list[MessageRow]
    more: str | None  # the id of the oldest message returned, when older ones exist: pass it as 'before'
    note: str


# --- the backend: a workspace shared with other writers ------------------------------------------


class Backend:
    """The tools' implementation over one workspace (plain Python: the MCP layer only wraps it)."""

    def __init__(self, home: str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
                 result_tokens: int = DEFAULT_RESULT_TOKENS) -> None:
        self.home = home
        self.lock_timeout = lock_timeout
        self.budget = max(result_tokens, 200) * BYTES_PER_TOKEN
        self._ws: Any = None
        self._lock = threading.RLock()
        self._ranked: dict[str, list[Any]] = {}  # recall request -> its hits so far: pages never repeat a hit
        self._agent: Any = None  # eventlog.app.memory.AgentSession: one server process is one agent session

    def agent(self) -> Any:
        """The agent session of this server: its calling project (the git repository of the directory the client
        started the server in) and what it may still forget (``eventlog.app.memory.AgentSession``)."""
        from eventlog.app import memory

        if self._agent is None:
            self._agent = memory.AgentSession(memory.calling_project(os.getcwd()))
        return self._agent

    def _own_project_fact(self, fact: Any, doing: str, command: str) -> None:
        """Refuse ``doing`` on a fact of another project than the agent's (or of the global file)."""
        from eventlog.app import memory
        from eventlog.errors import InvalidEventError

        if not fact.target:
            raise InvalidEventError(f"fact {fact.fact_id!r} is in the global MEMORY.md (facts about the user): an agent "
                                    f"{doing} project facts only; the user does, with '{command}'")
        if not memory.is_calling_project(self.agent(), fact.target):
            raise InvalidEventError(f"fact {fact.fact_id!r} belongs to the project {fact.target}, not to the one this "
                                    f"agent works in ({self.agent().project}): nothing changed")

    # the workspace is opened on first use and again after a writer failure (or a reader's call)
    def ws(self, *, write: bool = True) -> Any:
        """The workspace, as a writer; for a read (``write=False``) a reader if it cannot be written."""
        from eventlog.app.workspace import Workspace
        from eventlog.errors import LogIOError

        if self._ws is not None and not self._ws.log.writable:
            self.close()
        if self._ws is None:
            try:
                self._ws = Workspace.open(self.home, writable=True, lock_timeout=self.lock_timeout)
            except LogIOError as e:  # cannot be written: a read-only disk or mount, no permission
                if write:
                    raise LogIOError(f"the workspace is read-only, so this tool (which writes) cannot run: {e}"
                                     ) from None
                self._ws = Workspace.open(self.home)
        return self._ws

    def close(self) -> None:
        with self._lock:
            ws, self._ws = self._ws, None
            if ws is not None:
                try:
                    ws.close()
                except Exception:  # noqa: BLE001 - a broken workspace is reopened on the next call
                    pass

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run one tool body: serialised, with evlog's errors as tool errors and a broken writer reopened."""
        try:
            return self.guarded(fn, *args, **kwargs)
        except (CursorError, EvlogError) as e:
            raise ToolError(str(e)) from None

    def guarded(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` serialised; a failed writer or an I/O error closes the workspace (reopened next call)."""
        with self._lock:
            try:
                return fn(*args, **kwargs)
            except WriterClosedError as e:
                self.close()
                raise WriterClosedError(f"{e}; the next call reopens the workspace") from None
            except OSError as e:
                self.close()
                raise EvlogError(f"the workspace could not be read or written: {e.strerror or e}") from None

    # -- tools ------------------------------------------------------------------------------------

    def recall(self, query: str, scope: str = "all", project: str | None = None, session: str | None = None,
               since: str | None = None, until: str | None = None, limit: int = 10,
               cursor: str | None = None) -> RecallResult:
        from eventlog.app import recall as rc

        req = request_hash("recall", query, scope, project, session, since, until, limit)
        offset = _offset(cursor, "recall", req)
        ranked = self._ranked.get(req, []) if cursor else []
        want = offset + limit
        exhausted = False
        if len(ranked) < want:  # search again, keeping the order of what earlier pages showed
            hits = rc.search(self.ws(write=False), query, scope=scope, project=_norm_project(project), session=session or None,
                             since=since or None, until=until or None, limit=want)
            exhausted = len(hits) < want
            shown = {(h.kind, h.seq) for h in ranked[:offset]}
            ranked = ranked[:offset] + [h for h in hits if (h.kind, h.seq) not in shown]
            self._ranked[req] = ranked
            while len(self._ranked) > 32:
                self._ranked.pop(next(iter(self._ranked)))
        raw = ranked[offset:want]
        page = [_hit(h, full) for h, full in zip(self._packed(raw, query), raw, strict=False)]
        kept = fit(page, self.budget, base=120)
        more = None
        if len(kept) < len(raw) or (not exhausted and len(ranked) >= want):
            more = make_cursor("recall", req, o=offset + len(kept))
        out: RecallResult = {"hits": kept, "more": more}
        if not kept:
            out["hint"] = _recall_hint(scope, project, session, since, until, offset)
        return out

    def _packed(self, hits: list[Any], query: str) -> list[Any]:
        """The hits trimmed around their evidence to share the result's budget (``projections.recall.pack``)."""
        from projections.recall.pack import pack

        if not hits:
            return []
        tokens = self.budget // BYTES_PER_TOKEN - HIT_FIELD_TOKENS * len(hits)  # what the text may take
        return pack(hits, max(tokens, 100), query)

    def remember(self, text: str, project: str | None = None) -> RememberResult:
        from eventlog.app import memory
        from eventlog.errors import InvalidEventError

        if len(text) > MAX_REMEMBER_CHARS:
            raise InvalidEventError(f"the note is {len(text)} characters; at most {MAX_REMEMBER_CHARS}: remember "
                                    "one thing at a time")
        ws = self.ws()
        end = ws.log.last_seq
        seq = memory.agent_remember(ws, text, session=self.agent(), project=_norm_project(project))
        new = seq > end
        return {"seq": seq, "new": new,
                "note": ("noted; Dream learns from it at its next run (the daemon, or 'evlog run dream')" if new
                         else "this note was already there; nothing was added")}

    def forget(self, fact_id: str | None = None, match: str | None = None, reason: str = "") -> ForgetResult:
        from eventlog.app import memory
        from eventlog.errors import InvalidEventError

        if bool(fact_id) == bool(match):
            raise InvalidEventError("give either fact_id or match (one of them)")
        ws = self.ws()
        if fact_id:
            facts = [memory.find(ws, fact_id)]
        else:
            facts = memory.matching(ws, match or "")
            if not facts:
                raise NotFound(f"no active fact contains {match!r}; recall with scope 'facts' finds them")
            if len(facts) > MAX_FORGET_MATCHES:
                listed = "; ".join(f"{f.fact_id}: {clip(f.text, 80)[0]}" for f in facts[:10])
                raise InvalidEventError(f"{len(facts)} active facts contain {match!r}, more than {MAX_FORGET_MATCHES}: "
                                        f"forget them by fact_id ({listed}{'; ...' if len(facts) > 10 else ''})")
        done = set(memory.agent_forget(ws, [f.fact_id for f in facts], session=self.agent(),
                                       reason=reason or "forgotten through MCP"))
        return {"forgotten": [{"fact_id": f.fact_id, "text": f.text, "file": f.target or "global"}
                              for f in facts if f.fact_id in done],
                "already_forgotten": [f.fact_id for f in facts if f.fact_id not in done]}

    def why(self, text: str | None = None, fact_id: str | None = None, cursor: str | None = None) -> WhyResult:
        from eventlog.errors import InvalidEventError
        from processors.audit import why

        if bool(text) == bool(fact_id):
            raise InvalidEventError("give either text (part of a MEMORY.md line) or fact_id (one of them)")
        req = request_hash("why", text, fact_id)
        offset = _offset(cursor, "why", req)
        found = why(self.ws(write=False), text, fact_id=fact_id)
        if not found:
            raise NotFound(f"no fact {fact_id!r}" if fact_id else
                           f"no line of MEMORY.md contains {text!r} (recall with scope 'facts' searches every fact)")
        page = [_explanation(ex) for ex in found[offset : offset + 20]]
        kept = fit(page, self.budget, base=60)
        more = make_cursor("why", req, o=offset + len(kept)) if offset + len(kept) < len(found) else None
        return {"explanations": kept, "more": more}

    def sessions(self, limit: int = 20, project: str | None = None, cursor: str | None = None) -> SessionsResult:
        req = request_hash("sessions", limit, project)
        offset = _offset(cursor, "sessions", req)
        ws = self.ws(write=False)
        states = list(ws.sessions.index.values())
        want = _norm_project(project)
        if want is not None:
            states = [s for s in states if _norm_project(s.project) == want]
        states.sort(key=lambda s: s.key)
        states.sort(key=lambda s: s.updated_at, reverse=True)
        page = [_session_row(s) for s in states[offset : offset + limit]]
        kept = fit(page, self.budget, base=60)
        more = make_cursor("sessions", req, o=offset + len(kept)) if offset + len(kept) < len(states) else None
        out: SessionsResult = {"sessions": kept, "more": more}
        if not kept:
            out["hint"] = ("no session of this project yet: leave project out to list every session, or check the "
                           "directory (the project of a session is the directory its agent ran in)" if want else
                           "no sessions yet: evlog captures them through the hooks ('evlog setup claude-code' or "
                           "'evlog setup codex') or 'evlog ingest PATH'")
        return out

    def facts(self, project: str | None = None, section: str | None = None, state: str = "active", limit: int = 50,
              cursor: str | None = None) -> FactsResult:
        from eventlog.app import memory

        req = request_hash("facts", project, section, state, limit)
        offset = _offset(cursor, "facts", req)
        ws = self.ws(write=False)
        found = memory.facts(ws, state=None if state == "all" else state, project=_fact_file(project))
        if section:
            found = [f for f in found if f.section.casefold() == section.strip().casefold()]
        page = [_fact_row(ws, f) for f in found[offset : offset + limit]]
        kept = fit(page, self.budget, base=80)
        more = make_cursor("facts", req, o=offset + len(kept)) if offset + len(kept) < len(found) else None
        out: FactsResult = {"facts": kept, "total": len(found), "more": more}
        if not kept:
            sections = sorted({f.section for f in memory.facts(ws, state=None, project=_fact_file(project))})
            out["hint"] = (f"no {state if state != 'all' else ''} facts here. "
                           + (f"Sections of this file: {', '.join(sections)}. " if sections else "")
                           + "Try state 'all', another project (or 'global'), or recall with scope 'facts'; "
                           "remember notes things for Dream to learn.")
        return out

    def recent(self, since: str = "7d", project: str | None = None, limit: int = 20,
               cursor: str | None = None) -> RecentResult:
        from projections.recall.query import time_bound

        req = request_hash("recent", since, project, limit)
        pos = read_cursor(cursor, "recent", req) if cursor else {}
        so, fo = _nonneg(pos.get("s", 0)), _nonneg(pos.get("f", 0))
        kept_start = pos.get("t")  # the pages of one call share its window
        start: str = kept_start if isinstance(kept_start, str) else time_bound(since, name="since") or ""
        ws = self.ws(write=False)
        want = _norm_project(project)
        states = [s for s in ws.sessions.index.values() if s.updated_at >= start
                  and (want is None or _norm_project(s.project) == want)]
        states.sort(key=lambda s: (s.updated_at, s.key), reverse=True)
        facts = _facts_since(ws, start, want)
        srows = fit([_session_row(s) for s in states[so : so + limit]], self.budget // 2, base=60)
        frows = fit(facts[fo : fo + limit], self.budget // 2, base=60)
        more = None
        if so + len(srows) < len(states) or fo + len(frows) < len(facts):
            more = make_cursor("recent", req, s=so + len(srows), f=fo + len(frows), t=start)
        out: RecentResult = {"since": start, "sessions": srows, "facts": frows, "more": more}
        if not srows and not frows:
            out["hint"] = ("nothing since then: try a longer window (since '30d', or a date)"
                           + (", or leave project out" if want else "") + "; recall searches every time")
        return out

    def edit_fact(self, fact_id: str, text: str) -> EditResult:
        from eventlog.app import memory
        from eventlog.errors import InvalidEventError
        from processors.extract.notes import agent_note_verdict

        ws = self.ws()
        f = memory.find(ws, fact_id)
        if f.state != "active":
            raise InvalidEventError(f"fact {fact_id!r} is {f.state}: only active facts are edited (why shows its "
                                    "history)")
        self._own_project_fact(f, "edits", "evlog memory edit")
        verdict = agent_note_verdict(text, f.target)  # the rules of an agent's notes hold for its edits too
        if not verdict.kept:
            raise InvalidEventError(f"edit {verdict.reason}")
        changed = memory.edit(ws, fact_id, text, by="agent")
        now = memory.find(ws, fact_id)
        return {"fact_id": fact_id, "text": now.text, "changed": changed, "file": now.target or "global"}

    def pin_fact(self, fact_id: str, pinned: bool = True) -> PinResult:
        from eventlog.app import memory

        ws = self.ws()
        fact = memory.find(ws, fact_id)
        if fact.target:  # the user's global facts may be pinned; another project's may not
            self._own_project_fact(fact, "pins", "evlog memory pin")
        changed = memory.pin(ws, fact_id, pinned)
        f = memory.find(ws, fact_id)
        return {"fact_id": fact_id, "pinned": f.pinned, "state": f.state, "changed": changed}

    def session_messages(self, key: str, limit: int = 20, before: str | None = None) -> MessagesResult:
        from projections.sessions import MAX_FILE_MESSAGES, parse_message_line

        ws = self.ws(write=False)
        sp = ws.sessions
        s = sp.index.get(key)
        if s is None:
            raise NotFound(f"no session {key!r}; the sessions tool lists them")
        lines = ws.read_projection(lambda: sp.lines(key))
        end = len(lines)
        if before:
            ids = [_line_id(ln) for ln in lines]
            if before not in ids:
                raise NotFound(f"no message {before!r} in session {key!r} (of the newest {len(lines)} it keeps)")
            end = ids.index(before)
        start = max(0, end - limit)
        rows = [_message_row(parse_message_line(ln)) for ln in lines[start:end]]
        kept = list(reversed(fit(list(reversed(rows)), self.budget, base=120)))  # keep the newest that fit
        first = start + (len(rows) - len(kept))
        more = kept[0]["id"] if kept and first > 0 else None
        note = ""
        if s.count > len(lines) and first == 0:
            note = (f"the session has {s.count} messages; its file keeps the newest {MAX_FILE_MESSAGES}: older ones "
                    "are in the log (recall with session=... finds them)")
        return {"session_key": key, "messages": kept, "more": more, "note": note}

    # -- resources --------------------------------------------------------------------------------

    def memory_file(self, project: str = "") -> str:
        """The MEMORY.md text of the global file ("") or of a project, as the memory projection renders it."""
        ws = self.ws(write=False)
        if project and project not in ws.memory.files:
            raise NotFound(f"no MEMORY.md for project {project!r}")
        from eventlog.secrets import redact

        return redact(ws.memory.rendered(project).decode())[0]

    def projects(self) -> list[str]:
        return sorted(p for p in self.ws(write=False).memory.files if p)


def _offset(cursor: str | None, kind: str, req: str) -> int:
    """The position a cursor continues at (0 without one); ``CursorError`` for one that is not ours."""
    if not cursor:
        return 0
    o = read_cursor(cursor, kind, req).get("o", 0)
    if not isinstance(o, int) or isinstance(o, bool) or not 0 <= o <= 100_000:
        raise CursorError("the cursor is out of range")
    return o


def _nonneg(v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 100_000:
        raise CursorError("the cursor is out of range")
    return v


def _recall_hint(scope: str, project: str | None, session: str | None, since: str | None, until: str | None,
                 offset: int) -> str:
    """What to try after a recall that found nothing."""
    if offset:
        return "no more hits: that was all of them"
    tips = []
    narrowed = [name for name, v in (("project", project), ("session", session), ("since", since), ("until", until))
                if v]
    if narrowed:
        tips.append(f"leave out {', '.join(narrowed)}")
    if scope != "all":
        tips.append("search scope 'all'")
    tips.append("use fewer or other words (a name, a file, an error)")
    return ("nothing matched: " + "; ".join(tips) + ". The facts tool lists what MEMORY.md holds and recent shows "
            "what happened lately.")


def _fact_file(project: str | None) -> str | None:
    """The memory file a ``project`` argument names: None every file, "" the global one, else the project."""
    if project is None or not project.strip():
        return None
    if project.strip().lower() == "global":
        return ""
    return _norm_project(project)


def _learned_at(ws: Any, f: Any) -> str:
    rec = ws.log.find(f.seq)
    return rec.event.ts if rec is not None else ""


def _fact_row(ws: Any, f: Any, learned_at: str | None = None) -> FactRow:
    return {"fact_id": f.fact_id, "text": clip(f.text, 600)[0], "file": f.target or "global", "section": f.section,
            "state": f.state, "pinned": f.pinned, "added_by": f.by,
            "learned_at": _learned_at(ws, f) if learned_at is None else learned_at, "edits": f.edits}


def _facts_since(ws: Any, start: str, project: str | None) -> list[FactRow]:
    """Facts written to the log at ``start`` or later (newest first), of one project (and the global file) or all."""
    out: list[FactRow] = []
    for f in sorted(ws.memory.all_facts(None), key=lambda f: f.seq, reverse=True):
        at = _learned_at(ws, f)
        if at < start:
            break  # the log's times grow with its seqs
        if project is None or f.target in ("", project):
            out.append(_fact_row(ws, f, at))
        if len(out) >= 500:
            break
    return out


def _norm_project(project: str | None) -> str | None:
    """A project directory as sessions and facts name it (absolute, normalised); None for none."""
    if project is None or not project.strip():
        return None
    return os.path.normpath(os.path.abspath(os.path.expanduser(project.strip())))


def _line_id(line: bytes) -> str:
    import msgspec

    try:
        v = msgspec.json.decode(line).get("id")
    except (msgspec.MsgspecError, AttributeError):
        return ""
    return v if isinstance(v, str) else msgspec.json.encode(v).decode()


def _hit(h: Any, full: Any) -> RecallHit:
    """A hit for the model: its (packed) text once, no snippet repeating it."""
    text, cut = clip(h.text or h.snippet or "")
    hit: dict[str, Any] = {"kind": h.kind, "score": round(float(h.score), 4), "seq": h.seq, "time": h.time,
                           "text": text, "text_truncated": cut or text != (full.text or full.snippet or "")}
    for name in ("session_key", "message_id", "role", "speaker", "project", "fact_id", "section", "state", "source"):
        value = getattr(h, name, "")
        if value:
            hit[name] = value
    return hit  # type: ignore[return-value]


def _source(m: Any) -> SourceMessage:
    return {"session_key": m.session_key, "message_id": m.message_id, "role": m.speaker or m.role,
            "time": m.timestamp, "excerpt": m.excerpt, "seq": m.seq}


def _explanation(ex: Any) -> Explanation:
    return {"fact_id": ex.fact_id, "text": clip(ex.text)[0], "file": ex.file, "section": ex.section, "state": ex.state,
            "added_by": ex.by, "subject": ex.subject, "since": ex.when, "run_id": ex.run_id, "run_time": ex.run_time,
            "model": ex.model, "prompt_hash": ex.prompt_hash, "outcome": ex.outcome,
            "messages": [_source(m) for m in ex.messages[:10]],
            "history": [_source(m) for src in ex.sources for m in src.messages][:10],
            "chain": [{"fact_id": c.fact_id, "text": clip(c.text, 300)[0], "state": c.state} for c in ex.chain[:10]]}


def _session_row(s: Any) -> SessionRow:
    from projections.sessions import shown_title

    fmt = s.metadata.get("source_format") if isinstance(s.metadata, dict) else ""
    return {"key": s.key, "title": clip(shown_title(s) or s.title, 200)[0], "preview": clip(s.preview, 200)[0], "project": s.project,
            "created_at": s.created_at, "updated_at": s.updated_at, "message_count": s.count,
            "source_format": fmt if isinstance(fmt, str) else ""}


def _message_row(m: Any) -> MessageRow:
    content, cut = clip(m.content if isinstance(m.content, str) else str(m.content))
    calls: list[ToolCallRow] = []
    for call in m.tool_calls or []:
        fn = call.get("function") if isinstance(call, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        args = fn.get("arguments") if isinstance(fn, dict) else None
        args_text, args_cut = clip(args if isinstance(args, str) else json_dumps(args), 300)
        calls.append({"name": name if isinstance(name, str) else "", "arguments": args_text,
                      "arguments_truncated": args_cut})
    ts = m.timestamp if isinstance(m.timestamp, str) else json_dumps(m.timestamp)
    return {"id": m.id, "role": m.role, "timestamp": ts, "content": content, "content_truncated": cut,
            "tool_calls": calls}


def _result(data: dict[str, Any]) -> CallToolResult:
    """A tool result: the object as compact JSON text for the model, and as structured content (secrets redacted: I24)."""
    import json

    from eventlog.secrets import redact_value

    data = redact_value(data)[0]  # what a log written before the door holds never reaches the model
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def json_dumps(v: Any) -> str:
    import json

    return json.dumps(v, ensure_ascii=False)


# --- the MCP server -------------------------------------------------------------------------------


def build_server(home: str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
                 result_tokens: int = DEFAULT_RESULT_TOKENS) -> Any:
    """The MCP server (an ``MCPServer``) over the workspace at ``home``; ``.run()`` serves stdio."""
    backend = Backend(home, lock_timeout=lock_timeout, result_tokens=result_tokens)
    from eventlog.app import recall as rc

    rc.warm(home)  # a long-lived process: hybrid recall once the model is loaded (in the background)

    class EvlogServer(MCPServer):
        def tool(self, *args: Any, **kwargs: Any) -> Any:
            """``MCPServer.tool``, with the docstring dedented: the description a model reads has no indentation."""
            register = super().tool(*args, **kwargs)

            def decorate(fn: Any) -> Any:
                import inspect

                fn.__doc__ = inspect.cleandoc(fn.__doc__ or "")
                return register(fn)

            return decorate

        async def list_resources(self) -> list[Any]:
            import anyio

            base = await super().list_resources()
            try:
                projects = await anyio.to_thread.run_sync(lambda: backend.guarded(backend.projects))
            except EvlogError:  # listing never fails: the static resources are still there
                projects = []
            return base + [Resource(uri=f"evlog://memory/project/{p.lstrip('/')}", name=f"MEMORY.md of {p}",
                                    description=f"What evlog learned about the project {p}",
                                    mime_type="text/markdown") for p in projects if p.startswith("/")]

    from eventlog import __version__

    mcp = EvlogServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    mcp.backend = backend  # type: ignore[attr-defined]
    for add in (_add_search_tools, _add_session_tools, _add_note_tools, _add_listing_tools, _add_fact_tools,
                _add_resources):
        add(mcp, backend)
    return mcp


def _add_search_tools(mcp: Any, backend: Backend) -> None:
    """Register recall and why: searching and explaining."""

    @mcp.tool(annotations=READ_ONLY)
    def recall(
        query: Annotated[str, Field(description="What to look for, in plain words (a question works).", min_length=1,
                                    max_length=2000)],
        scope: Annotated[Literal["all", "messages", "facts", "history"],
                         Field(description="What to search: everything, chat messages, MEMORY.md facts, or history "
                                           "entries (summaries, notes).")] = "all",
        project: Annotated[str | None, Field(description="Only this project's sessions, notes and facts "
                                                         "(its absolute directory).")] = None,
        session: Annotated[str | None, Field(description="Only this session (a key from the sessions tool).")] = None,
        since: Annotated[str | None, Field(description="From this time: ISO time or date, epoch seconds, or an age "
                                                       "such as 36h or 7d.")] = None,
        until: Annotated[str | None, Field(description="Up to this time (same forms; a date includes the whole "
                                                       "day).")] = None,
        limit: Annotated[int, Field(description="How many hits.", ge=1, le=MAX_RECALL)] = 10,
        cursor: Annotated[str | None, Field(description="The 'more' value of a previous result with the same "
                                                        "arguments, for the next hits.")] = None,
    ) -> Annotated[CallToolResult, RecallResult]:
        """Search past sessions, notes and MEMORY.md facts for something specific, best first.

        Call it when the user refers to earlier work ("as we did", "last time", "the bug from yesterday") or
        asks what was decided or said, and before re-deriving something a past session may have settled. Every hit names its source (session key, message id, time, or fact
        id for why / edit_fact); its text is trimmed around the words asked about, and session_messages
        reads the whole turn. With no query in mind, call facts or recent instead.
        """
        return _result(backend.call(backend.recall, query, scope, project, session, since, until, limit, cursor))

    @mcp.tool(annotations=READ_ONLY)
    def why(
        text: Annotated[str | None, Field(description="Part of a MEMORY.md line.")] = None,
        fact_id: Annotated[str | None, Field(description="A fact id (any state: active, superseded, forgotten, "
                                                         "archived).")] = None,
        cursor: Annotated[str | None, Field(description="The 'more' value of a previous result.")] = None,
    ) -> Annotated[CallToolResult, WhyResult]:
        """Explain where a MEMORY.md fact came from: who added it and when, the Dream run (model, prompt hash),
        the exact messages it was learned from and the facts it replaced or that replaced it.

        Call it when the user asks why you believe something, before relying on a fact that looks surprising,
        and before edit_fact or forget, to see the evidence.
        """
        return _result(backend.call(backend.why, text, fact_id, cursor))


def _add_session_tools(mcp: Any, backend: Backend) -> None:
    """Register sessions and session_messages: reading past conversations."""

    @mcp.tool(annotations=READ_ONLY)
    def sessions(
        limit: Annotated[int, Field(description="How many sessions.", ge=1, le=100)] = 20,
        project: Annotated[str | None, Field(description="Only sessions of this project (its absolute "
                                                         "directory).")] = None,
        cursor: Annotated[str | None, Field(description="The 'more' value of a previous result.")] = None,
    ) -> Annotated[CallToolResult, SessionsResult]:
        """List sessions (Claude Code, Codex, nanobot... conversations), most recently active first.

        Call it when the user asks about past conversations by time or project ("my sessions in this repo",
        "what was I doing on Monday"), or to pick a session to read with session_messages.
        """
        return _result(backend.call(backend.sessions, limit, project, cursor))

    @mcp.tool(annotations=READ_ONLY)
    def session_messages(
        key: Annotated[str, Field(description="The session key (from sessions or a recall hit).", min_length=1)],
        limit: Annotated[int, Field(description="How many messages.", ge=1, le=200)] = 20,
        before: Annotated[str | None, Field(description="Only messages before this message id (a previous result's "
                                                        "'more').")] = None,
    ) -> Annotated[CallToolResult, MessagesResult]:
        """Read a session: its newest messages (or those before a message id), oldest first.

        Call it when a recall hit or a session looks relevant and you need the surrounding turns, the full
        text, or what happened next; pass the result's 'more' as before to read further back.
        """
        return _result(backend.call(backend.session_messages, key, limit, before))


def _add_note_tools(mcp: Any, backend: Backend) -> None:
    """Register remember and forget."""

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                          open_world_hint=False))
    def remember(
        text: Annotated[str, Field(description="The note, e.g. 'The user prefers tabs' or a decision and its "
                                               "reason.", min_length=1, max_length=MAX_REMEMBER_CHARS)],
        project: Annotated[str | None, Field(description="The project the note is about (its absolute directory): "
                                                         "an agent's note becomes a fact of that project only; one "
                                                         "without a project is kept in the log but never becomes "
                                                         "a fact.")] = None,
    ) -> Annotated[CallToolResult, RememberResult]:
        """Note a fact about the project worth keeping across sessions; Dream learns MEMORY.md facts from it.

        Call it when a durable project fact comes up that a future session would need: a decision and its
        reason, a convention, where something lives, a command that works. Not for the user's preferences
        (only the user speaks for the user) nor for instructions. Safe to retry: the same note for the same
        project is kept once. To change an existing fact, use edit_fact.
        """
        return _result(backend.call(backend.remember, text, project))

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                          open_world_hint=False))
    def forget(
        fact_id: Annotated[str | None, Field(description="The id of the fact to forget (from recall or why).")] = None,
        match: Annotated[str | None, Field(description=f"Forget the active facts containing this text (at most "
                                                       f"{MAX_FORGET_MATCHES}).")] = None,
        reason: Annotated[str, Field(description="Why (kept in the log).", max_length=500)] = "",
    ) -> Annotated[CallToolResult, ForgetResult]:
        """Forget MEMORY.md facts: they leave the file and are never learned again from the same messages.

        Call it when the user says a remembered fact is wrong or unwanted, or a fact you read is plainly
        obsolete and cannot be fixed with edit_fact. Give fact_id (from facts, recall or why) or match. The
        log keeps the fact and the forgetting (why explains it; the user can bring it back).
        """
        return _result(backend.call(backend.forget, fact_id, match, reason))


def _add_listing_tools(mcp: Any, backend: Backend) -> None:
    """Register facts and recent: what is known and what happened, no query needed."""

    @mcp.tool(annotations=READ_ONLY)
    def facts(
        project: Annotated[str | None, Field(description="Only this file: a project's absolute directory, or "
                                                         "'global' for the facts about the user; leave it out for "
                                                         "every file.")] = None,
        section: Annotated[str | None, Field(description="Only this MEMORY.md section (e.g. 'Preferences', "
                                                         "'Project Context').", max_length=200)] = None,
        state: Annotated[Literal["active", "archived", "forgotten", "superseded", "all"],
                         Field(description="Which facts: those in MEMORY.md (active), those the budget moved out "
                                           "(archived), forgotten, replaced (superseded), or all.")] = "active",
        limit: Annotated[int, Field(description="How many facts.", ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Field(description="The 'more' value of a previous result.")] = None,
    ) -> Annotated[CallToolResult, FactsResult]:
        """List what evlog remembers: MEMORY.md facts by file (global or a project) and section, in file order.

        Call it at the start of work in a project (project = its directory) to load what is known about it,
        when the user asks "what do you remember (about me / this project)?", and to find a fact's id for
        why, edit_fact, pin_fact or forget. No query needed (recall searches by words).
        """
        return _result(backend.call(backend.facts, project, section, state, limit, cursor))

    @mcp.tool(annotations=READ_ONLY)
    def recent(
        since: Annotated[str, Field(description="The start of the window: an age such as 24h, 7d or 2w, an ISO "
                                                "time or date, or epoch seconds.", max_length=64)] = "7d",
        project: Annotated[str | None, Field(description="Only this project (its absolute directory); facts of "
                                                         "the global file are included.")] = None,
        limit: Annotated[int, Field(description="How many sessions and how many facts.", ge=1, le=100)] = 20,
        cursor: Annotated[str | None, Field(description="The 'more' value of a previous result.")] = None,
    ) -> Annotated[CallToolResult, RecentResult]:
        """What happened lately: the sessions active and the facts learned since a time, newest first.

        Call it when resuming work ("where were we?", "catch me up", a new session in a known project), or
        when the user asks what happened recently, without a topic to search for.
        """
        return _result(backend.call(backend.recent, since, project, limit, cursor))


def _add_fact_tools(mcp: Any, backend: Backend) -> None:
    """Register edit_fact and pin_fact."""

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                          open_world_hint=False))
    def edit_fact(
        fact_id: Annotated[str, Field(description="The id of an active fact (from facts, recall or why).",
                                      min_length=1, max_length=100)],
        text: Annotated[str, Field(description="The corrected fact, one statement (e.g. 'The project uses "
                                               "PostgreSQL 16').", min_length=1, max_length=MAX_FACT_CHARS)],
    ) -> Annotated[CallToolResult, EditResult]:
        """Correct a project fact's text in MEMORY.md (the log keeps the old text; why shows the history).

        Call it when a fact is outdated or imprecise and the correction is known (a version changed, a path
        moved); forget it instead when it is simply wrong. The rules of remember apply: a project fact, no
        instructions, nothing about the user (the user edits those with 'evlog memory edit').
        """
        return _result(backend.call(backend.edit_fact, fact_id, text))

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                          open_world_hint=False))
    def pin_fact(
        fact_id: Annotated[str, Field(description="The id of the fact (from facts, recall or why).", min_length=1,
                                      max_length=100)],
        pinned: Annotated[bool, Field(description="True to pin, False to unpin.")] = True,
    ) -> Annotated[CallToolResult, PinResult]:
        """Pin a fact so it always stays in MEMORY.md (the size budget never archives it; an archived one
        comes back), or unpin it.

        Call it when the user says something must always be remembered, or a fact keeps being needed and
        would be costly to lose.
        """
        return _result(backend.call(backend.pin_fact, fact_id, pinned))


def _add_resources(mcp: Any, backend: Backend) -> None:
    """Register the MEMORY.md resources."""

    @mcp.resource("evlog://memory", name="MEMORY.md", description="What evlog learned about the user (the global "
                  "MEMORY.md).", mime_type="text/markdown")
    def global_memory() -> str:
        try:
            return backend.guarded(backend.memory_file, "")
        except EvlogError as e:
            raise ResourceError(str(e)) from None

    @mcp.resource("evlog://memory/project/{+path}", name="project MEMORY.md",
                  description="What evlog learned about a project: path is its absolute directory without the "
                              "leading slash.", mime_type="text/markdown")
    def project_memory(path: str) -> str:
        try:
            return backend.guarded(backend.memory_file, "/" + path.lstrip("/"))
        except NotFound as e:
            raise ResourceNotFoundError(str(e)) from None
        except EvlogError as e:
            raise ResourceError(str(e)) from None



def serve_stdio(home: str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
                result_tokens: int = DEFAULT_RESULT_TOKENS) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    server = build_server(home, lock_timeout=lock_timeout, result_tokens=result_tokens)
    try:
        server.run("stdio")
    finally:
        server.backend.close()
