"""Reading a transcript file's JSON lines, and recognising its format from its first record.

``read_records`` yields ``(line number, decoded JSON)`` for every non-blank line. It
accepts a UTF-8 byte-order mark at the start and CRLF line ends, and rejects the file
at the first line that is not valid UTF-8 or not valid JSON (a truncated last line
included), naming the line. ``detect`` looks at the first record only: every supported
format says what it is on its first line.

=============  ==============================================================
format         first record
=============  ==============================================================
nanobot        ``{"_type": "metadata", "key": ...}``
codex          ``{"timestamp", "type": "session_meta" | "response_item" | ..., "payload"}``
claude-code    ``{"type": "<any string>", ...}`` with a ``uuid``, ``sessionId``,
               ``leafUuid`` or ``messageId`` (``user``, ``summary``,
               ``file-history-snapshot``, ``queue-operation``... and types Claude Code
               adds later)
catbuddy       ``{"key", "title", "preview", "created_at", ...}`` (no ``role``)
=============  ==============================================================
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

import msgspec

from eventlog.errors import IngestError
from eventlog.ingest.lines import iter_lines, long_line_warning
from eventlog.ingest.source import open_source

BOM = b"\xef\xbb\xbf"

CLAUDE_ID_FIELDS = ("uuid", "sessionId", "leafUuid", "messageId")
CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
CATBUDDY_FIELDS = ("title", "preview", "created_at", "updated_at", "last_consolidated", "metadata")

_decode = msgspec.json.decode


def read_records(path: str, *, warnings: list[str] | None = None, max_line: int | None = None
                 ) -> Generator[tuple[int, Any], None, None]:
    """``(line number, value)`` for each non-blank line; ``IngestError`` at the first bad one.

    Lines over ``max_line`` bytes (``lines.MAX_LINE_BYTES``) are never held whole: they are read
    with their long strings cut, or skipped (``eventlog.ingest.lines``), each with a line in
    ``warnings`` naming the file and line.
    """
    with open_source(path) as f:
        for lineno, ln in enumerate(iter_lines(f.fileno(), max_line=max_line), 1):
            if ln.oversized and warnings is not None:
                warnings.append(long_line_warning(path, lineno, ln, max_line))
            raw = ln.raw
            line = raw[3:] if lineno == 1 and raw.startswith(BOM) else raw
            line = line.rstrip(b"\r\n")
            if not line.strip():
                continue
            try:
                value = _decode(line)
            except msgspec.MsgspecError as e:
                raise IngestError(bad_line_reason(line, e, last=not ln.terminated), line=lineno) from None
            yield lineno, value


def bad_line_reason(line: bytes, err: Exception, *, last: bool) -> str:
    """Why ``line`` cannot be decoded, in words a user can act on."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as u:
        return f"invalid UTF-8 at byte {u.start} of the line"
    try:
        json.loads(text)
    except json.JSONDecodeError as j:
        if j.pos >= len(text.rstrip()) or j.msg.startswith("Unterminated string"):
            hint = " (the file ends mid-record: was it still being written?)" if last else ""
            return f"truncated JSON: the line ends before the record does{hint}"
        return f"invalid JSON: {j.msg} at column {j.colno}"
    except RecursionError:
        return "invalid JSON: nested too deeply"
    return f"invalid JSON: {err}"  # json accepts it, msgspec does not: lone surrogate, NaN, huge number


def detect(value: Any) -> str | None:
    """The format whose first line ``value`` looks like, or None."""
    if not isinstance(value, dict):
        return None
    if value.get("_type") == "metadata":
        return "nanobot"
    kind = value.get("type")
    if kind in CODEX_TYPES and "payload" in value:
        return "codex"
    if isinstance(kind, str) and any(k in value for k in CLAUDE_ID_FIELDS):
        return "claude-code"
    if isinstance(value.get("key"), str) and "role" not in value and any(k in value for k in CATBUDDY_FIELDS):
        return "catbuddy"
    return None


def describe(value: Any) -> str:
    """A short description of a record that is not a transcript line, for the error."""
    if isinstance(value, dict):
        keys = list(value)
        shown = ", ".join(repr(k) for k in keys[:6]) + (", ..." if len(keys) > 6 else "")
        return f"an object with keys {shown}" if keys else "an empty object"
    return {list: "a JSON list", str: "a JSON string", bool: "a JSON boolean"}.get(type(value), "a JSON number" if value is not None else "null")
