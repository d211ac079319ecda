"""Issue 22: the recall index's contents are a function of the set of replicated events, not of their arrival order.

A fact and a message of device A; devices B and C change them concurrently (forget, edit, restore,
pin, archive; two updates of the message). Every order those changes can arrive in (each a
received event: its place in the order is its origin's clock) gives the same rows, and the same
fact state and text as the memory projection shows.
"""

from __future__ import annotations

import itertools

import msgspec

from eventlog.events import (
    Event,
    MemoryAppended,
    MemoryArchived,
    MemoryEdited,
    MemoryForgotten,
    MemoryPinned,
    MemoryRestored,
    MessageAppended,
    MessageUpdated,
    Replica,
    SessionCreated,
)
from eventlog.fsio import OS_FS
from eventlog.replication.clock import ts_ms
from projections.memory import MemoryProjection
from projections.recall.index import RecallIndex
from projections.recall.text import STATE_CODES

TS = "2026-01-01T00:00:00.000Z"
LATER = ts_ms(TS) + 1000 << 16  # a clock a second after A wrote its events (the changes' clocks are above it)
BASE = [
    SessionCreated(session_key="s", title="chat"),
    MessageAppended(session_key="s", message_id="m1", role="user", content="the first words"),
    MemoryAppended(fact_id="f1", scope="user", section="Preferences", text="likes tea", by="user"),
]
# (device, origin seq, clock, event): the clocks put B's forget before C's edit, and C's restore last
CHANGES = [
    ("dev-b", 1, 10, MemoryForgotten(fact_id="f1", by="user", reason="wrong")),
    ("dev-c", 1, 20, MemoryEdited(fact_id="f1", text="likes green tea", by="user")),
    ("dev-c", 2, 30, MemoryRestored(fact_id="f1")),
    ("dev-b", 2, 25, MemoryPinned(fact_id="f1")),
    ("dev-b", 3, 26, MemoryArchived(fact_id="f1", reason="budget")),
    ("dev-c", 3, 15, MessageUpdated(session_key="s", message_id="m1", content="words of c", extra={"speaker": "Cy"})),
    ("dev-b", 4, 12, MessageUpdated(session_key="s", message_id="m1", content="words of b")),
]


def _log(order: tuple[int, ...]) -> list[Event]:
    """The events one device holds: its own three, then the others' changes in ``order``."""
    out: list[Event] = []
    for ev in BASE:
        out.append(msgspec.structs.replace(ev, seq=len(out) + 1, ts=TS))
    for i in order:
        device, seq, hlc, ev = CHANGES[i]
        out.append(msgspec.structs.replace(ev, seq=len(out) + 1, ts=TS,
                                           replica=Replica(device=device, seq=seq, hlc=LATER + hlc, ts=TS)))
    return out


def _contents(tmp_path, name: str, events: list[Event]) -> list:
    with RecallIndex(tmp_path / f"{name}.sqlite") as ix:
        ix.catch_up(events)
        return ix.contents()


def test_every_arrival_order_gives_the_same_contents(tmp_path):
    orders = list(itertools.permutations(range(len(CHANGES))))[::97]  # a spread of the 5040 orders
    first = _contents(tmp_path, "first", _log(orders[0]))
    for n, order in enumerate(orders[1:]):
        assert _contents(tmp_path, f"o{n}", _log(order)) == first, order


def test_the_fact_row_matches_the_memory_projection(tmp_path):
    events = _log(tuple(reversed(range(len(CHANGES)))))
    mem = MemoryProjection(str(tmp_path / "mem"), OS_FS, live=False)
    for ev in events:
        if ev.type in mem.consumes:
            mem.apply(ev)
    fact = mem.get("f1")
    assert fact is not None
    rows = {r[1]: r for r in _contents(tmp_path, "ix", events) if r[0] == "fact"}
    assert fact.text == "likes green tea" and fact.state == "active"  # restored last, with C's edit
    assert rows["f1"][6] == fact.text
    assert rows["f1"][5] == STATE_CODES[fact.state]
    messages = [r for r in _contents(tmp_path, "ix2", events) if r[0] == "message"]
    assert messages[0][4] == "words of c" and messages[0][6] == "Cy"  # the newest update's text (clock 15 > 12)
