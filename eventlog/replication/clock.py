"""The hybrid logical clock of every event and the one order devices fold replicated events in.

The clock is never written by the log's writer: it is a fold of the local log, the same on
the device that pushes an event and in the projections that order it.

* A received event (``Event.replica`` set) keeps the clock its origin gave it.
* A local event's clock is ``max(ts_ms << 16, floor + 1)``, where ``floor`` is the highest
  clock of every event received before it (``replication.pulled`` says it for its batch). The
  log's ``ts`` never decreases, so a device's clocks never decrease either, and an event
  written after a pull is later than everything that pull brought (causality survives clock
  skew between devices).

The order is ``(hlc, origin device, origin seq)`` (``Replicated.order``). A local event's
device is the one its workspace claimed for its seq (``replication.device``): the claim may be
appended after the event (an old log's first sync), so projections keep ``""`` for a local
event's device and resolve it when they compare (``OrderState.resolve``); before any claim,
every event is local and their order is seq order anyway.
"""

from __future__ import annotations

import calendar
from typing import Any

import msgspec

from eventlog.events import DeviceClaimed, Event, ReplicationPulled
from eventlog.replication.envelope import HLC_COUNTER_BITS

Key = tuple[int, str, int]  # (hlc, origin device or "" for a local event not resolved yet, origin seq)


_second: list[tuple[str, int]] = [("", 0)]  # the last second parsed (a log's ts mostly repeat it)


def ts_ms(ts: str) -> int:
    """Milliseconds since the epoch of a log ``ts`` (``YYYY-MM-DDTHH:MM:SS.fffZ``); 0 if unreadable."""
    head = ts[:19]
    last_head, last_s = _second[0]
    try:
        if head != last_head:
            last_s = calendar.timegm((int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]), int(ts[14:16]),
                                      int(ts[17:19]), 0, 0, 0))
            _second[0] = (head, last_s)
        return last_s * 1000 + int(ts[20:23] or 0)
    except (ValueError, OverflowError):
        return 0


def local_hlc(ts: str, floor: int) -> int:
    """The clock of a local event written at ``ts`` after receiving events up to clock ``floor``."""
    hlc = ts_ms(ts) << HLC_COUNTER_BITS
    return hlc if hlc > floor else floor + 1  # max(hlc, floor + 1), without the call


def event_time(ev: Event) -> str:
    """When the event happened where it was written: its origin's ``ts`` for a received event."""
    rep = ev.replica
    return rep.ts if rep is not None and rep.ts else ev.ts


class OrderState(msgspec.Struct, kw_only=True):
    """What a projection keeps to order events: the clock floor and the device claims (see the module docstring)."""

    floor: int = 0
    claims: list[tuple[int, str]] = []  # (from_seq, device), in log order

    def observe(self, ev: Event) -> bool:
        """Fold a ``replication.pulled`` or ``replication.device``; True if ``ev`` was one."""
        if isinstance(ev, ReplicationPulled):
            self.floor = max(self.floor, ev.max_hlc)
            return True
        if isinstance(ev, DeviceClaimed):
            self.claims.append((ev.from_seq, ev.device))
            return True
        return False

    def key(self, ev: Event) -> Key:
        """The event's place in the order, as far as known now (a local event's device left "")."""
        rep = ev.replica
        if rep is not None:
            return (rep.hlc, rep.device, rep.seq)
        hlc = ts_ms(ev.ts) << HLC_COUNTER_BITS  # local_hlc, inlined: every projection asks for every event's key
        return (hlc if hlc > self.floor else self.floor + 1, "", ev.seq)

    def later(self, a: Key, b: Key) -> bool:
        """``a`` comes after ``b`` in the order (the device is resolved only when the clocks tie)."""
        if a[0] != b[0]:
            return a[0] > b[0]
        if a[1] == b[1] and (a[1] or not self.claims):
            return a[2] > b[2]  # one device (named, or local before any claim): its seqs decide
        return self.resolve(a) > self.resolve(b)

    def resolve(self, key: Key | list[Any]) -> Key:
        """``key`` with a local event's device filled in from the claims (``""`` before any claim)."""
        hlc, device, seq = key
        if device:
            return (hlc, device, seq)
        return (hlc, device_of(self.claims, seq), seq)


def device_of(claims: list[tuple[int, str]], seq: int) -> str:
    """The device a local event at ``seq`` belongs to: the newest claim that covers it ("" if none)."""
    for from_seq, device in reversed(claims):
        if from_seq <= seq:
            return device
    return ""
