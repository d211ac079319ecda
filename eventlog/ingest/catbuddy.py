"""catbuddy session files (also evlog's own ``sessions/*.jsonl``): one file, one session.

Mapping:

* **Line 1** is the session's metadata ``{"key", "title", "preview", "created_at",
  "updated_at", "last_consolidated", "metadata"}``. ``key`` (required) is the session
  key, verbatim: this is the harness's own key, so a session ingested from its file
  is the same session the harness writes to. ``title``, ``created_at`` and
  ``metadata`` go into ``session.created``; ``project`` is empty unless ``--project``
  is given. ``preview`` and ``updated_at`` are not kept: the sessions projection
  derives them from the messages. ``last_consolidated`` is not kept either: it is
  the harness's consolidation state, not evlog's (evlog's consolidator has not seen
  these messages yet).
* **Every later line** is one message ``{"id", "sessionKey", "role", "content",
  "timestamp", ...}``: ``id`` becomes ``message_id`` (a number is taken as its
  decimal text, and the number itself is kept in ``extra`` so the projected file
  shows it as the source wrote it, like a numeric timestamp or content given as a list
  of parts; a line without an id gets a stable hash id, see ``StableIds``),
  ``role``/``content``/``timestamp``/``tool_calls`` map to the fields of the same
  name, and every other field (``tool_call_id``, ``name``, ``reasoning_content``...)
  is kept in ``extra``, so ingesting a file evlog wrote gives back the same lines.
  ``sessionKey`` is not kept: the file's key wins (a different one is noted).
  ``content`` may be a string, ``null`` or a list of OpenAI-style parts (text parts
  joined by a blank line, images as ``[image]``).
* Nothing is skipped. A line that is not an object, a missing ``key`` or ``role``,
  or a field of the wrong type rejects the whole file.
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
from eventlog.source_values import evlog_id

FORMAT = "catbuddy"
_MAPPED = frozenset({"id", "sessionKey", "role", "content", "timestamp", "tool_calls"})


def parse(records: Iterable[tuple[int, Any]], path: str) -> ParsedFile:  # noqa: ARG001 - one signature for every format
    """Parse one catbuddy session file (see the module docstring)."""
    out = ParsedFile(FORMAT)
    it = iter(records)
    first = next(it, None)
    if first is None:
        return out
    line, head = first
    head = expect_dict(head, line, "the metadata line")
    if "role" in head:
        fail(line, "line 1 must be the session's metadata ({\"key\", \"title\", ...}), not a message")
    session = ParsedSession(
        key=req_str(head, "key", line),
        title=opt_str(head, "title", line),
        created_at=timestamp_of(head, line, "created_at"),
        metadata=dict(expect_dict({} if head.get("metadata") is None else head["metadata"], line, "'metadata'")),
    )
    opt_str(head, "preview", line)  # not kept, but a wrong type is still a malformed file
    timestamp_of(head, line, "updated_at")
    lc = head.get("last_consolidated")
    if lc is not None and (not isinstance(lc, int) or isinstance(lc, bool)):
        fail(line, f"'last_consolidated' must be an integer, got {json_type(lc)}")
    ids = StableIds()
    other_keys = 0
    for line, value in it:
        msg = expect_dict(value, line, "a message line")
        role = req_str(msg, "role", line)
        content = openai_text(msg.get("content"), line)
        timestamp = timestamp_of(msg, line)
        tool_calls = opt_list(msg, "tool_calls", line)
        skey = msg.get("sessionKey")
        if skey is not None and not isinstance(skey, str):
            fail(line, f"'sessionKey' must be a string, got {json_type(skey)}")
        if skey and skey != session.key:
            other_keys += 1
        extra = {k: v for k, v in msg.items() if k not in _MAPPED}
        mid = msg.get("id")
        if mid is None or mid == "":
            mid = ids.next({k: v for k, v in msg.items() if k != "sessionKey"})
        elif isinstance(mid, int) and not isinstance(mid, bool):
            extra["id"] = mid  # the file keeps the source's number (see projections.sessions.SOURCE_VALUE_KEYS)
            mid = evlog_id(mid)
        elif not isinstance(mid, str):
            fail(line, f"'id' must be a string or an integer, got {json_type(mid)}")
        for key in ("timestamp", "content"):
            value = msg.get(key)
            if value is not None and not isinstance(value, str):
                extra[key] = value  # a numeric time, content as parts: shown as written
        session.messages.append(ParsedMessage(mid, role, content, timestamp, tool_calls, extra, line))
    if other_keys:
        out.notes.append(f"{other_keys} message(s) name another sessionKey; kept in {session.key!r} (the file's key)")
    out.sessions.append(session)
    return out
