"""nanobot session files (``sessions/<channel>_<id>.jsonl``): one file, one session.

Mapping:

* **Line 1** is ``{"_type": "metadata", "key", "created_at", "updated_at",
  "metadata", "last_consolidated"}``. ``key`` (required, e.g. ``qq:<id>``,
  ``cli:direct``) is the session key, verbatim, as nanobot names the session.
  ``created_at`` and ``metadata`` go into ``session.created`` with
  ``"source_format": "nanobot"`` added to the metadata; the title is empty (nanobot
  has none). ``updated_at`` and ``last_consolidated`` are nanobot's bookkeeping and
  are not kept.
* **Every later line** is one OpenAI-style message: ``role`` (user, assistant,
  tool...), ``content`` (a string, ``null`` or a list of parts: text joined by a blank
  line, images as ``[image]``), ``timestamp`` (kept verbatim: nanobot writes naive
  local ISO times, and every message of one turn shares one), ``tool_calls`` (kept as
  given: ``[{"id", "type": "function", "function": {"name", "arguments"}}]``).
  Every other field (``tool_call_id``, ``name``, ``reasoning_content``...) goes into
  ``extra`` unchanged.
* **Message ids.** nanobot messages have none, so each gets a stable one: the xxh3-64
  of its role, content, timestamp, tool_call_id, name and tool_calls, with ``#2``,
  ``#3``... for repeats of an identical message (the scheduled-task prompts of a cron
  session repeat word for word). nanobot only ever appends to the list, so re-ingesting
  a grown file appends just the new lines. (If nanobot ever rewrote the head of a
  file, repeats could be renumbered and ingested twice.)
* Nothing is skipped except a second metadata line, which is noted. Content is kept
  byte for byte: U+FFFD runs from mis-decoded console output, ``\\r\\n`` inside
  strings and ANSI colour escapes are the source's text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from eventlog.ingest.model import (
    ParsedFile,
    ParsedMessage,
    ParsedSession,
    StableIds,
    expect_dict,
    fail,
    json_type,
    openai_text,
    opt_list,
    opt_str,
    req_str,
    timestamp_of,
)

FORMAT = "nanobot"
_MAPPED = frozenset({"role", "content", "timestamp", "tool_calls"})


def parse(records: Iterable[tuple[int, Any]], path: str) -> ParsedFile:  # noqa: ARG001
    """Parse one nanobot session file (see the module docstring)."""
    out = ParsedFile(FORMAT)
    it = iter(records)
    first = next(it, None)
    if first is None:
        return out
    line, head = first
    head = expect_dict(head, line, "the metadata line")
    if head.get("_type") != "metadata":
        fail(line, 'line 1 must be nanobot\'s metadata line {"_type": "metadata", "key": ...}')
    meta = head.get("metadata")
    meta = {} if meta is None else expect_dict(meta, line, "'metadata'")
    session = ParsedSession(
        key=req_str(head, "key", line),
        created_at=timestamp_of(head, line, "created_at"),
        metadata={**meta, "source_format": FORMAT},
    )
    timestamp_of(head, line, "updated_at")
    ids = StableIds()
    extra_meta = 0
    for line, value in it:
        msg = expect_dict(value, line, "a message line")
        if msg.get("_type") == "metadata":
            extra_meta += 1
            continue
        role = req_str(msg, "role", line)
        content = openai_text(msg.get("content"), line)
        timestamp = timestamp_of(msg, line)
        tool_calls = opt_list(msg, "tool_calls", line)
        for key in ("tool_call_id", "name"):
            opt_str(msg, key, line)
        if tool_calls is not None:
            for i, call in enumerate(tool_calls):
                if not isinstance(call, dict):
                    fail(line, f"tool_calls[{i}] must be an object, got {json_type(call)}")
        mid = ids.next([role, msg.get("content"), timestamp, msg.get("tool_call_id"), msg.get("name"), tool_calls])
        extra = {k: v for k, v in msg.items() if k not in _MAPPED}
        session.messages.append(ParsedMessage(mid, role, content, timestamp, tool_calls, extra, line))
    if extra_meta:
        out.notes.append(f"skipped {extra_meta} further metadata line(s) after line 1")
    out.sessions.append(session)
    return out
