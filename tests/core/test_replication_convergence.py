"""Issue 22: convergence by construction, proved over random histories of 3 devices.

Each device (a real log, with its own skewed clock) writes sessions, notes and facts, writes
messages into any session it knows (its own or one another device started: two devices write
the same session concurrently), retitles sessions, edits messages, and changes any fact it knows
(edit, pin, unpin, forget, restore, supersede). The
devices push and pull through ``MemoryEventStore`` in a random interleaving, with partitions
(a device cut off), duplicated deliveries (the store re-sends envelopes already delivered) and
pulls killed between the fetch and the append. At the end the network heals and every device
syncs until nothing moves; then every device shows byte-identical MEMORY.md files, session
files and history, its recall index holds the same contents (``RecallIndex.contents``: the sorted
rows of sessions, messages, history and facts it answers from), and every event any device wrote is held exactly once by every other
device (0 lost, 0 duplicated).
"""

from __future__ import annotations

import os
import random
import tempfile
from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eventlog.events import (
    HistoryAppended,
    MemoryAppended,
    MemoryEdited,
    MemoryForgotten,
    MemoryPinned,
    MemoryRestored,
    MemorySuperseded,
    MessageAppended,
    MessageUpdated,
    SessionCreated,
    SessionDeleted,
    SessionUpdated,
)
from eventlog.log import Log
from eventlog.replication import sync
from eventlog.replication.origin import REPLICATED_TYPES
from eventlog.replication.store import MemoryEventStore, PullPage
from projections.recall.index import RecallIndex
from tests.replication_helpers import views

ACCOUNT = "me@example.com"
SKEW = (0.0, -5.0, 3.0)  # seconds each device's clock is off
WRITES = ("session", "message", "reply", "reply", "retitle", "edit_message", "delete", "note", "fact", "edit", "pin",
          "unpin", "forget", "restore", "supersede")
SYNCS = ("push", "pull", "pull_dup", "pull_crash", "partition", "heal")


class Killed(Exception):
    """The device died between the store's answer and its append."""


class FlakyStore(MemoryEventStore):
    """The contract's store, that can re-send what it sent before or have the device die after a fetch."""

    def __init__(self) -> None:
        super().__init__()
        self.mode = ""

    def pull(self, account, after, limit=1000):
        page = super().pull(account, after, limit)
        mode, self.mode = self.mode, ""
        if mode == "crash":
            raise Killed()
        if mode == "dup" and after > 0:  # envelopes already delivered come again with the new ones
            old = super().pull(account, max(after - 3, 0), 3).events
            return PullPage(old + page.events, page.cursor, page.more)
        return page


class Device:
    """One device: a log with a skewed clock and counters for unique names."""

    def __init__(self, root: str, index: int) -> None:
        self.index = index
        self.name = f"d{index}"
        skew = SKEW[index]
        import time

        self.log = Log.open(os.path.join(root, self.name, "log"), writable=True, create=True,
                            clock=lambda: time.time() + skew)
        self.n = 0
        self.sessions: list[str] = []

    def fresh(self, kind: str) -> str:
        self.n += 1
        return f"{self.name}-{kind}{self.n}"

    def facts(self) -> list[str]:
        return sorted({e.fact_id for e in self.log.read() if isinstance(e, MemoryAppended)})

    def known_sessions(self) -> list[str]:
        """Every session this device holds: its own and those it received."""
        return sorted({e.session_key for e in self.log.read() if isinstance(e, SessionCreated)})

    def messages(self) -> list[tuple[str, str]]:
        return sorted({(e.session_key, e.message_id) for e in self.log.read() if isinstance(e, MessageAppended)})


def write(dev: Device, action: str, pick: int) -> None:
    """One user action on ``dev`` (``pick`` chooses among the facts it knows)."""
    sessions = dev.known_sessions()
    if action == "session" or (action in ("message", "reply", "retitle", "edit_message", "delete") and not sessions):
        key = dev.fresh("s")
        dev.sessions.append(key)
        dev.log.append_batch([SessionCreated(session_key=key, title=f"chat {key}"),
                              MessageAppended(session_key=key, message_id=dev.fresh("m"), role="user", content="hi")])
        return
    if action == "delete":
        dev.log.append(SessionDeleted(session_key=sessions[pick % len(sessions)]))
        return
    if action == "reply":  # into a session another device started, when this one knows any
        sessions = [k for k in sessions if k not in dev.sessions] or sessions
    if action in ("message", "reply", "retitle"):
        _session_write(dev, action, sessions[pick % len(sessions)], pick)
        return
    if action == "edit_message":
        key, mid = dev.messages()[pick % len(dev.messages())]
        dev.log.append(MessageUpdated(session_key=key, message_id=mid, content=f"{mid} edited by {dev.fresh('e')}",
                                      extra={f"by_{dev.name}": dev.n}))
        return
    if action == "note":
        dev.log.append(HistoryAppended(text=f"note {dev.fresh('n')}", source="remember"))
        return
    facts = dev.facts()
    if action == "fact" or not facts:
        dev.log.append(MemoryAppended(fact_id=dev.fresh("f"), scope="user", section="Preferences",
                                      text=f"fact {dev.n} of {dev.name}", by="user"))
        return
    fid = facts[pick % len(facts)]
    change = {
        "edit": lambda: [MemoryEdited(fact_id=fid, text=f"{fid} as {dev.name} says at {dev.n}")],
        "pin": lambda: [MemoryPinned(fact_id=fid)],
        "unpin": lambda: [MemoryPinned(fact_id=fid, pinned=False)],
        "forget": lambda: [MemoryForgotten(fact_id=fid, by="user", reason="wrong")],
        "restore": lambda: [MemoryRestored(fact_id=fid)],
        "supersede": lambda: _supersede(dev, fid),
    }[action]()
    dev.n += 1
    dev.log.append_batch(change)


def _session_write(dev: Device, action: str, key: str, pick: int) -> None:
    """A message (a user's or an assistant's) or a new title in a session ``dev`` knows (maybe another's)."""
    if action == "retitle":
        dev.log.append(SessionUpdated(session_key=key, title=f"{key} as {dev.fresh('t')} calls it",
                                      metadata={dev.name: dev.n, "last": dev.name}))
        return
    role = ("user", "assistant")[pick % 2]
    dev.log.append(MessageAppended(session_key=key, message_id=dev.fresh("m"), role=role,
                                   content=f"{role} {dev.name} says {dev.n}"))


def _supersede(dev: Device, fid: str) -> list:
    new = dev.fresh("f")
    return [MemoryAppended(fact_id=new, scope="user", section="Preferences", text=f"{fid} replaced by {new}", by="user"),
            MemorySuperseded(fact_id=fid, by_fact_id=new, by="user")]


def do_sync(dev: Device, action: str, store: FlakyStore, cut: set[int]) -> None:
    if action == "partition":
        cut.add(dev.index)
        return
    if action == "heal":
        cut.discard(dev.index)
        return
    if dev.index in cut:
        return  # no network
    if action == "push":
        sync.push(dev.log, store, ACCOUNT, store_name="gw", batch=3)
        return
    store.mode = {"pull_dup": "dup", "pull_crash": "crash"}.get(action, "")
    try:
        sync.pull(dev.log, store, ACCOUNT, store_name="gw", limit=4)
    except Killed:
        pass
    store.mode = ""


def settle(devices: list[Device], store: FlakyStore) -> None:
    """Everyone online, syncing until no pull brings anything."""
    for _ in range(5):
        for dev in devices:
            sync.push(dev.log, store, ACCOUNT, store_name="gw")
        moved = sum(sync.pull(dev.log, store, ACCOUNT, store_name="gw").received for dev in devices)
        if not moved:
            return
    raise AssertionError("the devices never stopped exchanging events")


def origin_keys(dev: Device, devices: list[Device]) -> tuple[Counter, set]:
    """(how many times each received origin key is held, the origin keys of what ``dev`` wrote itself)."""
    from eventlog.replication.origin import OriginFold

    fold = OriginFold.of(dev.log)
    received = Counter((e.replica.device, e.replica.seq) for e in dev.log.read() if e.replica is not None)
    own = {(fold.device, seq) for seq, _h, _p in fold.local}
    return received, own


def recall_contents(dev: Device, root: str) -> list:
    """The contents of a recall index built from ``dev``'s log (as ``evlog recall`` builds it)."""
    with RecallIndex(os.path.join(root, f"recall{dev.index}.sqlite")) as ix:
        ix.catch_up(dev.log.read())
        return ix.contents()


STEP = st.tuples(st.integers(0, 2), st.sampled_from(WRITES + SYNCS), st.integers(0, 50))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(steps=st.lists(STEP, min_size=5, max_size=45))
# two devices write one session concurrently (d1's message is older than d0's, d0 receives it last)
@example(steps=[(0, "session", 0), (0, "push", 0), (1, "pull", 0), (1, "message", 0), (0, "message", 0),
                (1, "retitle", 0), (0, "retitle", 0), (1, "edit_message", 0), (0, "edit_message", 0)])
# a device deletes a session while another writes to it, each before the other's event arrives
@example(steps=[(0, "session", 0), (0, "push", 0), (1, "pull", 0), (0, "delete", 0), (1, "message", 0),
                (1, "retitle", 0), (2, "pull", 0), (0, "push", 0), (2, "message", 0), (2, "push", 0)])
# a device forgets a fact another edits and then restores, each before the other's change arrives
@example(steps=[(0, "fact", 0), (0, "push", 0), (1, "pull", 0), (2, "pull", 0), (1, "forget", 0), (2, "edit", 0),
                (0, "pin", 0), (2, "push", 0), (1, "restore", 0)])
def test_three_devices_converge_whatever_the_delivery(steps):
    run(steps)


@pytest.mark.parametrize("seed", range(8))
def test_random_walks_converge(seed):
    """Long random walks (a write and a sync each step): Hypothesis favours short histories, where two devices
    rarely write one session between syncs; these seeded walks do (with the sessions projection folding in arrival
    order, 3 of these 8 diverge; with the first fold of the order rule, seed 6 caught a change that arrived after
    a delete and before the session started again)."""
    rnd = random.Random(seed)
    steps = []
    for _ in range(40):
        steps.append((rnd.randrange(3), rnd.choice(WRITES), rnd.randrange(50)))
        steps.append((rnd.randrange(3), rnd.choice(SYNCS), 0))
    run(steps)


def run(steps: list[tuple[int, str, int]]) -> None:
    """Play ``steps`` on 3 devices, heal the network, and check what every device shows (module docstring)."""
    with tempfile.TemporaryDirectory() as root:
        devices = [Device(root, i) for i in range(3)]
        store = FlakyStore()
        cut: set[int] = set()
        try:
            for index, action, pick in steps:
                if action in WRITES:
                    write(devices[index], action, pick)
                else:
                    do_sync(devices[index], action, store, cut)
            settle(devices, store)
            shown = [views(dev.log, os.path.join(root, f"view{dev.index}")) for dev in devices]
            assert shown[0] == shown[1] == shown[2]
            found = [recall_contents(dev, root) for dev in devices]
            assert found[0] == found[1] == found[2]
            written = set()
            held = []
            for dev in devices:
                received, own = origin_keys(dev, devices)
                assert all(n == 1 for n in received.values()), "an event was applied twice"
                written |= own
                held.append((received, own))
            for received, own in held:
                assert set(received) | own == written, "an event was lost"
            types = {e.type for dev in devices for e in dev.log.read() if e.replica is not None}
            assert types <= REPLICATED_TYPES
        finally:
            for dev in devices:
                dev.log.close()
