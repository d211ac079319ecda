"""What a gateway's event store promises, and the in-memory store that defines it.

A store holds, per account, an append-only sequence of ``Replicated`` envelopes:

* ``push(account, events)`` stores the envelopes it does not hold yet (identity:
  ``(origin, origin_seq)``) and gives each new one the next *gateway position* of the store;
  an envelope it holds already is counted as a duplicate and changes nothing. All of a call's
  envelopes are stored or none (one transaction).
* **The store decides the author, the device cannot.** An origin (device) belongs to the
  account that first pushed it. An envelope of a device the pusher owns gets ``author`` = the
  pusher, whatever the device wrote there. An envelope of another account's device (a device
  relays every device's events its log holds, so a teammate's device sends back what it pulled
  of a shared project) is taken only if the store holds that identity already, and it keeps the
  author the store recorded for it; one the store does not hold is refused (``ConfigError``
  naming the envelope; nothing of that push is stored): only the owner's own devices bring an
  owner's new events, so no account can put words in another's name, even in a project they
  share.
* ``pull(account, after, limit)`` returns envelopes visible to ``account`` whose gateway
  position is above ``after``, in position order, with the cursor to pass next time. A
  position is never reused and a pull never skips an envelope that a later pull could return
  (a store on a multi-primary cluster must only hand out positions below every transaction
  still in flight).
* ``high_water(account, origin)`` is the highest ``origin_seq`` of ``origin`` the store holds
  for ``account`` (0 if none), so a device resumes its push after a crash.
* ``erase(account, keys)`` (not part of ``EventStore``: ``evlog erase`` runs it at the gateway
  with its rows) empties the bodies of the envelopes ``keys`` (origin, origin_seq): the
  account's own copies, and every account's copies of an origin it owns. An erased envelope
  keeps its identity and position (so a copy sent again is a duplicate, and high water does
  not move back) but no pull returns it, and a relayed copy of it is stored without its body.
* ``share`` / ``unshare`` / ``shares`` let an account show one project's envelopes to another
  account, read-only or not. An envelope of a shared project is visible to the project's owner
  and every member when its writer is the owner or a member that may write (a read-only
  member's envelopes stay its own).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

import msgspec

from eventlog.errors import ConfigError
from eventlog.replication.envelope import Replicated

ERASED = b""  # an erased envelope's body (no stored envelope has it: a body is one JSON value)


class PushResult(msgspec.Struct, frozen=True):
    """What a push did: envelopes stored, envelopes already held, the store's newest position."""

    stored: int
    duplicates: int
    position: int


class PullPage(msgspec.Struct, frozen=True):
    """Envelopes above a cursor, the cursor after them, and whether more are waiting."""

    events: list[Replicated]
    cursor: int
    more: bool


class Share(msgspec.Struct, frozen=True):
    """``owner`` shows ``project``'s envelopes to ``member`` (who may not write there if read_only)."""

    owner: str
    project: str
    member: str
    read_only: bool = False


def refused(index: int, ev: Replicated) -> ConfigError:
    """The error of a push carrying a new envelope of a device another account owns."""
    return ConfigError(f"envelope {index} (origin {ev.origin[:80]!r}, origin_seq {ev.origin_seq}): author: its device "
                       "belongs to another account and the gateway does not hold this event, so it cannot be stored "
                       "in that account's name (only its own devices bring its new events); nothing of this push "
                       "was stored")


class EventStore(Protocol):
    """The contract every gateway store keeps (see the module docstring)."""

    def push(self, account: str, events: Sequence[Replicated]) -> PushResult: ...

    def pull(self, account: str, after: int, limit: int = 1000) -> PullPage: ...

    def high_water(self, account: str, origin: str) -> int: ...

    def share(self, owner: str, project: str, member: str, *, read_only: bool = False) -> None: ...

    def unshare(self, owner: str, project: str, member: str) -> bool: ...

    def shares(self, account: str) -> list[Share]: ...


class MemoryEventStore:
    """The contract in a few lines, in memory (tests, and the definition the others follow)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: list[tuple[int, str, Replicated]] = []  # (position, writer account, envelope)
        self._held: dict[tuple[str, str, int], int] = {}  # (account, origin, origin_seq) -> position
        self._shares: dict[tuple[str, str, str], Share] = {}
        self._owners: dict[str, str] = {}  # origin -> the account that first pushed it
        self._authors: dict[tuple[str, int], str] = {}  # (origin, origin_seq) -> the author recorded for it
        self._erased: set[tuple[str, int]] = set()  # (origin, origin_seq) its owner erased

    def _authored(self, account: str, events: Sequence[Replicated]) -> list[Replicated]:
        """The envelopes ``account`` does not hold yet, each with the author the store decides (or refusal)."""
        owners: dict[str, str] = {}
        fresh: list[Replicated] = []
        seen: set[tuple[str, int]] = set()
        for i, ev in enumerate(events):
            if (account, ev.origin, ev.origin_seq) in self._held or ev.key in seen:
                continue
            seen.add(ev.key)
            owner = owners.setdefault(ev.origin, self._owners.get(ev.origin, account))
            author = account if owner == account else self._authors.get(ev.key)
            if author is None:
                raise refused(i, ev)
            body = msgspec.Raw(ERASED) if owner != account and ev.key in self._erased else ev.body
            fresh.append(msgspec.structs.replace(ev, author=author, body=body))
        return fresh

    def push(self, account: str, events: Sequence[Replicated]) -> PushResult:
        with self._lock:
            fresh = self._authored(account, events)
            for ev in fresh:
                pos = len(self._rows) + 1
                self._rows.append((pos, account, ev))
                self._held[(account, ev.origin, ev.origin_seq)] = pos
                self._owners.setdefault(ev.origin, account)
                self._authors.setdefault(ev.key, ev.author)
            return PushResult(len(fresh), len(events) - len(fresh), len(self._rows))

    def _group(self, owner: str, project: str, *, writers: bool) -> set[str]:
        return {owner} | {s.member for s in self._shares.values()
                          if s.owner == owner and s.project == project and not (writers and s.read_only)}

    def _visible(self, account: str, writer: str, ev: Replicated) -> bool:
        if writer == account:
            return True
        if not ev.project:
            return False
        owners = {s.owner for s in self._shares.values() if s.project == ev.project}
        return any(account in self._group(o, ev.project, writers=False) and
                   writer in self._group(o, ev.project, writers=True) for o in owners)

    def pull(self, account: str, after: int, limit: int = 1000) -> PullPage:
        with self._lock:
            out: list[Replicated] = []
            cursor = after
            for pos, writer, ev in self._rows[after:]:
                if len(out) >= limit:
                    return PullPage(out, cursor, True)
                cursor = pos
                if bytes(ev.body) != ERASED and self._visible(account, writer, ev):
                    out.append(ev)
            return PullPage(out, cursor, False)

    def high_water(self, account: str, origin: str) -> int:
        with self._lock:
            return max((s for (a, o, s) in self._held if a == account and o == origin), default=0)

    def erase(self, account: str, keys: Sequence[tuple[str, int]]) -> int:
        """Empty the bodies of ``keys`` (see the module docstring); how many stored copies it emptied."""
        with self._lock:
            wanted = set(keys)
            owned = {k for k in wanted if self._owners.get(k[0]) == account}
            self._erased |= owned
            n = 0
            for i, (pos, writer, ev) in enumerate(self._rows):
                if ev.key in wanted and (writer == account or ev.key in owned) and bytes(ev.body) != ERASED:
                    self._rows[i] = (pos, writer, msgspec.structs.replace(ev, body=msgspec.Raw(ERASED)))
                    n += 1
            return n

    def share(self, owner: str, project: str, member: str, *, read_only: bool = False) -> None:
        with self._lock:
            self._shares[(owner, project, member)] = Share(owner, project, member, read_only)

    def unshare(self, owner: str, project: str, member: str) -> bool:
        with self._lock:
            return self._shares.pop((owner, project, member), None) is not None

    def shares(self, account: str) -> list[Share]:
        with self._lock:
            return [s for s in self._shares.values() if account in (s.owner, s.member)]
