"""The secrets door: every event is redacted here before the log writes it (INVARIANTS I24).

``redact_event`` is called by the writer in its validation path, for every event of every
path (ingest, hooks, watch, ``evlog append``, the session stores, ``remember`` and the MCP
tools, sync pull, processors), before the event's line, checksum and dedup entry are
made. So no path can skip it, and what the log holds, and every projection, index,
checkpoint and push built from the log, holds no secret the detector
(``eventlog.secrets``) knows.

What is scanned: every text field of every event type (strings, and the strings inside
lists and dicts: ``content``, ``tool_calls``, ``extra``, ``title``, ``preview``,
``metadata``, ``text``, ``refs``, ``section``, ``subject``, ``line``, ``query``, ``reason``,
``raw_output``, ``validation``...), found from the catalogue's types, so a field added
later is scanned too. Left alone are the fields that name things rather than say them
(``STRUCTURAL``: keys, ids, hashes, names, times, paths, enumerations): changing one would
change an event's identity, and they are bounded tokens the door checks anyway. A
``dedup`` key that holds a secret is replaced by a hash of itself (``redacted:`` + xxh3-128),
which keeps it unique and stable, so a retried append still finds its first copy.

A message event lists the kinds it lost in ``redacted`` (one entry per secret). Redaction
is idempotent, so an event that ingest already redacted comes through unchanged and its
kinds are not counted twice. There is no opt-out: a caller that wants a secret kept has
no flag, field or environment variable to ask for it.

Cost: an event without a candidate anchor costs one regex scan of its text (the detector's
prefilter) and comes back as the same object. A caller that folds what it appends runs
``redact_events`` first and hands the result to the writer, whose door would scan every
event a second time: so ``redact_events`` marks each event it found clean (the same object
back), and the door's next look at that very object returns it without scanning again (the
door is a pure function of the event's values, and an event is a frozen struct handed on
untouched). The marks are one-shot (the door takes them) and bounded (``PASSED_MAX``): a mark
that is lost only costs the scan it would have saved.
"""

from __future__ import annotations

import typing
from typing import Any

import msgspec
import xxhash

from eventlog.events import EVENT_TYPES, Event, MessageAppended, MessageUpdated
from eventlog.secrets import collect_strings, find, redact, redact_values, suspects

__all__ = ["STRUCTURAL", "redact_batch", "redact_counted", "redact_event", "redact_events", "text_fields"]

#: fields that name things (keys, ids, hashes, times, enumerations, paths) and are never rewritten
STRUCTURAL = frozenset({
    "seq", "ts", "dedup", "dedup_keys", "session_key", "message_id", "fact_id", "by_fact_id", "entry_id", "entry_ids", "run_id",
    "retry_of", "processor", "segment", "fingerprint", "prompt_hash", "scope", "role", "date", "by", "source",
    "outcome", "llm", "model", "policy", "target", "user", "epoch", "project", "timestamp", "created_at",
    "updated_at", "redacted", "source_refs", "message_ids", "session_keys", "quarantine", "segments_quarantined",
    "sessions", "messages", "error_kind", "when", "fact_ids", "up_to_message_id",
    "replica", "device", "home", "store", "account", "origins",  # a received event's origin and replication positions: names, not text
})
_SCALARS = (int, bool, float)
_DEDUP_PREFIX = "redacted:"


def text_fields(cls: type[Event]) -> tuple[str, ...]:
    """The fields of ``cls`` the door scans: every field that can hold text and is not ``STRUCTURAL``."""
    hints = typing.get_type_hints(cls)
    return tuple(n for n in cls.__struct_fields__
                 if n not in STRUCTURAL and hints[n] not in _SCALARS and not _int_list(hints[n]))


def _int_list(hint: Any) -> bool:
    return typing.get_origin(hint) is list and typing.get_args(hint) == (int,)


_PLANS: dict[type[Event], tuple[str, ...]] = {cls: text_fields(cls) for cls in EVENT_TYPES}


#: events ``redact_events`` found clean, by id, until the door takes them (the strong reference keeps the id theirs)
_passed: dict[int, Event] = {}
#: at most this many marks are kept; beyond it they are dropped (the door then scans those events again)
PASSED_MAX = 16_384


def redact_event(ev: Event) -> Event:
    """``ev`` with every secret in its text fields replaced by ``[REDACTED:<kind>]`` (the same object if none)."""
    if _passed and _passed.pop(id(ev), None) is ev:
        return ev  # redact_events just found this very event clean
    if _plain_message(ev) and not ev.dedup and type(ev.content) is str and not find(ev.content):
        return ev  # the hot path: a plain message without a dedup key, clean in one scan (what _door gives back)
    return _door(ev)[0]


def _plain_message(ev: Event) -> typing.TypeGuard[MessageAppended]:
    """A ``message.appended`` with no tool calls and no extra: its only scanned text is its content."""
    return type(ev) is MessageAppended and ev.tool_calls is None and not ev.extra


def _door(ev: Event) -> tuple[Event, list[str]]:
    """``redact_event`` without the mark, and the kinds of the secrets it replaced (one per secret)."""
    if _plain_message(ev):  # the hot path
        content, kinds = redact(ev.content) if type(ev.content) is str else (ev.content, [])
        if kinds:
            ev = msgspec.structs.replace(ev, content=content, redacted=[*ev.redacted, *kinds])
        return _redact_dedup(ev), kinds
    fields = _PLANS.get(type(ev))
    if not fields:
        return (_redact_dedup(ev) if isinstance(ev, Event) else ev), []
    values = [getattr(ev, n) for n in fields]
    ((new, kinds),) = redact_values([values])
    if kinds:
        changes = {n: v for n, v, old in zip(fields, new, values, strict=True) if v is not old}
        if isinstance(ev, MessageAppended | MessageUpdated):
            changes["redacted"] = [*ev.redacted, *kinds]
        ev = msgspec.structs.replace(ev, **changes)
    return _redact_dedup(ev), kinds


def _redact_dedup(ev: Event) -> Event:
    key = ev.dedup
    if not key or type(key) is not str or key.startswith(_DEDUP_PREFIX):
        return ev
    if find(key):
        return msgspec.structs.replace(ev, dedup=_DEDUP_PREFIX + xxhash.xxh3_128_hexdigest(key.encode("utf-8", "surrogatepass")))
    return ev


def _scanned(ev: Event, strings: list[str]) -> bool:
    """Add to ``strings`` what ``redact_event`` would scan of ``ev``; False if it holds a value under a key
    naming a secret (checked whatever its shape: only the door itself may pass it)."""
    if _plain_message(ev):
        if type(ev.content) is str:
            strings.append(ev.content)
    else:
        fields = _PLANS.get(type(ev), ())
        if fields and collect_strings([getattr(ev, n) for n in fields], strings):
            return False
    key = ev.dedup
    if key and type(key) is str and not key.startswith(_DEDUP_PREFIX):
        strings.append(key)
    return True


def redact_batch(events: list[Event]) -> list[Event]:
    """``[redact_event(ev) for ev in events]``, for less: one prefilter (``secrets.suspects``) scans all their
    texts at once, and only the events it cannot prove clean go through the door one by one; the others
    come back as they are (what the door gives them). A mark of ``redact_events`` is taken as the door does."""
    strings: list[str] = []
    owner: list[int] = []  # the event of each string
    suspect: set[int] = set()
    for i, ev in enumerate(events):
        if _passed and _passed.get(id(ev)) is ev:
            del _passed[id(ev)]  # redact_events just found this very event clean
            continue
        if type(ev) not in _PLANS or not _scanned(ev, strings):
            suspect.add(i)  # not an event of the catalogue, or a value under a secret's name: the door judges
        owner.extend([i] * (len(strings) - len(owner)))
    suspect.update(owner[j] for j in suspects(strings))
    return [redact_event(ev) if i in suspect else ev for i, ev in enumerate(events)]


def redact_counted(events: list[Event]) -> tuple[list[Event], list[list[str]]]:
    """``redact_events`` for a bulk writer that counts what it lost (ingest): the events as the door gives
    them, and the kinds each one's secrets were (one per secret). One prefilter scans all their texts at
    once (as ``redact_batch``); the events it cannot prove clean go through the door one by one. Each
    event that comes back unchanged is marked as ``redact_events`` marks it, so the writer's door does
    not scan it again."""
    strings: list[str] = []
    owner: list[int] = []  # the event of each string
    suspect: set[int] = set()
    for i, ev in enumerate(events):
        if type(ev) not in _PLANS or not _scanned(ev, strings):
            suspect.add(i)  # not an event of the catalogue, or a value under a secret's name: the door judges
        owner.extend([i] * (len(strings) - len(owner)))
    suspect.update(owner[j] for j in suspects(strings))
    out = list(events)
    kinds: list[list[str]] = [[] for _ in events]
    for i in suspect:
        out[i], kinds[i] = _door(events[i])
    _mark(events, out)
    return out, kinds


def _mark(given: list[Event], out: list[Event]) -> None:
    """Mark each event of ``out`` that is the same object as the one given: the door found it clean."""
    if len(_passed) + len(out) > PASSED_MAX:
        _passed.clear()  # marks nobody took (a batch that failed, or one not appended): drop them rather than grow
    if len(out) <= PASSED_MAX:
        for ev, got in zip(given, out, strict=True):
            if got is ev:  # clean: the door would give this object back as it is
                _passed[id(ev)] = ev


def redact_events(events: typing.Iterable[Event]) -> list[Event]:
    """``redact_event`` of each event (what the writer will write: callers that fold events they append use it).

    Each event found clean is marked, so that the writer's door, given the same object next,
    does not scan it again (see the module docstring).
    """
    given = list(events)
    out = [redact_event(ev) for ev in given]
    _mark(given, out)
    return out
