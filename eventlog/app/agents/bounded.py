"""Small, bounded tool results: clipped texts, a byte budget per result, and opaque "more" cursors.

An agent reads every byte a tool returns, so every MCP result has a budget (tokens,
counted as UTF-8 bytes of its JSON / 4, what a tokenizer gives for English text and
code). Long texts are clipped (with a ``truncated`` flag), lists are cut to what fits,
and a cursor lets the caller ask for the rest. A cursor is opaque base64url JSON bound
to the request it continues (a hash of its arguments): one from another request is
refused with a clear message instead of paging through the wrong thing.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import xxhash

DEFAULT_RESULT_TOKENS = 4000
BYTES_PER_TOKEN = 4
MAX_TEXT_CHARS = 2000


class CursorError(ValueError):
    """A cursor that is not one this server gave for this request."""


def clip(text: str, limit: int = MAX_TEXT_CHARS) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut), and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[: max(limit - 1, 0)] + "…", True


def json_size(value: Any) -> int:
    """UTF-8 bytes of ``value`` as compact JSON."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def fit(items: list[Any], budget_bytes: int, *, base: int = 0) -> list[Any]:
    """The longest prefix of ``items`` whose JSON fits ``budget_bytes`` (with ``base`` already used); at least one."""
    out: list[Any] = []
    used = base
    for item in items:
        size = json_size(item) + 1
        if out and used + size > budget_bytes:
            break
        out.append(item)
        used += size
    return out


def request_hash(*parts: Any) -> str:
    """A short hash of a request's arguments (what a cursor is bound to)."""
    return xxhash.xxh3_64_hexdigest(json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str).encode())[:12]


def make_cursor(kind: str, request: str, **position: Any) -> str:
    """An opaque cursor for ``kind`` continuing ``request`` at ``position``."""
    raw = json.dumps({"k": kind, "r": request, **position}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_cursor(cursor: str, kind: str, request: str) -> dict[str, Any]:
    """The position a cursor holds; ``CursorError`` if it is not one of ours for this request."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
    except (ValueError, TypeError):
        raise CursorError("the cursor is not one this server gave: pass the 'more' value of the previous "
                          "result unchanged") from None
    if not isinstance(data, dict) or data.get("k") != kind:
        raise CursorError(f"the cursor belongs to another tool, not {kind!r}")
    if data.get("r") != request:
        raise CursorError("the cursor belongs to a request with other arguments; repeat the same arguments "
                          "with it, or leave it out to start again")
    return data
