"""The unit of replication: one event with its origin, as it travels between devices.

``origin`` is the device id of the workspace that first wrote the event, ``origin_seq`` its
seq in that device's log: together they identify the event everywhere (a re-sent envelope
is a no-op). ``hlc`` is a hybrid logical clock, ``(wall-clock ms << 16) | counter``, so
envelopes from many devices have one deterministic order (``hlc``, then ``origin``, then
``origin_seq``). ``body`` is the event as JSON (the origin's encoding, seq and ts included).
``project`` scopes the event for team sharing (empty: the account's own, never shared).
``author`` is the gateway account that pushed it (set by the gateway, not by the device).
"""

from __future__ import annotations

import msgspec

HLC_COUNTER_BITS = 16


class Replicated(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One replicated event (see the module docstring)."""

    origin: str
    origin_seq: int
    hlc: int
    type: str
    body: msgspec.Raw
    project: str = ""
    author: str = ""

    @property
    def key(self) -> tuple[str, int]:
        """The event's identity across devices."""
        return (self.origin, self.origin_seq)

    @property
    def order(self) -> tuple[int, str, int]:
        """The one order every device folds replicated events in."""
        return (self.hlc, self.origin, self.origin_seq)
