"""Issue 22, item 1 of syncdev2: ``evlog erase`` travels on the event path.

An erasure on one device reaches the others through the event store; each erases its own copies
by origin key (and what it derived from them), idempotently; an erased event is never pushed
again nor appended again from a later pull, and the devices' projections still match.
"""

from __future__ import annotations

import functools
import os

import pytest

from eventlog.app.erase import Target, apply_received, erase
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import ErasureRecorded, MemoryAppended, MessageAppended, SessionCreated
from eventlog.replication import sync
from eventlog.replication.store import MemoryEventStore
from processors.dream import remember
from tests.replication_helpers import views

ACCOUNT = "me@example.com"
SECRET = "the vault combination is 31-77-4242 behind the painting"


def _ws(root, name: str) -> Workspace:
    home = os.path.join(str(root), name)
    init_workspace(home)
    return Workspace.open(home, writable=True)


def _pull(ws: Workspace, store: MemoryEventStore, **kw) -> sync.PullReport:
    return sync.pull(ws.log, store, ACCOUNT, store_name="mem", erase=functools.partial(apply_received, ws), **kw)


def _holders(ws: Workspace) -> list[str]:
    """Every file under the workspace that holds a byte sequence of the secret."""
    needle = SECRET.encode()
    out = []
    for root, _dirs, files in os.walk(ws.home):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                if needle in f.read():
                    out.append(os.path.relpath(path, ws.home))
    return out


def _write_secret(ws: Workspace) -> None:
    ws.append([SessionCreated(session_key="s1", title="chat"),
               MessageAppended(session_key="s1", message_id="m1", role="user", content=f"remember: {SECRET}"),
               MessageAppended(session_key="s1", message_id="m2", role="user", content="and buy milk")])
    remember(ws, f"note: {SECRET}")
    ws.append([MemoryAppended(fact_id="f-keep", scope="user", section="Preferences", text="likes tea", by="user")])


def test_an_erasure_on_one_device_reaches_the_other_and_leaves_no_byte(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    _write_secret(a)
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    _pull(b, store)
    assert _holders(b)  # b received it
    erase(a, Target("text", SECRET))
    assert not _holders(a)
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    report = _pull(b, store)
    assert report.erased == 1
    assert not _holders(b)
    va, vb = views(a.log, tmp_path / "va"), views(b.log, tmp_path / "vb")
    assert va == vb
    assert any(b"buy milk" in v for k, v in vb.items() if k.startswith("sessions"))  # the rest of the session stays
    assert any(b"likes tea" in v for v in vb.values()) and not any(SECRET.encode() in v for v in vb.values())
    # idempotent: the next pull applies nothing and writes nothing; b pushes neither the erased events nor its
    # own application of the erasure (it has a replica)
    end = b.log.last_seq
    assert _pull(b, store).erased == 0 and b.log.last_seq == end
    assert sync.push(b.log, store, ACCOUNT, store_name="mem").sent == 0


def test_an_erased_event_is_never_appended_again_from_a_later_pull(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    _write_secret(a)
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    _pull(b, store)
    erase(a, Target("text", SECRET))
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    _pull(b, store)
    # the same envelopes offered again by another store (which still holds the erased bodies): skipped
    again = MemoryEventStore()
    again.push(ACCOUNT, store.pull(ACCOUNT, 0).events)
    report = sync.pull(b.log, again, ACCOUNT, store_name="again", erase=functools.partial(apply_received, b))
    assert report.received == 0 and not _holders(b)
    # a new device catching up gets the events and their erasure in one page: the erased ones never land
    c = _ws(tmp_path, "c")
    report = _pull(c, again)
    assert not _holders(c) and report.erased == 1
    assert views(c.log, tmp_path / "vc") == views(a.log, tmp_path / "va")


def test_an_erasure_of_a_received_event_goes_back_to_its_origin(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    _write_secret(a)
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    _pull(b, store)
    erase(b, Target("text", SECRET))  # erased where it was received, by origin key
    sync.push(b.log, store, ACCOUNT, store_name="mem")
    assert _pull(a, store).erased == 1
    assert not _holders(a)
    assert sync.push(a.log, store, ACCOUNT, store_name="mem").sent == 0  # a's erased events are never sent again


def test_a_pull_killed_before_it_applied_an_erasure_applies_it_next_time(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    _write_secret(a)
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    _pull(b, store)
    erase(a, Target("text", SECRET))
    sync.push(a.log, store, ACCOUNT, store_name="mem")

    def killed(_received):
        raise KeyboardInterrupt  # the device dies after the batch (with the pending erasure) was appended

    with pytest.raises(KeyboardInterrupt):
        sync.pull(b.log, store, ACCOUNT, store_name="mem", erase=killed)
    assert _holders(b)
    report = _pull(b, store)
    assert report.received == 0 and report.erased == 1
    assert not _holders(b)


def test_the_default_eraser_erases_the_lines_by_origin_key(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    _write_secret(a)
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    sync.pull(b.log, store, ACCOUNT, store_name="mem")
    erase(a, Target("text", SECRET))
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    assert sync.pull(b.log, store, ACCOUNT, store_name="mem").erased == 1
    assert not any(SECRET in (getattr(e, "content", "") or getattr(e, "text", "")) for e in b.log.read())
    applied = [e for e in b.log.read() if isinstance(e, ErasureRecorded) and e.seqs]
    assert len(applied) == 1 and applied[0].replica is not None


TEAMMATE = "mate@example.com"


def _project_secret(ws: Workspace, project: str, key: str) -> None:
    ws.append([SessionCreated(session_key=key, title="plans", project=project),
               MessageAppended(session_key=key, message_id=f"{key}-m1", role="user", content=f"remember: {SECRET}"),
               MessageAppended(session_key=key, message_id=f"{key}-m2", role="user", content="and buy milk")])


def test_an_erasure_reaches_the_teammates_of_every_shared_project_it_erased_in(tmp_path):
    """Owner ``a`` shares two projects, one with each teammate; an erasure of a text found in both
    reaches both teammates' devices (their copies erased, no byte left), and no teammate receives the
    erasure of a project it was not shown."""
    a, m1, m2 = _ws(tmp_path, "a"), _ws(tmp_path, "m1"), _ws(tmp_path, "m2")
    store = MemoryEventStore()
    red, blue = str(tmp_path / "red"), str(tmp_path / "blue")
    sync.share(store, ACCOUNT, red, TEAMMATE)
    sync.share(store, ACCOUNT, blue, "other@example.com")
    _project_secret(a, sync.project_name(red), "s-red")
    _project_secret(a, sync.project_name(blue), "s-blue")
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    pull = functools.partial(sync.pull, store_name="mem")
    pull(m1.log, store, TEAMMATE, erase=functools.partial(apply_received, m1))
    pull(m2.log, store, "other@example.com", erase=functools.partial(apply_received, m2))
    assert _holders(m1) and _holders(m2)
    assert set(m1.sessions.index) == {"s-red"} and set(m2.sessions.index) == {"s-blue"}
    erase(a, Target("text", SECRET))
    erasures = [e for e in a.log.read() if isinstance(e, ErasureRecorded)]
    routed = sorted(e.projects[0] for e in erasures if e.projects)  # each envelope's project: its first
    assert routed == sorted([sync.project_name(red), sync.project_name(blue)])
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    r1 = pull(m1.log, store, TEAMMATE, erase=functools.partial(apply_received, m1))
    r2 = pull(m2.log, store, "other@example.com", erase=functools.partial(apply_received, m2))
    assert (r1.erased, r2.erased) == (1, 1)  # each teammate got the erasure of its project, only that one
    assert not _holders(m1) and not _holders(m2)
    assert not any(SECRET.encode() in v for ws in (m1, m2) for v in views(ws.log, tmp_path / f"v{ws.home[-2:]}").values())
    for ws in (m1, m2):  # the rest of each session stays
        (s,) = ws.sessions.index.values()
        with open(os.path.join(ws.sessions.root, "sessions", s.file), "rb") as f:
            assert b"buy milk" in f.read()
    for ws in (a, m1, m2):
        ws.close()
