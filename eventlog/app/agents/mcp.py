"""``evlog mcp``: evlog as an MCP server over stdio (the official ``mcp`` SDK).

Tools (every result is a JSON object, described by the tool's output schema, within a
token budget; lists that do not fit end with a ``more`` cursor to pass back):

* ``recall(query, scope?, project?, session?, since?, until?, limit?, cursor?)``: ranked
  hits over every message, history entry and fact, each with its source (session,
  message id, time, fact id). Searching records nothing.
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
tools and resources (recall, why, sessions, session_messages, the MEMORY.md resources) open
it as a reader each call and answer as usual (recall searches an in-memory copy of an index
it cannot update); the write tools (remember, forget) fail with a tool error saying the
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
INSTRUCTIONS = (
    "evlog keeps the memory of past agent sessions (Claude Code, Codex, nanobot...) in an append-only log. "
    "Use recall to search what was said, decided or learned (every hit names its source), remember to note "
    "something worth keeping (Dream turns notes into MEMORY.md facts), why to see where a MEMORY.md line came "
    "from, forget to remove a wrong fact, and sessions / session_messages to read past conversations. "
    "Results are bounded: pass a result's 'more' value back as 'cursor' (or 'before') for the rest."
)


# --- result shapes (the tools' output schemas) ----------------------------------------------------


class RecallHit(TypedDict):
    """One search hit and its source (empty fields are left out)."""

    kind: str  # message, history or fact
    score: float
    seq: int  # the log seq of the event that holds it
    time: str
    text: str
    text_truncated: bool
    snippet: str  # the text around the matches, matches in [ ]
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
        page = [_hit(h) for h in ranked[offset:want]]
        kept = fit(page, self.budget, base=120)
        more = None
        if len(kept) < len(page) or (not exhausted and len(ranked) >= want):
            more = make_cursor("recall", req, o=offset + len(kept))
        return {"hits": kept, "more": more}

    def remember(self, text: str, project: str | None = None) -> RememberResult:
        from eventlog.errors import InvalidEventError
        from processors.dream import remember

        if len(text) > MAX_REMEMBER_CHARS:
            raise InvalidEventError(f"the note is {len(text)} characters; at most {MAX_REMEMBER_CHARS}: remember "
                                    "one thing at a time")
        ws = self.ws()
        end = ws.log.last_seq
        seq = remember(ws, text, project=_norm_project(project) or "", by="agent")
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
        done = set(memory.forget(ws, [f.fact_id for f in facts], reason=reason or "forgotten through MCP", by="agent"))
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
        return {"sessions": kept, "more": more}

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


def _hit(h: Any) -> RecallHit:
    text, cut = clip(h.text or "")
    hit: dict[str, Any] = {"kind": h.kind, "score": round(float(h.score), 4), "seq": h.seq, "time": h.time,
                           "text": text, "text_truncated": cut, "snippet": clip(h.snippet or "", 500)[0]}
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
    fmt = s.metadata.get("source_format") if isinstance(s.metadata, dict) else ""
    return {"key": s.key, "title": clip(s.title, 200)[0], "preview": clip(s.preview, 200)[0], "project": s.project,
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

    class EvlogServer(MCPServer):
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

    mcp = EvlogServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    mcp.backend = backend  # type: ignore[attr-defined]

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @mcp.tool(annotations=read_only)
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
        """Search everything evlog keeps (messages of past sessions, history, MEMORY.md facts), best first.

        Every hit names its source: session key, message id, time, or fact id (pass a fact id to why).
        """
        return _result(backend.call(backend.recall, query, scope, project, session, since, until, limit, cursor))

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                          open_world_hint=False))
    def remember(
        text: Annotated[str, Field(description="The note, e.g. 'The user prefers tabs' or a decision and its "
                                               "reason.", min_length=1, max_length=MAX_REMEMBER_CHARS)],
        project: Annotated[str | None, Field(description="The project the note is about (its absolute directory); "
                                                         "leave it out for facts about the user.")] = None,
    ) -> Annotated[CallToolResult, RememberResult]:
        """Note something for the long-term memory: Dream learns facts for MEMORY.md from it at its next run.

        Safe to retry: the same note for the same project is kept once.
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

        Give fact_id or match. The log keeps the fact and the forgetting (why explains it).
        """
        return _result(backend.call(backend.forget, fact_id, match, reason))

    @mcp.tool(annotations=read_only)
    def why(
        text: Annotated[str | None, Field(description="Part of a MEMORY.md line.")] = None,
        fact_id: Annotated[str | None, Field(description="A fact id (any state: active, superseded, forgotten, "
                                                         "archived).")] = None,
        cursor: Annotated[str | None, Field(description="The 'more' value of a previous result.")] = None,
    ) -> Annotated[CallToolResult, WhyResult]:
        """Explain MEMORY.md lines: who added the fact and when, the Dream run (model, prompt hash), the exact
        messages it came from and the facts it replaced or that replaced it."""
        return _result(backend.call(backend.why, text, fact_id, cursor))

    @mcp.tool(annotations=read_only)
    def sessions(
        limit: Annotated[int, Field(description="How many sessions.", ge=1, le=100)] = 20,
        project: Annotated[str | None, Field(description="Only sessions of this project (its absolute "
                                                         "directory).")] = None,
        cursor: Annotated[str | None, Field(description="The 'more' value of a previous result.")] = None,
    ) -> Annotated[CallToolResult, SessionsResult]:
        """List sessions (Claude Code, Codex, nanobot... conversations), most recently active first."""
        return _result(backend.call(backend.sessions, limit, project, cursor))

    @mcp.tool(annotations=read_only)
    def session_messages(
        key: Annotated[str, Field(description="The session key (from sessions or a recall hit).", min_length=1)],
        limit: Annotated[int, Field(description="How many messages.", ge=1, le=200)] = 20,
        before: Annotated[str | None, Field(description="Only messages before this message id (a previous result's "
                                                        "'more').")] = None,
    ) -> Annotated[CallToolResult, MessagesResult]:
        """Read a session: its newest messages (or those before a message id), oldest first."""
        return _result(backend.call(backend.session_messages, key, limit, before))

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

    return mcp


def serve_stdio(home: str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
                result_tokens: int = DEFAULT_RESULT_TOKENS) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    server = build_server(home, lock_timeout=lock_timeout, result_tokens=result_tokens)
    try:
        server.run("stdio")
    finally:
        server.backend.close()
