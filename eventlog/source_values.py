"""A message's source values (as a transcript wrote them) and evlog's values of the same fields.

A seed-format (catbuddy) transcript may number its messages (``"id": 1``), time them with a
number and give ``content`` as a list of OpenAI-style parts. Ingest stores evlog's values in
the event (``message_id`` "1", the time's JSON text, the parts' text) and keeps the source's
own values in ``extra`` under the same keys; the session file shows the source's values
(``projections.sessions.SOURCE_VALUE_KEYS``). This module is the one place both directions
are defined, so ingest and every reader of a session file agree: ``evlog_id``,
``evlog_timestamp`` and ``parts_text`` turn a source value into evlog's.
"""

from __future__ import annotations

from typing import Any

from eventlog.codec import canonical_json


def evlog_id(value: Any) -> str:
    """A message id as evlog keeps it: a string as it is, a number as its decimal text."""
    return value if isinstance(value, str) else str(value)


def evlog_timestamp(value: Any) -> str:
    """A timestamp as evlog keeps it: a string as it is, a number as its JSON text, ``null`` as ""."""
    if value is None:
        return ""
    return value if isinstance(value, str) else canonical_json(value).decode()


def part_text(part: Any) -> str | None:
    """One content part as text (``[image]``, ``[<type>]`` for a part without text); None if not a part."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return None
    if isinstance(part.get("text"), str):
        return str(part["text"])
    kind = part.get("type")
    if isinstance(kind, str) and "image" in kind:
        return "[image]"
    return f"[{kind if isinstance(kind, str) else 'part'}]"


def parts_text(content: Any) -> str:
    """Content as evlog keeps it: a string as it is, ``null`` as "", parts joined by a blank line."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n\n".join(part_text(p) or "" for p in content)
    return content if isinstance(content, str) else str(content)
