"""Claude Code transcripts (``~/.claude/projects/<project>/``): project folders or single files.

A project folder holds ``<sessionId>.jsonl`` files, subagent transcripts
(``<sessionId>/subagents/agent-<agentId>.jsonl`` in newer versions, ``agent-<agentId>.jsonl``
beside the sessions in 2.0.x), files holding only ``summary`` or
``file-history-snapshot`` lines, and empty files. Each file is parsed on its own;
``summary`` lines are matched to sessions across every file of the ingest run.

**Sessions.** A line belongs to the session ``claude-code:<sessionId>`` (its
``sessionId``; the file name without ``.jsonl`` if it has none). Subagent lines
(``isSidechain: true``) become sessions of their own, linked to the parent with
``metadata.parent_session``:

* with an ``agentId`` (every subagent file): ``claude-code:<sessionId>/agent-<agentId>``,
  where ``sessionId`` is that of the agent's first line (a 2.0.x warm-up agent file
  can name two). Warm-up probes (first message ``Warmup``) are kept and marked
  ``metadata.warmup: true``.
* without one (the older inline format, where Task agents write into the main file and
  each starts a new root with ``parentUuid: null``):
  ``claude-code:<sessionId>/sidechain-<root uuid>``, one session per root.

Session metadata: ``source_format``, ``sessionId``, and the first ``cwd``,
``gitBranch``, ``version``, ``slug`` seen, plus ``agentId``, ``parent_session``,
``sidechain_root``, ``warmup`` for subagents. ``project`` is the session's first
``cwd`` (an inline sidechain takes its parent's, as the agent may have changed
directory), unless ``--project`` is given; ``created_at`` is the earliest message
timestamp; the title is empty until a summary sets it (listings show the first real user
request first: ``projections.sessions.shown_title``; a summary only fills in for a session
without one).

**Messages**, in file order. Branches (rewinds, resumes: several children of one
parent) are flattened in file order; ``uuid`` and ``parentUuid`` stay in ``extra`` so
the tree can be rebuilt.

* ``user`` lines: string content is one user message. List content: each
  ``tool_result`` block becomes a ``tool`` message (content = its text, list results
  joined by newlines, images as ``[image]``; ``extra``: ``tool_call_id`` and
  ``tool_use_id`` (both the tool_use id), ``name`` (the tool's, when its call is in the
  file), ``is_error`` when set); runs of text blocks become a ``user`` message (joined
  by a blank line, images as ``[image]``). The line's first message has its ``uuid``
  as ``message_id``, further ones ``<uuid>#2``, ``#3``... Meta lines (``isMeta``: the
  local-command caveat, ``/clear``), the post-compaction summary
  (``isCompactSummary``) and interrupt markers (``[Request interrupted by user]``)
  stay user messages, with ``isMeta``/``isCompactSummary`` in ``extra``.
* ``system`` lines of subtype ``local_command`` (a slash command the user typed, such
  as ``/model``, and its output; 2.0.x wrote the same things as user lines) become
  user messages with ``extra.subtype: "local_command"``, content verbatim.
  ``toolUseResult`` (the harness's structured copy of the tool output) is not kept.
* ``assistant`` lines: one API response is written as several lines (one content block
  each) sharing ``message.id``, and in newer versions tool results are interleaved
  between them. Those lines become ONE assistant message, placed at its first line:
  text blocks joined by a blank line are the content (whitespace-only blocks, which
  Claude streams before thinking, are left out), ``tool_use`` (and
  ``server_tool_use``) blocks are ``tool_calls`` in the OpenAI shape every format uses
  (``{"id", "type": "function", "function": {"name", "arguments": "<input as JSON>"}}``),
  ``thinking`` blocks are NOT content (they are the model's scratch work; their text is
  kept in ``extra.thinking``); ``redacted_thinking`` is dropped. A response ends at the
  next user prompt or another response of the same session, so two responses never
  merge even when ids are redacted to one value. ``message_id`` is the first line's
  uuid; ``extra`` has ``uuid``, ``parentUuid``, ``model``, ``api_message_id``, and
  ``uuids`` (every line merged). A merged message's dedup version is its last line's
  uuid: if a response gains lines after an ingest (the file was still being written),
  the next ingest appends it again, complete, under the same ``message_id``.

**Skipped lines** (bookkeeping, not conversation; counted in the file's notes):
``progress`` (hook/bash/agent progress; agent progress repeats the subagent's own
transcript), ``file-history-snapshot`` (checkpoint backups), ``queue-operation``,
``last-prompt``, every other ``system`` line (``stop_hook_summary``, ``turn_duration``,
``compact_boundary``, API errors...), and line types this parser does not know
(Claude Code adds new ones; they are counted, not errors).

**Summaries.** ``{"type": "summary", "summary", "leafUuid"}`` titles the session that
contains the line ``leafUuid``, wherever it is in the run. A session with several
summaries (one per branch leaf) takes the one whose leaf is newest. A summary whose
leaf is in no session of the run is noted, not an error.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from typing import Any

from eventlog.ingest.model import (
    ParsedFile,
    ParsedMessage,
    ParsedSession,
    Summary,
    compact_json,
    expect_dict,
    fail,
    json_type,
    opt_str,
    timestamp_of,
)

FORMAT = "claude-code"
PREFIX = "claude-code:"
SKIPPED_TYPES = frozenset({"progress", "file-history-snapshot", "queue-operation", "last-prompt", "system"})
_META_FIELDS = ("cwd", "gitBranch", "version", "slug")


class _Line:
    """What the session assignment needs of a line that has a uuid."""

    __slots__ = ("agent", "parent", "sid", "side", "ts")

    def __init__(self, parent: str | None, side: bool, agent: str, sid: str, ts: str) -> None:
        self.parent, self.side, self.agent, self.sid, self.ts = parent, side, agent, sid, ts


class _Response:
    """An assistant message being assembled from the lines of one API response."""

    def __init__(self, api_id: str, msg: ParsedMessage) -> None:
        self.api_id = api_id
        self.msg = msg
        self.texts: list[str] = []
        self.thinking: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.uuids: list[str] = []


def parse(records: Iterable[tuple[int, Any]], path: str) -> ParsedFile:
    """Parse one Claude Code transcript file (see the module docstring)."""
    out = ParsedFile(FORMAT)
    stem = os.path.basename(path)
    stem = stem[: -len(".jsonl")] if stem.endswith(".jsonl") else stem
    lines: dict[str, _Line] = {}
    entries: list[tuple[int, dict[str, Any], str]] = []
    skipped: Counter[str] = Counter()
    for line, value in records:
        entry = _scan_line(value, line, stem, lines, out, skipped)
        if entry is not None:
            entries.append(entry)
    keys = _SessionKeys(lines)
    assembler = _Assembler(lines, keys)
    for line, rec, uuid in entries:
        assembler.add(line, rec, uuid)
    sessions = assembler.sessions
    for session in sessions.values():
        empty = _finish_session(session, sessions)
        if empty:
            skipped["empty assistant message"] += empty
    out.sessions = list(sessions.values())
    for uuid, ln in lines.items():
        key = keys.of(uuid)
        if key in sessions:
            out.uuids[uuid] = (key, ln.ts)
    if assembler.dropped_blocks:
        skipped.update({f"{k} block": n for k, n in assembler.dropped_blocks.items()})
    if skipped:
        out.notes.append("skipped " + ", ".join(f"{n} {k}" for k, n in sorted(skipped.items())))
    return out


def _scan_line(value: Any, line: int, stem: str, lines: dict[str, _Line], out: ParsedFile,
               skipped: Counter[str]) -> tuple[int, dict[str, Any], str] | None:
    """The first pass over one line: index its uuid in ``lines``, and return it when it is a message entry
    (a summary goes to ``out``, other types are counted in ``skipped``)."""
    rec = expect_dict(value, line, "a transcript line")
    kind = rec.get("type")
    if not isinstance(kind, str):
        fail(line, f"'type' must be a string, got {json_type(kind)}")
    if kind == "summary":
        _summary(rec, line, out)
        return None
    uuid = opt_str(rec, "uuid", line)
    if uuid:
        parent = opt_str(rec, "parentUuid", line) or None
        side = rec.get("isSidechain")
        if side is not None and not isinstance(side, bool):
            fail(line, f"'isSidechain' must be true or false, got {json_type(side)}")
        lines[uuid] = _Line(parent, bool(side), opt_str(rec, "agentId", line), opt_str(rec, "sessionId", line) or stem,
                            timestamp_of(rec, line))
    if kind in ("user", "assistant") or (kind == "system" and rec.get("subtype") == "local_command"):
        if not uuid:
            fail(line, f"a {kind} line needs a 'uuid'")
        return line, rec, uuid
    skipped[kind if kind in SKIPPED_TYPES else f"unknown type {kind!r}"] += 1
    return None


class _Assembler:
    """The second pass: the message entries, in file order, into sessions and their messages."""

    def __init__(self, lines: dict[str, _Line], keys: _SessionKeys) -> None:
        self.lines = lines
        self.keys = keys
        self.sessions: dict[str, ParsedSession] = {}
        self.open_responses: dict[str, _Response] = {}  # per session: the assistant response being assembled
        self.tool_names: dict[str, str] = {}
        self.dropped_blocks: Counter[str] = Counter()

    def add(self, line: int, rec: dict[str, Any], uuid: str) -> None:
        """One user, assistant or local-command line."""
        key = self.keys.of(uuid)
        session = self.sessions.get(key)
        if session is None:
            session = self.sessions[key] = _new_session(key, self.lines[uuid], self.keys)
        _note_meta(session, rec, line)
        base: dict[str, Any] = {"uuid": uuid}
        if self.lines[uuid].parent:
            base["parentUuid"] = self.lines[uuid].parent
        if rec["type"] == "system":  # a slash command or its output, typed by the user
            self.open_responses.pop(key, None)
            session.messages.append(ParsedMessage(uuid, "user", opt_str(rec, "content", line), timestamp_of(rec, line),
                                                  None, {**base, "subtype": "local_command"}, line))
            return
        message = expect_dict(rec.get("message"), line, "'message'")
        if rec["type"] == "user":
            self.user(session, key, rec, message, line, uuid, base)
        else:
            self.assistant(session, key, rec, message, line, uuid, base)

    def user(self, session: ParsedSession, key: str, rec: dict[str, Any], message: dict[str, Any], line: int,
             uuid: str, base: dict[str, Any]) -> None:
        content = message.get("content")
        if not (isinstance(content, list) and content
                and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)):
            self.open_responses.pop(key, None)  # a new prompt: the previous response is over
        for flag in ("isMeta", "isCompactSummary"):
            if rec.get(flag) is True:
                base[flag] = True
        session.messages.extend(_user_messages(content, line, uuid, timestamp_of(rec, line), base, self.tool_names))

    def assistant(self, session: ParsedSession, key: str, rec: dict[str, Any], message: dict[str, Any], line: int,
                  uuid: str, base: dict[str, Any]) -> None:
        """A line of an API response: a new assistant message, or a part of the open one (same API id)."""
        api_id = opt_str(message, "id", line)
        resp = self.open_responses.get(key)
        if resp is None or not api_id or resp.api_id != api_id:
            extra = dict(base)
            model = opt_str(message, "model", line)
            if model:
                extra["model"] = model
            if api_id:
                extra["api_message_id"] = api_id
            if rec.get("isApiErrorMessage") is True:
                extra["isApiErrorMessage"] = True
            resp = _Response(api_id, ParsedMessage(uuid, "assistant", "", timestamp_of(rec, line), None, extra, line))
            self.open_responses[key] = resp
            session.messages.append(resp.msg)
        _add_part(resp, message.get("content"), line, uuid, self.tool_names, self.dropped_blocks)


def _finish_session(session: ParsedSession, sessions: dict[str, ParsedSession]) -> int:
    """Set ``session``'s creation time, project and warmup mark; drop its empty assistant messages (how many)."""
    stamps = [m.timestamp for m in session.messages if m.timestamp]
    session.created_at = min(stamps) if stamps else ""
    parent_session = sessions.get(session.metadata.get("parent_session", ""))
    session.project = (parent_session.metadata.get("cwd", "") if parent_session
                       else session.metadata.get("cwd", ""))
    first = session.messages[0] if session.messages else None
    if session.metadata.get("agentId") and first and first.role == "user" and first.content == "Warmup":
        session.metadata["warmup"] = True
    empty = [m for m in session.messages
             if m.role == "assistant" and not m.content and not m.tool_calls and "thinking" not in m.extra]
    if empty:
        gone = {id(m) for m in empty}
        session.messages = [m for m in session.messages if id(m) not in gone]
    return len(empty)


def _summary(rec: dict[str, Any], line: int, out: ParsedFile) -> None:
    text = rec.get("summary")
    leaf = rec.get("leafUuid")
    if not isinstance(text, str):
        fail(line, f"a summary line's 'summary' must be a string, got {json_type(text)}")
    if leaf is not None and not isinstance(leaf, str):
        fail(line, f"'leafUuid' must be a string, got {json_type(leaf)}")
    if not leaf:
        out.notes.append(f"line {line}: summary without a leafUuid ignored")
        return
    out.summaries.append(Summary(leaf, text, line))


class _SessionKeys:
    """Which session each uuid'd line belongs to (see "Sessions" in the module docstring)."""

    def __init__(self, lines: dict[str, _Line]) -> None:
        self.lines = lines
        self.agent_sid: dict[str, str] = {}
        for ln in lines.values():  # dicts keep file order: the agent's first line wins
            if ln.side and ln.agent:
                self.agent_sid.setdefault(ln.agent, ln.sid)
        self._roots: dict[str, str] = {}

    def of(self, uuid: str) -> str:
        ln = self.lines[uuid]
        if not ln.side:
            return PREFIX + ln.sid
        if ln.agent:
            return f"{PREFIX}{self.agent_sid[ln.agent]}/agent-{ln.agent}"
        return f"{PREFIX}{ln.sid}/sidechain-{self.root(uuid)}"

    def root(self, uuid: str) -> str:
        """The first line of the inline sidechain ``uuid`` is on (parents followed within it)."""
        path = []
        seen = set()
        cur = uuid
        while cur not in self._roots:
            seen.add(cur)
            path.append(cur)
            parent = self.lines[cur].parent or ""
            pl = self.lines.get(parent) if parent else None
            if pl is None or not pl.side or pl.agent or parent in seen:
                self._roots[cur] = cur
                break
            cur = parent
        root = self._roots[cur]
        for u in path:
            self._roots[u] = root
        return root

    def parent_info(self, ln: _Line) -> dict[str, Any]:
        return {"parent_session": PREFIX + (self.agent_sid.get(ln.agent, ln.sid) if ln.agent else ln.sid)}


def _new_session(key: str, ln: _Line, keys: _SessionKeys) -> ParsedSession:
    meta: dict[str, Any] = {"source_format": FORMAT}
    if ln.side:
        meta["sessionId"] = keys.agent_sid.get(ln.agent, ln.sid) if ln.agent else ln.sid
        meta.update(keys.parent_info(ln))
        if ln.agent:
            meta["agentId"] = ln.agent
        else:
            meta["sidechain_root"] = key.rsplit("/sidechain-", 1)[1]
    else:
        meta["sessionId"] = ln.sid
    return ParsedSession(key=key, metadata=meta)


def _note_meta(session: ParsedSession, rec: dict[str, Any], line: int) -> None:
    for name in _META_FIELDS:
        if name not in session.metadata:
            v = rec.get(name)
            if v is not None:
                if not isinstance(v, str):
                    fail(line, f"'{name}' must be a string, got {json_type(v)}")
                if v:
                    session.metadata[name] = v


def _blocks(content: Any, line: int) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if not isinstance(content, list):
        fail(line, f"message.content must be a string or a list of blocks, got {json_type(content)}")
    return [expect_dict(b, line, f"message.content[{i}]") for i, b in enumerate(content)]


def _block_text(block: dict[str, Any], key: str, line: int) -> str:
    v = block.get(key)
    if not isinstance(v, str):
        fail(line, f"a {block.get('type')} block's '{key}' must be a string, got {json_type(v)}")
    return v


def _result_text(content: Any, line: int) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for b in _blocks(content, line):
        kind = b.get("type")
        if kind == "text":
            parts.append(_block_text(b, "text", line))
        elif kind == "image":
            parts.append("[image]")
        else:
            parts.append(f"[{kind}]" if isinstance(kind, str) else compact_json(b))
    return "\n".join(parts)


def _user_messages(content: Any, line: int, uuid: str, ts: str, base: dict[str, Any],
                   tool_names: dict[str, str]) -> list[ParsedMessage]:
    made: list[tuple[str, str, dict[str, Any]]] = []
    texts: list[str] = []

    def flush() -> None:
        if texts:
            made.append(("user", "\n\n".join(texts), {}))
            texts.clear()

    if isinstance(content, str):
        texts.append(content)
    for block in [] if isinstance(content, str) else _blocks(content, line):
        kind = block.get("type")
        if kind == "text":
            texts.append(_block_text(block, "text", line))
        elif kind == "image":
            texts.append("[image]")
        elif kind == "tool_result":
            flush()
            tid = opt_str(block, "tool_use_id", line)
            extra: dict[str, Any] = {"tool_call_id": tid, "tool_use_id": tid}
            if tid in tool_names:
                extra["name"] = tool_names[tid]
            if block.get("is_error") is True:
                extra["is_error"] = True
            made.append(("tool", _result_text(block.get("content"), line), extra))
        else:
            texts.append(f"[{kind}]" if isinstance(kind, str) else "[block]")
    flush()
    return [
        ParsedMessage(uuid if i == 0 else f"{uuid}#{i + 1}", role, text, ts, None, {**base, **extra}, line)
        for i, (role, text, extra) in enumerate(made)
    ]


def _add_part(resp: _Response, content: Any, line: int, uuid: str, tool_names: dict[str, str],
              dropped: Counter[str]) -> None:
    for block in _blocks(content, line):
        kind = block.get("type")
        if kind == "text":
            text = _block_text(block, "text", line)
            if text.strip():  # Claude often streams a lone "\n\n" block before thinking
                resp.texts.append(text)
        elif kind == "thinking":
            resp.thinking.append(_block_text(block, "thinking", line))
        elif kind in ("tool_use", "server_tool_use"):
            tid = opt_str(block, "id", line)
            name = _block_text(block, "name", line)
            tool_names[tid] = name
            resp.calls.append({"id": tid, "type": "function",
                               "function": {"name": name, "arguments": compact_json(block.get("input", {}))}})
        else:
            dropped[kind if isinstance(kind, str) else "untyped"] += 1
    resp.uuids.append(uuid)
    msg = resp.msg
    msg.content = "\n\n".join(resp.texts)
    msg.tool_calls = list(resp.calls) or None
    if resp.thinking:
        msg.extra["thinking"] = "\n\n".join(resp.thinking)
    if len(resp.uuids) > 1:
        msg.extra["uuids"] = list(resp.uuids)
        msg.version = uuid
