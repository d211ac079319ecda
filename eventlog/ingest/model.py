"""The neutral model every format parser produces, and the helpers the parsers share.

A parser turns one transcript file into a ``ParsedFile``: the sessions it holds (each a
``ParsedSession`` with its ``ParsedMessage`` list, in file order) plus, for Claude Code,
the ``Summary`` lines and the uuids it contains (so a summary in one file can title a
session in another). Nothing here knows about events or the log: ``eventlog.ingest``
turns the model into events. Parsers report a bad line by raising ``IngestError`` with
the 1-based line number and a reason; the caller adds the path.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NoReturn

import xxhash

from eventlog.codec import canonical_json
from eventlog.errors import IngestError
from eventlog.source_values import evlog_timestamp, part_text, parts_text


@dataclass
class ParsedMessage:
    """One message as the source gave it (``timestamp`` verbatim, ``content`` as text).

    ``version`` is empty for a message whose source lines can never change. A Claude
    Code response split over several lines gets the uuid of its last line here, so a
    response that gained lines since the last ingest is appended again (same
    ``message_id``, fuller content) instead of being lost.
    """

    message_id: str
    role: str
    content: str
    timestamp: str = ""
    tool_calls: list[Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    line: int = 0
    version: str = ""


@dataclass
class ParsedSession:
    """One conversation: its key, what the source says about it, and its messages."""

    key: str
    title: str = ""
    created_at: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    project: str = ""
    messages: list[ParsedMessage] = field(default_factory=list)


@dataclass
class Summary:
    """A Claude Code ``summary`` line: ``title`` for the session that holds ``leaf_uuid``."""

    leaf_uuid: str
    title: str
    line: int


@dataclass
class ParsedFile:
    """Everything one transcript file contributes."""

    format: str
    sessions: list[ParsedSession] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)
    #: uuid -> (session key, timestamp) of every Claude Code line that has a uuid
    uuids: dict[str, tuple[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: lines that could not be read as they are (over the line limit), ``path:line: what was done``
    warnings: list[str] = field(default_factory=list)


def fail(line: int, reason: str) -> NoReturn:
    """Reject the file at ``line`` (the caller adds the path)."""
    raise IngestError(reason, line=line)


def expect_dict(value: Any, line: int, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else reject the line naming ``what``."""
    if not isinstance(value, dict):
        fail(line, f"{what} must be a JSON object, got {json_type(value)}")
    return value


def opt_str(obj: dict[str, Any], key: str, line: int, *, default: str = "") -> str:
    """An optional string field (``null`` counts as missing)."""
    v = obj.get(key)
    if v is None:
        return default
    if not isinstance(v, str):
        fail(line, f"'{key}' must be a string, got {json_type(v)}")
    return v


def req_str(obj: dict[str, Any], key: str, line: int) -> str:
    """A required, non-empty string field."""
    v = obj.get(key)
    if not isinstance(v, str) or not v:
        got = "nothing" if key not in obj else json_type(v) if not isinstance(v, str) else "an empty string"
        fail(line, f"'{key}' must be a non-empty string, got {got}")
    return v


def timestamp_of(obj: dict[str, Any], line: int, key: str = "timestamp") -> str:
    """A timestamp as the source wrote it: strings verbatim, numbers as their JSON text."""
    v = obj.get(key)
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool):
        return evlog_timestamp(v)
    fail(line, f"'{key}' must be a string or a number, got {json_type(v)}")


def opt_list(obj: dict[str, Any], key: str, line: int) -> list[Any] | None:
    """An optional list field (``null`` counts as missing)."""
    v = obj.get(key)
    if v is None:
        return None
    if not isinstance(v, list):
        fail(line, f"'{key}' must be a list, got {json_type(v)}")
    return v


def openai_text(content: Any, line: int) -> str:
    """OpenAI-style ``content`` as text: a string, ``null`` (""), or a list of parts.

    Text parts are joined with a blank line; an image part becomes ``[image]``, any
    other part ``[<type>]``, so the text says something was there.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for i, part in enumerate(content):
            if part_text(part) is None:
                expect_dict(part, line, f"content part {i}")
        return parts_text(content)
    fail(line, f"'content' must be a string, a list of parts or null, got {json_type(content)}")


def json_type(v: Any) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    return "an object"


def compact_json(value: Any) -> str:
    """Compact JSON text (UTF-8 kept, keys in source order), e.g. tool arguments."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class StableIds:
    """Ids for messages that have none: a hash of what the message says, plus a counter.

    ``next(parts)`` hashes the canonical JSON of ``parts``; the first message with a
    given hash gets ``<16 hex>``, later identical ones ``<16 hex>#2``, ``#3``... in file
    order. The ids survive the file growing at the end (earlier lines keep theirs), so
    re-ingesting a grown file appends only the new lines.
    """

    def __init__(self) -> None:
        self._seen: Counter[str] = Counter()

    def next(self, parts: Any) -> str:
        h = xxhash.xxh3_64_hexdigest(canonical_json(parts))
        self._seen[h] += 1
        n = self._seen[h]
        return h if n == 1 else f"{h}#{n}"
