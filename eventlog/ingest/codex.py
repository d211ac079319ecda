"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): one file, one session.

Every line is ``{"timestamp", "type", "payload"}``. Mapping:

* **session_meta** (the first line) names the session: key ``codex:<payload.id>``,
  ``created_at`` = ``payload.timestamp`` (else the line's), project = ``payload.cwd``
  (unless ``--project`` is given), and the metadata ``{"source_format": "codex",
  "session_id", "cwd", "originator", "cli_version", "source", "model_provider",
  "git", "model"}`` (those present; ``model`` from the first ``turn_context``). The
  base instructions are not kept. A later ``session_meta`` (a resumed or forked
  rollout repeats its ancestors') is skipped and noted.
* **response_item** lines are the transcript, each one message, timestamp = the
  line's ``timestamp``:

  - ``message``: role ``user``/``assistant`` as is, ``developer`` becomes ``system``;
    content = the text of its ``input_text``/``output_text`` parts joined by a blank
    line (images as ``[image]``). Text Codex injects is kept verbatim (it is what the
    model saw) and marked as harness text: ``extra`` gets ``isMeta: true`` (the flag the
    extractor, titles and recall already treat as "not typed by the user", as for Claude
    Code's meta lines) and ``harness`` naming what it is: ``developer`` (the developer
    prompt: permissions, collaboration mode), ``environment_context``,
    ``user_instructions``, ``agents_md`` (``# AGENTS.md instructions for ...``) or
    ``turn_aborted`` (``HARNESS_TURNS``: a user turn that *starts* with one of them). ``phase`` goes into ``extra``, and so does ``model``
    (from the latest ``turn_context``) on assistant messages.
  - ``function_call`` / ``custom_tool_call`` / ``local_shell_call``: an assistant
    message with empty content and one tool call in the OpenAI shape every format
    uses, ``{"id": call_id, "type": "function", "function": {"name", "arguments"}}``
    (``arguments`` is the call's JSON text; a local shell call is named
    ``local_shell`` with its ``action`` as arguments).
  - ``function_call_output`` / ``custom_tool_call_output``: a ``tool`` message whose
    content is the output text, with ``tool_call_id`` in ``extra``.
  - ``reasoning`` is skipped, like Claude's thinking (the summaries are the model's
    scratch work and the rest is encrypted); other item types (web search calls...)
    are skipped and counted in the notes.

* **event_msg** lines are skipped: they are the UI's stream and repeat the
  transcript (``user_message`` is the user's prompt a second time, ``agent_message``
  the assistant's answer) or are bookkeeping (``token_count``, ``task_started``...).
  So the user's prompt appears once. **turn_context** only supplies ``model``;
  **compacted** is skipped.
* **Message ids.** Rollout items have none, so each gets a stable hash of its kind,
  role, text, call id and timestamp (``#2``... for exact repeats); a rollout only
  grows, so re-ingesting it appends only the new items.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from eventlog.codec import canonical_json
from eventlog.harness import CODEX_TURNS
from eventlog.ingest.model import (
    ParsedFile,
    ParsedMessage,
    ParsedSession,
    StableIds,
    compact_json,
    expect_dict,
    fail,
    json_type,
    opt_str,
    req_str,
    timestamp_of,
)

FORMAT = "codex"
ROLE_MAP = {"developer": "system"}
_META_KEYS = ("cwd", "originator", "cli_version", "source", "model_provider", "git")
_CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
#: User turns Codex writes itself: how their text starts -> the name stored in ``extra["harness"]``.
HARNESS_TURNS = CODEX_TURNS


def harness_name(role: str, text: str) -> str | None:
    """What Codex injected this message as (None: the user or the model wrote it)."""
    if role == "developer":
        return "developer"
    if role == "user":
        head = text.lstrip()
        for prefix, name in HARNESS_TURNS:
            if head.startswith(prefix):
                return name
    return None


def _parts_text(content: Any, line: int) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        fail(line, f"payload.content must be a list of parts, got {json_type(content)}")
    texts = []
    for i, part in enumerate(content):
        p = expect_dict(part, line, f"payload.content[{i}]")
        kind = p.get("type")
        text = p.get("text")
        if text is not None:
            if not isinstance(text, str):
                fail(line, f"payload.content[{i}].text must be a string, got {json_type(text)}")
            texts.append(text)
        elif isinstance(kind, str) and "image" in kind:
            texts.append("[image]")
        else:
            texts.append(f"[{kind if isinstance(kind, str) else 'part'}]")
    return "\n\n".join(texts)


def _output_text(output: Any, line: int) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return output["content"]
    if isinstance(output, list):
        return _parts_text(output, line)
    return "" if output is None else compact_json(output)


def parse(records: Iterable[tuple[int, Any]], path: str) -> ParsedFile:  # noqa: ARG001
    """Parse one Codex rollout (see the module docstring)."""
    out = ParsedFile(FORMAT)
    session: ParsedSession | None = None
    ids = StableIds()
    model = ""
    skipped: Counter[str] = Counter()
    for line, value in records:
        rec = expect_dict(value, line, "a rollout line")
        kind = req_str(rec, "type", line)
        payload = expect_dict(rec.get("payload"), line, "'payload'")
        ts = timestamp_of(rec, line)
        if kind == "session_meta":
            if session is not None:
                skipped["session_meta (repeated)"] += 1
                continue
            sid = req_str(payload, "id", line)
            meta: dict[str, Any] = {"source_format": FORMAT, "session_id": sid}
            for key in _META_KEYS:
                if payload.get(key) is not None:
                    meta[key] = payload[key]
            session = ParsedSession(
                key=f"codex:{sid}",
                created_at=timestamp_of(payload, line) or ts,
                metadata=meta,
                project=opt_str(payload, "cwd", line),
            )
            out.sessions.append(session)
            continue
        if session is None:
            fail(line, f"a Codex rollout starts with a session_meta line, found {kind!r} first")
        if kind == "turn_context":
            model = opt_str(payload, "model", line) or model
            if model and "model" not in session.metadata:
                session.metadata["model"] = model
            continue
        if kind != "response_item":
            skipped[kind] += 1
            continue
        item = opt_str(payload, "type", line)
        msg = _item_message(item, payload, line, ts, model)
        if msg is None:
            skipped[f"response_item {item or '(untyped)'}"] += 1
            continue
        msg.message_id = ids.next([item, msg.role, msg.content, msg.extra.get("tool_call_id"),
                                   canonical_json(msg.tool_calls).decode() if msg.tool_calls else None, ts])
        session.messages.append(msg)
    if skipped:
        out.notes.append("skipped " + ", ".join(f"{n} {k}" for k, n in sorted(skipped.items())))
    return out


def _item_message(item: str, payload: dict[str, Any], line: int, ts: str, model: str) -> ParsedMessage | None:
    if item == "message":
        role = req_str(payload, "role", line)
        extra: dict[str, Any] = {}
        if payload.get("phase") is not None:
            extra["phase"] = payload["phase"]
        if role == "assistant" and model:
            extra["model"] = model
        text = _parts_text(payload.get("content"), line)
        injected = harness_name(role, text)
        if injected:
            extra.update(isMeta=True, harness=injected)
        return ParsedMessage("", ROLE_MAP.get(role, role), text, ts, None, extra, line)
    if item in _CALLS:
        call_id = opt_str(payload, "call_id", line) or opt_str(payload, "id", line)
        if item == "local_shell_call":
            name, args = "local_shell", compact_json(payload.get("action"))
        else:
            name = req_str(payload, "name", line)
            raw = payload.get("arguments" if item == "function_call" else "input")
            args = raw if isinstance(raw, str) else compact_json(raw)
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
        return ParsedMessage("", "assistant", "", ts, [call], {"model": model} if model else {}, line)
    if item in _OUTPUTS:
        call_id = opt_str(payload, "call_id", line)
        return ParsedMessage("", "tool", _output_text(payload.get("output"), line), ts, None, {"tool_call_id": call_id}, line)
    return None
