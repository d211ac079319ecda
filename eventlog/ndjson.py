"""Events from NDJSON input (what ``evlog append`` reads), checked strictly.

Each non-blank line is one JSON object ``{"type": ..., <fields>}``. ``seq``, ``ts`` and
the framing members are assigned by the log and may not be given; only the input event
types (``eventlog.validate.INPUT_TYPES``: sessions, messages, notes) are accepted unless
the caller asks for every type on purpose. ``iter_events`` streams: a bad line raises
``InvalidEventError`` naming the source, the line number and the field when it is
reached, so memory stays bounded on any input; ``parse_events`` reads everything first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import msgspec

from eventlog.errors import InvalidEventError
from eventlog.events import RESERVED_TYPES, TYPES_BY_TAG, Event
from eventlog.validate import check_input_type, plain_message, validate_event

_ASSIGNED = ("seq", "ts", "h", "more")
#: the members a line of each type may hold: its fields but the ones the log assigns, and ``type``
_ALLOWED = {tag: frozenset(cls.__struct_fields__).difference(_ASSIGNED) | {"type"} for tag, cls in TYPES_BY_TAG.items()}
_AT_PATH = re.compile(r"- at `\$\.?([^`]*)`")
_MISSING = re.compile(r"missing required field `([^`]+)`")


def iter_events(lines: Iterable[bytes], source: str = "<stdin>", *,
                any_type: bool = False) -> Iterator[tuple[int, int, Event]]:
    """``(line number, line length, event)`` for each non-blank line, validated as it is read."""
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        yield lineno, len(raw), parse_event(raw, source, lineno, any_type=any_type)


def parse_events(lines: Iterable[bytes], source: str = "<stdin>", *, any_type: bool = False) -> list[Event]:
    """Parse and validate every line; raise on the first bad one."""
    return [ev for _n, _size, ev in iter_events(lines, source, any_type=any_type)]


def _bad_member(obj: dict[str, object], tag: str, cls: type[Event]) -> tuple[str, str]:
    """The first member of ``obj`` a line of ``tag`` may not hold, and why (assigned fields first)."""
    for name in _ASSIGNED:
        if name in obj:
            return name, "is assigned by the log; remove it from the input"
    name = next(n for n in obj if n not in _ALLOWED[tag])
    return name, f"unknown field for {tag} (fields: {', '.join(f for f in cls.__struct_fields__ if f not in _ASSIGNED)})"


def parse_event(raw: bytes, source: str = "<input>", lineno: int = 1, *, any_type: bool = False) -> Event:
    """Parse one NDJSON line into an event (see module docstring)."""

    def bad(msg: str, field: str = "") -> InvalidEventError:
        where = f"{source} line {lineno}" + (f", field `{field}`" if field else "")
        return InvalidEventError(f"{where}: {msg}", source=source, line=lineno, field=field)

    try:
        obj = msgspec.json.decode(raw)
    except msgspec.DecodeError as e:
        raise bad(f"not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise bad(f"expected a JSON object, got {type(obj).__name__}")
    tag = obj.get("type")
    if not isinstance(tag, str):
        raise bad("missing or non-string event type", "type")
    cls = TYPES_BY_TAG.get(tag)
    if cls is None:
        raise bad(f"unknown event type {tag!r} (known: {', '.join(sorted(TYPES_BY_TAG))})", "type")
    if tag in RESERVED_TYPES:
        raise bad(f"{tag!r} events are written by the log itself", "type")
    refused = None if any_type else check_input_type(tag)
    if refused:
        raise bad(refused, "type")
    if not _ALLOWED[tag].issuperset(obj):  # one set operation for the common case: nothing to say
        name, why = _bad_member(obj, tag, cls)
        raise bad(why, name)
    try:
        ev = msgspec.convert(obj, cls)
    except msgspec.ValidationError as e:
        text = str(e)
        m = _AT_PATH.search(text) or _MISSING.search(text)
        field = m.group(1) if m else ""
        raise bad(_AT_PATH.sub("", text).strip(), field) from None
    if plain_message(ev):
        return ev  # a message whose fields pass validate_event (validate.plain_message proves it)
    try:
        validate_event(ev)
    except InvalidEventError as e:
        raise bad(str(e).split(": ", 1)[-1], e.field) from None
    return ev
