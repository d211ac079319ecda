"""Validation at the door: an event the log accepts is one every projection can fold (INVARIANTS I21).

Every append goes through two checks before a byte is written:

* ``validate_event`` (here): the rules msgspec types cannot say. Counts, offsets and
  seqs are integers in ``[0, 2**63)``; names that become parts of file names or of
  rendered lines are bounded tokens (roles, processors, run ids, segment names); dates
  that name diary files are real calendar dates ``YYYY-MM-DD``; keys and ids have a
  size limit (``MAX_KEY_CHARS``; texts are kept whole); a fact's scope is ``user`` or ``project``. Times a source wrote
  (``timestamp``, ``created_at``, ``updated_at``) are kept as written, whatever they
  say: projections read them through ``timeutil.normalize_time``, which never raises
  and ignores what is not a real time within the sane window.
* the writer's type check: the framed line is decoded back into its event type before
  it is written, so a field of the wrong shape (``tool_calls`` an object, a list where
  a dict belongs, a value JSON cannot hold) is refused with the field's path. A
  ``message.appended`` whose fields hold exactly their declared types skips the decode,
  which could not fail.

``plain_message`` is the hot path of both: one pass over a ``message.appended`` that says
True only when both checks would pass (its fields hold exactly their declared types, keys
within the limit, a common role); the writer then skips them. Anything else, or any
doubt, takes both checks. tests/repo/test_type_check.py proves the implication over arbitrary
field values.

Both raise ``InvalidEventError`` naming the field; nothing is written. Events that older
versions accepted are still read (and projections must fold them anyway); this only
decides what gets in from now on.

``INPUT_TYPES`` are the events a user may append by hand (``evlog append``): sessions,
messages and notes. The others describe what processors and the log did (offsets, diary
lines, Dream's runs, recoveries): only the library writes them, on purpose.
"""

from __future__ import annotations

import re
import typing
from datetime import date

import msgspec

from eventlog.codec import DECODER, stamp_and_frame
from eventlog.errors import InvalidEventError
from eventlog.events import (
    EVENT_TYPES,
    CursorAdvanced,
    DiaryAppended,
    DiaryDigested,
    DiaryLines,
    DiaryTrimmed,
    DreamStarted,
    ErasureRecorded,
    Event,
    MemoryAppended,
    MessageAppended,
    OffsetCommitted,
    OffsetReset,
    RecordErased,
    Replica,
)

#: Event types ``evlog append`` accepts: what a harness or a user may say happened.
INPUT_TYPES = frozenset({"session.created", "session.updated", "session.deleted", "message.appended",
                         "message.updated", "history.appended"})

MAX_KEY_CHARS = 4096  # session keys, message ids, dedup keys, fact ids
MAX_TOKEN_CHARS = 128
MAX_INT = 2**63
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+/-]*")
_ROLE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_SEGMENT = re.compile(r"\d{20}\.jsonl")
_KEY_FIELDS = ("session_key", "message_id", "fact_id", "entry_id", "dedup")
_TOKEN_FIELDS = ("processor", "run_id", "source")
FIRST_YEAR, LAST_YEAR = 1970, 9999


def valid_date(text: str) -> bool:
    """True for a real calendar date ``YYYY-MM-DD`` from 1970 on (what may name a diary file)."""
    if not _DATE.fullmatch(text):
        return False
    try:
        d = date(int(text[:4]), int(text[5:7]), int(text[8:10]))
    except ValueError:
        return False
    return FIRST_YEAR <= d.year <= LAST_YEAR


def _bad(ev: Event, where: str, field: str, why: str) -> InvalidEventError:
    prefix = f"{where}: " if where else ""
    return InvalidEventError(f"{prefix}{ev.type} field `{field}`: {why}", field=field)


def _plan(cls: type[Event]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The fields of ``cls`` the generic rules look at: integers, keys (length) and names (tokens)."""
    hints = typing.get_type_hints(cls)
    fields = cls.__struct_fields__
    return (tuple(n for n in fields if hints[n] is int and n != "seq"),
            tuple(n for n in _KEY_FIELDS if n in fields), tuple(n for n in _TOKEN_FIELDS if n in fields))


_PLANS = {cls: _plan(cls) for cls in EVENT_TYPES}


#: roles that need no pattern check (any other role is checked by ``validate_event``)
_COMMON_ROLES = frozenset({"user", "assistant", "system", "tool", "developer", "function"})


def plain_message(ev: Event) -> bool:
    """True when ``ev`` is a ``message.appended`` that passes ``validate_event`` and whose framed
    line would decode back (see the module docstring): every field is checked by type identity
    (a subclass, a bool for an int, anything else answers False), keys within ``MAX_KEY_CHARS``,
    a common role; the nested values of ``tool_calls`` and ``extra`` are declared ``Any``
    (whatever JSON encoded, JSON decodes), and ``extra``'s keys need no look: any key JSON
    can encode is a JSON string, which decodes as the declared ``str``."""
    return (type(ev) is MessageAppended and ev.replica is None and type(ev.session_key) is str and len(ev.session_key) <= MAX_KEY_CHARS
            and type(ev.message_id) is str and len(ev.message_id) <= MAX_KEY_CHARS
            and type(ev.role) is str and ev.role in _COMMON_ROLES and type(ev.content) is str
            and type(ev.timestamp) is str and type(ev.dedup) is str and len(ev.dedup) <= MAX_KEY_CHARS
            and (ev.tool_calls is None or type(ev.tool_calls) is list) and type(ev.extra) is dict
            and type(ev.redacted) is list and (not ev.redacted or all(type(k) is str for k in ev.redacted)))


#: what the encoder raises for a value JSON cannot hold (lone surrogates, cycles, unknown types)
UNWRITABLE = (UnicodeEncodeError, RecursionError, TypeError, OverflowError, ValueError)


def unwritable(event: Event, e: BaseException) -> InvalidEventError:
    """The refusal of an event the encoder raised ``e`` (one of ``UNWRITABLE``) for."""
    return InvalidEventError(f"{event.type}: cannot be written as JSON: {e}")


def frame_checked(event: Event, seq: int, ts: bytes, more: int = 0) -> bytes:
    """``codec.stamp_and_frame``, refusing what JSON cannot hold (``UNWRITABLE``); the writer's
    one-event path spells this out inline (one call less per append)."""
    try:
        return stamp_and_frame(event, seq, ts, more)
    except UNWRITABLE as e:
        raise unwritable(event, e) from None


def check_types(lines: list[bytes], events: list[Event]) -> None:
    """The writer's type check: decode framed lines back into their types, so a field of the wrong
    shape is refused (naming its path) before anything is written."""
    if len(lines) > 1:
        try:
            DECODER.decode_lines(b"".join(lines))
            return
        except msgspec.MsgspecError:
            pass
    for line, ev in zip(lines, events, strict=True):
        try:
            DECODER.decode(line)
        except msgspec.MsgspecError as e:
            text = str(e)
            field = text.rsplit("$.", 1)[-1].rstrip("`") if "$." in text else ""
            raise InvalidEventError(f"{ev.type}: {text}; nothing was written", field=field) from None


def _check_replica(ev: Event, where: str) -> None:
    """A received event's origin (``eventlog.replication``): seq and clock are integers in ``[0, 2**63)``."""
    rep = ev.replica
    for name in ("seq", "hlc"):
        value = getattr(rep, name)
        if type(value) is int and not 0 <= value < MAX_INT:
            raise _bad(ev, where, f"replica.{name}", f"{value} is not an integer in [0, 2**63)")


def validate_event(ev: Event, *, where: str = "") -> None:
    """Raise ``InvalidEventError`` if ``ev`` may not enter the log (see the module docstring)."""
    if isinstance(ev.replica, Replica):  # any other value is refused by the writer's type check
        _check_replica(ev, where)
    if type(ev) is MessageAppended:  # the hot path: most events are messages
        _check_message(ev, where)
        return
    plan = _PLANS.get(type(ev))
    if plan is None:
        prefix = f"{where}: " if where else ""
        raise InvalidEventError(f"{prefix}not an event of the catalogue: {ev!r:.200}")
    _check_fields(ev, where, plan)
    _check_rules(ev, where)


def _check_message(ev: MessageAppended, where: str) -> None:
    for value, name in ((ev.session_key, "session_key"), (ev.message_id, "message_id"), (ev.dedup, "dedup")):
        if type(value) is str and len(value) > MAX_KEY_CHARS:
            raise _bad(ev, where, name, f"{len(value)} characters; at most {MAX_KEY_CHARS}")
    if type(ev.role) is str and not _ROLE.fullmatch(ev.role):
        raise _bad(ev, where, "role", f"{ev.role!r:.80} is not a role (a word such as user, assistant, system, tool)")


def _check_fields(ev: Event, where: str, plan: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]) -> None:
    """The type's integer, key and token fields (see ``_plan``)."""
    ints, keys, tokens = plan
    for name in ints:
        value = getattr(ev, name)
        if type(value) is int and not 0 <= value < MAX_INT:
            raise _bad(ev, where, name, f"{value} is not an integer in [0, 2**63)")
    for name in keys:
        value = getattr(ev, name)
        if type(value) is str and len(value) > MAX_KEY_CHARS:
            raise _bad(ev, where, name, f"{len(value)} characters; at most {MAX_KEY_CHARS}")
    for name in tokens:
        value = getattr(ev, name)
        if type(value) is str and value and not _is_token(value):
            raise _bad(ev, where, name, f"{value!r:.80} is not a name (letters, digits and _.:@+/-, at most {MAX_TOKEN_CHARS})")


def _check_rules(ev: Event, where: str) -> None:
    """The rules of one event type that its fields' types cannot say."""
    match ev:
        case MemoryAppended():
            if ev.scope not in ("user", "project"):
                raise _bad(ev, where, "scope", f"{ev.scope!r:.80} is neither 'user' nor 'project'")
            if type(ev.section) is str and ("\n" in ev.section or len(ev.section) > 200):
                raise _bad(ev, where, "section", "a section name is one line of at most 200 characters")
        case DiaryAppended() | DiaryTrimmed() | DiaryDigested() | DiaryLines() if not valid_date(ev.date):
            raise _bad(ev, where, "date", f"{ev.date!r:.80} is not a calendar date YYYY-MM-DD")
        case DiaryLines():
            _check_diary_lines(ev, where)
        case OffsetReset() if ev.date and not valid_date(ev.date):
            raise _bad(ev, where, "date", f"{ev.date!r:.80} is not a calendar date YYYY-MM-DD")
        case OffsetCommitted() if not _SEGMENT.fullmatch(ev.segment):
            raise _bad(ev, where, "segment", f"{ev.segment!r:.80} is not a segment file name")
        case CursorAdvanced() if ev.from_cursor > ev.to_cursor:
            raise _bad(ev, where, "to_cursor", f"{ev.to_cursor} is before from_cursor {ev.from_cursor}")
        case DreamStarted() if not ev.run_id:
            raise _bad(ev, where, "run_id", "a run needs an id")
        case RecordErased():
            raise _bad(ev, where, "type", "log.erased lines are written in place by an erasure (eventlog.erasure), never appended")
        case ErasureRecorded() if len(ev.seqs) != len(ev.markers):
            raise _bad(ev, where, "markers", f"{len(ev.markers)} marker checksum(s) for {len(ev.seqs)} seq(s)")
        case _:
            pass


_HASH128_KEY = re.compile(r"xxh3_128:[0-9a-f]{32}")
_HASH128_KEYS = re.compile(r"xxh3_128:[0-9a-f]{32}(?:\nxxh3_128:[0-9a-f]{32})*")  # joined by newlines


def _hash_keys_only(keys: list[str]) -> bool:
    """Every key is ``xxh3_128:<32 hex>``: joined, they match the pattern and have no newline of their own."""
    joined = "\n".join(keys)
    return len(joined) == 42 * len(keys) - 1 and _HASH128_KEYS.fullmatch(joined) is not None


def _diary_lines_plainly_fine(ev: DiaryLines) -> bool:
    """True when every item passes ``_check_diary_lines``, found with a few whole-list operations (a
    snapshot's event holds hundreds of lines); False sends it to the item-by-item checks, which name the item."""
    try:
        text = "".join(ev.lines)
        seqs = ev.source_seqs
        return ("\n" not in text and "\r" not in text and (not seqs or (min(seqs) >= 0 and max(seqs) < MAX_INT))
                and all(not values or max(map(len, values)) <= MAX_KEY_CHARS
                        for values in (ev.session_keys, ev.message_ids, ev.roles))
                and (not ev.dedup_keys or _hash_keys_only(ev.dedup_keys)))
    except TypeError:  # an item of the wrong type: the item-by-item checks skip it, the writer's type check refuses it
        return False


def _check_diary_lines(ev: DiaryLines, where: str) -> None:
    """Parallel lists of one item per line; each line one line of text; keys xxh3_128 hashes (no text)."""
    names = ("lines", "session_keys", "message_ids", "source_seqs", "roles", "dedup_keys")
    if any(type(getattr(ev, name)) is not list for name in names):
        return  # a field of the wrong shape: the writer's type check refuses it, naming it
    n = len(ev.lines)
    for name in names[1:]:
        if len(getattr(ev, name)) != n:
            raise _bad(ev, where, name, f"{len(getattr(ev, name))} items for {n} lines (one per line)")
    if _diary_lines_plainly_fine(ev):
        return
    for i, line in enumerate(ev.lines):
        if type(line) is str and ("\n" in line or "\r" in line):
            raise _bad(ev, where, f"lines[{i}]", "a diary line holds no line break")
    for i, seq in enumerate(ev.source_seqs):
        if type(seq) is int and not 0 <= seq < MAX_INT:
            raise _bad(ev, where, f"source_seqs[{i}]", f"{seq} is not an integer in [0, 2**63)")
    for name in ("session_keys", "message_ids", "roles"):
        for i, value in enumerate(getattr(ev, name)):
            if type(value) is str and len(value) > MAX_KEY_CHARS:
                raise _bad(ev, where, f"{name}[{i}]", f"{len(value)} characters; at most {MAX_KEY_CHARS}")
    for i, key in enumerate(ev.dedup_keys):
        if type(key) is str and not _HASH128_KEY.fullmatch(key):
            raise _bad(ev, where, f"dedup_keys[{i}]", f"{key!r:.80} is not an xxh3_128:<32 hex digits> key")


def _is_token(text: str) -> bool:
    return len(text) <= MAX_TOKEN_CHARS and _TOKEN.fullmatch(text) is not None


def check_input_type(tag: str) -> str | None:
    """Why a user may not append an event of type ``tag`` by hand, or None if they may."""
    if tag in INPUT_TYPES:
        return None
    return (f"{tag!r} events are written by evlog itself (processors and the log); "
            f"'evlog append' takes {', '.join(sorted(INPUT_TYPES))}")
