"""Issue 22, the device side: device identity, push/pull of the log through an event store, Dream's skip rule.

Devices are real workspaces; the store is ``MemoryEventStore`` (the contract's definition).
"""

from __future__ import annotations

import os
import shutil

import msgspec
import pytest

from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import (
    DeviceClaimed,
    MemoryAppended,
    MemoryEdited,
    MemoryForgotten,
    MemoryPinned,
    MessageAppended,
    ReplicationPulled,
    SessionCreated,
)
from eventlog.replication import sync
from eventlog.replication.origin import REPLICATED_TYPES, OriginFold
from eventlog.replication.store import MemoryEventStore
from processors.dream import remember
from tests.memory_pipeline import dream
from tests.replication_helpers import views

ACCOUNT = "me@example.com"


def _ws(root, name: str) -> Workspace:
    home = os.path.join(str(root), name)
    init_workspace(home)
    return Workspace.open(home, writable=True)


def _sync(store, *wss: Workspace) -> None:
    for ws in wss:
        sync.push(ws.log, store, ACCOUNT, store_name="mem")
    for ws in wss:
        sync.pull(ws.log, store, ACCOUNT, store_name="mem")


def _claims(ws: Workspace) -> list[DeviceClaimed]:
    return [e for e in ws.log.read() if isinstance(e, DeviceClaimed)]


def test_device_id_lives_in_the_log_survives_replay_and_is_never_pushed(tmp_path):
    ws = _ws(tmp_path, "a")
    ws.append([SessionCreated(session_key="s1", title="hi")])
    store = MemoryEventStore()
    report = sync.push(ws.log, store, ACCOUNT, store_name="mem")
    device = report.device
    assert device.startswith("dev-") and _claims(ws)[0].from_seq == 1  # the existing event got an origin
    assert store.high_water(ACCOUNT, device) == 1
    page = store.pull(ACCOUNT, 0)
    assert [e.type for e in page.events] == ["session.created"]  # the claim and the push marker stay local
    ws.close()
    ws = Workspace.open(ws.home, writable=True)
    assert sync.ensure_device(ws.log) == device  # a reopened (or replayed) workspace is the same device
    assert len(_claims(ws)) == 1


def test_a_copied_workspace_claims_a_new_device_after_its_last_push(tmp_path):
    a = _ws(tmp_path, "a")
    a.append([SessionCreated(session_key="s1")])
    store = MemoryEventStore()
    first = sync.push(a.log, store, ACCOUNT, store_name="mem").device
    a.close()
    shutil.copytree(a.home, os.path.join(str(tmp_path), "copy"))
    a = Workspace.open(a.home, writable=True)
    copy = Workspace.open(os.path.join(str(tmp_path), "copy"), writable=True)
    a.append([MessageAppended(session_key="s1", message_id="m-a", role="user", content="from a")])
    copy.append([MessageAppended(session_key="s1", message_id="m-c", role="user", content="from the copy")])
    assert sync.push(a.log, store, ACCOUNT, store_name="mem").device == first
    second = sync.push(copy.log, store, ACCOUNT, store_name="mem").device
    assert second != first
    assert store.high_water(ACCOUNT, second) > 0  # the copy's new message went under its own id: nothing lost
    contents = sorted(msgspec.json.decode(e.body)["content"] for e in store.pull(ACCOUNT, 0).events
                      if e.type == "message.appended")
    assert contents == ["from a", "from the copy"]


def test_notes_facts_edits_pins_and_forgets_travel_and_memory_converges(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    remember(a, "I prefer green tea in the morning")
    a.append([MemoryAppended(fact_id="f-a", scope="user", section="Preferences", text="likes tea", by="user")])
    b.append([MemoryAppended(fact_id="f-b", scope="user", section="Preferences", text="likes coffee", by="user")])
    _sync(store, a, b)
    b.append([MemoryEdited(fact_id="f-a", text="likes green tea"), MemoryPinned(fact_id="f-a")])
    a.append([MemoryForgotten(fact_id="f-b", by="user")])
    _sync(store, a, b)
    _sync(store, a, b)
    va, vb = views(a.log, tmp_path / "va"), views(b.log, tmp_path / "vb")
    assert va == vb
    assert va["memory/MEMORY.md"] == b"# Memory\n\n## Preferences\n- likes green tea\n"
    assert b"green tea in the morning" in va["history"]
    assert b.memory.get("f-a").pinned and b.memory.get("f-b").state == "forgotten"


def test_a_re_sent_envelope_and_a_second_pull_are_no_ops(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    a.append([MemoryAppended(fact_id="f1", scope="user", section="Preferences", text="likes tea", by="user")])
    _sync(store, a, b)
    end = b.log.last_seq
    assert sync.pull(b.log, store, ACCOUNT, store_name="mem").received == 0
    assert b.log.last_seq == end  # a pull that brings nothing writes nothing
    again = sync.push(a.log, store, ACCOUNT, store_name="mem")
    assert again.sent == 0
    # the same envelopes offered again (another store, a lost cursor) are skipped by origin
    other = MemoryEventStore()
    other.push(ACCOUNT, store.pull(ACCOUNT, 0).events)
    report = sync.pull(b.log, other, ACCOUNT, store_name="other")
    assert report.received == 0 and report.skipped == 1
    assert sum(1 for e in b.log.read() if isinstance(e, MemoryAppended)) == 1


class _CrashAfterFetch(MemoryEventStore):
    """A store whose pull is answered, then the device dies before it appends."""

    crash = True

    def pull(self, account, after, limit=1000):
        page = super().pull(account, after, limit)
        if self.crash:
            self.crash = False
            raise KeyboardInterrupt("killed between fetch and append")
        return page


def test_a_pull_killed_between_fetch_and_append_writes_nothing_and_resumes(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = _CrashAfterFetch()
    a.append([SessionCreated(session_key="s1"), MessageAppended(session_key="s1", message_id="m1", role="user",
                                                                content="hello")])
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    sync.ensure_device(b.log)
    end = b.log.last_seq
    with pytest.raises(KeyboardInterrupt):
        sync.pull(b.log, store, ACCOUNT, store_name="mem")
    assert b.log.last_seq == end
    report = sync.pull(b.log, store, ACCOUNT, store_name="mem")
    assert report.received == 2
    pulled = [e for e in b.log.read() if isinstance(e, ReplicationPulled)]
    assert [(p.cursor, p.count) for p in pulled] == [(2, 2)]


def test_pull_pages_append_position_and_events_as_one_batch(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    a.append([SessionCreated(session_key="s1")] + [
        MessageAppended(session_key="s1", message_id=f"m{i}", role="user", content=f"hello {i}") for i in range(5)])
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    report = sync.pull(b.log, store, ACCOUNT, store_name="mem", limit=2)
    assert report.received == 6 and report.pages == 3
    evs = list(b.log.read())
    markers = [i for i, e in enumerate(evs) if isinstance(e, ReplicationPulled)]
    for i in markers:  # each marker is followed by exactly the events it announces
        m = evs[i]
        assert all(e.replica is not None for e in evs[i + 1:i + 1 + m.count])
    assert b.sessions.index["s1"].count == 5


def test_local_bookkeeping_never_travels(tmp_path):
    a = _ws(tmp_path, "a")
    a.append([SessionCreated(session_key="s1"), MessageAppended(session_key="s1", message_id="m1", role="user",
                                                                content="I moved to Lisbon last year")])
    dream(a)  # offsets, cursors, dream runs, facts
    store = MemoryEventStore()
    sync.push(a.log, store, ACCOUNT, store_name="mem")
    sent = {e.type for e in store.pull(ACCOUNT, 0).events}
    local = {e.type for e in a.log.read()} - sent
    assert sent <= REPLICATED_TYPES
    assert {"offset.committed", "cursor.advanced", "replication.device"} <= local
    assert "dream.started" in sent


def test_dream_skips_what_another_devices_dream_learned(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    a.append([SessionCreated(session_key="s1"), MessageAppended(session_key="s1", message_id="m1", role="user",
                                                                content="I moved to Lisbon last year")])
    dream(a)
    learned = {f.fact_id for f in a.memory.all_facts()}
    assert learned
    _sync(store, a, b)
    runs_before = len(b.dream_runs.runs())
    dream(b)
    assert {f.fact_id for f in b.memory.all_facts()} == learned
    assert not [r for r in b.dream_runs.runs()[runs_before:] if r.input_cursors]  # nothing learned again
    started = next(e for e in b.log.read() if e.type == "dream.started")
    assert started.input_cursors and all(
        b.log.find(s).event.replica is not None for s in started.input_cursors)  # its inputs mapped to b's seqs
    assert OriginFold.of(b.log).held


def test_a_kept_fold_is_used_only_while_the_log_still_matches_it(tmp_path):
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    store = MemoryEventStore()
    ckpt = str(tmp_path / "fold.msgpack")
    a.append([MemoryAppended(fact_id="f1", scope="user", section="Preferences", text="likes tea", by="user")])
    sync.push(a.log, store, ACCOUNT, store_name="mem", checkpoint=ckpt)
    kept = OriginFold.load(ckpt, a.log)
    full = OriginFold.of(a.log)
    assert kept.seq == full.seq and kept.local == full.local and kept.claims == full.claims
    b.append([MemoryAppended(fact_id="f2", scope="user", section="Preferences", text="other", by="user")] * 1)
    sync.ensure_device(b.log)
    assert OriginFold.load(ckpt, b.log).seq == 0  # another log at that seq: not trusted, folded again
    sync.pull(b.log, store, ACCOUNT, store_name="mem", checkpoint=ckpt)
    assert sync.pull(b.log, store, ACCOUNT, store_name="mem", checkpoint=ckpt).received == 0
    assert OriginFold.load(ckpt, b.log).held == OriginFold.of(b.log).held != {}


def test_a_memory_checkpoint_of_an_older_evlog_keeps_its_facts_states(tmp_path):
    from eventlog.fsio import OS_FS
    from projections.memory import MemoryProjection

    old_state = {"facts": {
        "f1": {"fact_id": "f1", "seq": 3, "section": "Preferences", "text": "likes tea (edited)", "state": "forgotten",
               "changed_by": "user", "edits": 1},
        "f2": {"fact_id": "f2", "seq": 4, "section": "Preferences", "text": "likes coffee", "state": "active"},
    }, "order": {"": ["f1", "f2"]}}
    proj = MemoryProjection(str(tmp_path), OS_FS, live=False)
    proj.load(old_state)
    proj.apply(MemoryPinned(seq=9, ts="2026-12-01T10:00:00.000Z", fact_id="f1"))
    proj.apply(MemoryEdited(seq=10, ts="2026-12-01T10:00:01.000Z", fact_id="f2", text="likes black coffee"))
    f1, f2 = proj.get("f1"), proj.get("f2")
    assert (f1.state, f1.text, f1.pinned, f1.edits) == ("forgotten", "likes tea (edited)", True, 1)
    assert (f2.state, f2.text) == ("active", "likes black coffee")
    assert proj.rendered("") == b"# Memory\n\n## Preferences\n- likes black coffee\n"


def test_a_fact_forgotten_on_one_device_never_returns_after_the_others_dream(tmp_path):
    laptop, desk = _ws(tmp_path, "laptop"), _ws(tmp_path, "desk")
    store = MemoryEventStore()
    laptop.append([SessionCreated(session_key="s1"), MessageAppended(session_key="s1", message_id="m1", role="user",
                                                                     content="I moved to Lisbon last year")])
    _sync(store, laptop, desk)  # the desk has the message before any Dream ran
    dream(laptop)
    facts = [f.fact_id for f in laptop.memory.all_facts("active")]
    assert facts
    _sync(store, laptop, desk)
    laptop.append([MemoryForgotten(fact_id=fid, by="user", reason="not true") for fid in facts])
    _sync(store, laptop, desk)
    dream(desk)
    _sync(store, laptop, desk)
    dream(laptop)
    for ws in (laptop, desk):
        assert not ws.memory.all_facts("active")
        assert {f.fact_id for f in ws.memory.all_facts("forgotten")} == set(facts)
    assert views(laptop.log, tmp_path / "vl") == views(desk.log, tmp_path / "vd")


def test_a_bad_envelope_is_refused_by_name_and_never_blocks_the_rest(tmp_path):
    from eventlog.replication.envelope import Replicated

    b = _ws(tmp_path, "b")
    store = MemoryEventStore()
    good = MemoryAppended(fact_id="f1", scope="user", section="Preferences", text="likes tea", by="user", seq=1,
                          ts="2026-12-01T10:00:00.000Z")
    store.push(ACCOUNT, [
        Replicated(origin="dev-x", origin_seq=1, hlc=5, type="offset.committed", body=msgspec.Raw(b'{"type":"x"}')),
        Replicated(origin="dev-x", origin_seq=2, hlc=6, type="memory.appended", body=msgspec.Raw(b'{"type":"memory.edited"}')),
        Replicated(origin="dev-x", origin_seq=3, hlc=7, type="memory.appended", body=msgspec.Raw(msgspec.json.encode(good))),
    ])
    report = sync.pull(b.log, store, ACCOUNT, store_name="mem")
    assert report.received == 1 and report.skipped == 2 and report.cursor == 3
    assert "dev-x#1" in report.refused[0] and "does not travel" in report.refused[0]
    assert "dev-x#2" in report.refused[1]
    assert b.memory.get("f1").text == "likes tea"
