"""An atomic batch, prepared: redacted, validated, known dedup keys resolved, lines framed and type-checked.

``prepare_batch`` does everything an ``append_batch`` does before a byte is written, so a
bad item raises (``InvalidEventError``, ``DuplicateInBatchError``) with nothing written.
The lines are framed with ``more`` counters (the last line has 0), so a crash keeps all of
the batch or none: a reader or recovery meeting an incomplete batch drops it whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from eventlog.codec import hash_key
from eventlog.errors import DuplicateInBatchError, InvalidEventError
from eventlog.events import EVENT_TYPES, Event
from eventlog.redact import redact_batch
from eventlog.validate import check_types, frame_checked, plain_message, validate_event


@dataclass
class Batch:
    """A prepared batch: ``seqs`` of known duplicates filled in, ``todo`` the items to write."""

    events: list[Event]
    seqs: list[int]
    todo: list[int] = field(default_factory=list)  # batch indexes of the events to write, in order
    keys: dict[int, int] = field(default_factory=dict)  # hashed dedup key -> batch index
    checked: list[int] = field(default_factory=list)  # the items the type check must decode
    lines: list[bytes] = field(default_factory=list)


#: the event types that carry further dedup keys (``dedup_keys``): only their items are looked at for them
KEYED_TYPES = frozenset(cls for cls in EVENT_TYPES if "dedup_keys" in cls.__struct_fields__)


def claim_keys(ev: Event, i: int, known: Callable[[int], int | None], taken: dict[int, int]) -> None:
    """Add the hashed ``dedup_keys`` of batch item ``i`` to ``taken`` (hashed key -> item), refusing a key
    that ``taken`` (the batch so far) or ``known`` (the log) already holds: nothing is written then."""
    for key in getattr(ev, "dedup_keys", None) or ():
        k = hash_key(key)
        if k in taken:
            raise DuplicateInBatchError(f"batch items {taken[k]} and {i} share dedup key {key!r}; nothing was written")
        first = known(k)
        if first is not None:
            raise DuplicateInBatchError(f"batch item {i} ({ev.type}) claims dedup key {key!r}, which seq {first} "
                                        "already carries; nothing was written")
        taken[k] = i


def _resolve(events: list[Event], known: Callable[[int], int | None]) -> Batch:
    """Redact and validate in place; items whose dedup key ``known`` holds get that seq and are not written."""
    b = Batch(events, [0] * len(events))
    events[:] = redact_batch(events)  # the secrets door (I24), its prefilter over the whole batch at once
    for i, ev in enumerate(events):
        if not plain_message(ev):
            if not isinstance(ev, Event) or type(ev) is Event:
                raise InvalidEventError(f"batch item {i} is not an event: {ev!r}")
            validate_event(ev, where=f"batch item {i}")
            b.checked.append(i)
        if ev.dedup:
            k = hash_key(ev.dedup)
            if k in b.keys:
                raise DuplicateInBatchError(f"batch items {b.keys[k]} and {i} share dedup key {ev.dedup!r}; "
                                            "nothing was written")
            b.keys[k] = i
            first = known(k)
            if first is not None:
                b.seqs[i] = first
                continue
        if type(ev) in KEYED_TYPES:
            claim_keys(ev, i, known, b.keys)
        b.todo.append(i)
    return b


def prepare_batch(events: list[Event], known: Callable[[int], int | None], first_seq: int,
                  stamp: Callable[[], bytes]) -> Batch:
    """The batch ready to write from ``first_seq`` (``stamp`` gives the one ``ts`` all its lines share)."""
    b = _resolve(events, known)
    if not b.todo:
        return b
    ts = stamp()
    n = len(b.todo)
    b.lines = [frame_checked(events[i], first_seq + j, ts, n - 1 - j) for j, i in enumerate(b.todo)]
    if b.checked:
        at = {i: j for j, i in enumerate(b.todo)}
        check = [i for i in b.checked if i in at]
        check_types([b.lines[at[i]] for i in check], [events[i] for i in check])
    for j, i in enumerate(b.todo):
        b.seqs[i] = first_seq + j
    return b
