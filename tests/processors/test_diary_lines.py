"""``diary.lines``: a snapshot step writes a day's lines as one event, and everything that read
one ``diary.appended`` per line still holds (issue 25 item 1).

The log indexes each line's key to the seq of the event carrying it (I13) and refuses a key it
holds; the diary, the digest and erasure fold both shapes; a log mixing them projects what a
log of per-line events projects; the event stays on this device (not replicated).
"""

from __future__ import annotations

import os
import shutil

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import processors
from eventlog import codec
from eventlog.app import replay
from eventlog.app.erase import Target, erase
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.errors import DuplicateInBatchError, InvalidEventError
from eventlog.events import DiaryAppended, DiaryLines, MessageAppended, OffsetCommitted, StmAdded
from eventlog.replication.origin import REPLICATED_TYPES
from processors import digest as digest_mod
from processors import snapshot as snapshot_mod
from processors.snapshot import canonical_message, diary_line
from projections.diary import diary_file, diary_items

KEY = "xxh3_128:" + "ab" * 16


def _messages(n: int, *, day: str = "2026-11-01", sessions: tuple[str, ...] = ("a", "b"), start: int = 0) -> list:
    return [MessageAppended(session_key=sessions[i % len(sessions)], message_id=f"m{start + i}",
                            role="user" if i % 2 else "assistant", content=f"message {start + i} about tabs",
                            timestamp=f"{day}T10:{(start + i) // 60 % 60:02d}:{(start + i) % 60:02d}Z")
            for i in range(n)]


def _events(ws: Workspace, cls: type) -> list:
    return [e for e in ws.log.read() if isinstance(e, cls)]


def _diary(home: str, day: str = "2026-11-01") -> bytes:
    with open(os.path.join(home, diary_file(day)), "rb") as f:
        return f.read()


def _drop_dedup_checkpoint(home: str) -> None:
    """Delete log/dedup.idx: the next open rebuilds the keys by scanning the segments."""
    path = os.path.join(home, "log", "dedup.idx")
    if os.path.exists(path):
        os.unlink(path)


def _key(ev: MessageAppended) -> str:
    return codec.content_hash(canonical_message(ev))


@pytest.fixture
def home(tmp_path) -> str:
    path = str(tmp_path / "ws")
    init_workspace(path)
    return path


def test_a_snapshot_writes_one_event_per_day_whose_keys_the_log_maps_to_its_seq(home):
    msgs = _messages(40) + _messages(10, day="2026-11-02", start=40)
    with Workspace.open(home, writable=True) as ws:
        ws.append(msgs)
        processors.run(ws, "snapshot")
        batches = _events(ws, DiaryLines)
        assert [b.date for b in batches] == ["2026-11-01", "2026-11-02"], "one event per day and step"
        assert not _events(ws, DiaryAppended)
        sent = {m.message_id: m for m in _events(ws, MessageAppended)}
        for b in batches:
            assert len(b.lines) == len(b.dedup_keys) == len(b.source_seqs)
            for item in diary_items(b):
                m = sent[item.message_id]
                assert item.dedup == _key(m) and item.source_seq == m.seq and item.line.endswith(m.content)
                assert ws.log.lookup_dedup(item.dedup) == b.seq, "a line's key must name the event that carries it"
        ws.flush()
    assert _diary(home).count(b"\n") == 40


def test_the_keys_survive_a_lost_dedup_checkpoint_and_a_reset_adds_no_line(home):
    with Workspace.open(home, writable=True) as ws:
        ws.append(_messages(30))
        processors.run(ws, "snapshot")
        (batch,) = _events(ws, DiaryLines)
    _drop_dedup_checkpoint(home)
    with Workspace.open(home, writable=True) as ws:  # keys rebuilt by scanning the segments
        assert all(ws.log.lookup_dedup(k) == batch.seq for k in batch.dedup_keys)
        ws.append([OffsetCommitted(processor="snapshot", record_seq=1, segment="00000000000000000001.jsonl",
                                   position=1, fingerprint="xxh3-64:" + "0" * 16)])  # an offset that does not hold
        report = processors.run(ws, "snapshot")
        assert report.resets and report.events_consumed == 30, "the reset re-read every message"
        assert report.duplicates_skipped == 30 and "diary.lines" not in report.outputs


def test_a_rerun_from_the_start_writes_no_line_twice(home):
    with Workspace.open(home, writable=True) as ws:
        ws.append(_messages(25))
        processors.run(ws, "snapshot")
        snap = snapshot_mod.Snapshot()
        from processors.runner import RunReport

        snap.begin(ws, RunReport("snapshot"))
        again = [out for m in _events(ws, MessageAppended) for out in snap.policy(m)]
        assert again == [] and snap.end_step() == [], "every message's key is known: nothing to write"


def _one_line_event(line: str, key: str) -> DiaryLines:
    return DiaryLines(date="2026-11-01", lines=[line], session_keys=["s"], message_ids=[line], source_seqs=[0],
                      roles=["user"], dedup_keys=[key])


@pytest.mark.parametrize("path", ["batch", "single"])
def test_the_log_refuses_an_event_claiming_a_key_it_holds_and_writes_nothing(home, path):
    other = "xxh3_128:" + "cd" * 16
    with Workspace.open(home, writable=True) as ws:
        append = ws.log.append_batch if path == "batch" else lambda evs: ws.log.append(evs[-1])
        first = append([_one_line_event("x", KEY)] if path == "single" else [_one_line_event("w", other),
                                                                              _one_line_event("x", KEY)])
        assert ws.log.lookup_dedup(KEY) == (first if path == "single" else first[-1])
        end = ws.log.last_seq
        with pytest.raises(DuplicateInBatchError, match="already carries"):
            append([_one_line_event("v", "xxh3_128:" + "ef" * 16), _one_line_event("y", KEY)])
        if path == "batch":
            with pytest.raises(DuplicateInBatchError, match="share dedup key"):  # two items of one batch
                append([_one_line_event("y", "xxh3_128:" + "01" * 16), _one_line_event("z", "xxh3_128:" + "01" * 16)])
        twice = DiaryLines(date="2026-11-01", lines=["y", "z"], session_keys=["s", "s"], message_ids=["n", "o"],
                           source_seqs=[0, 0], roles=["user", "user"], dedup_keys=["xxh3_128:" + "02" * 16] * 2)
        with pytest.raises(DuplicateInBatchError, match="share dedup key"):  # twice in one event
            append([twice])
        assert ws.log.last_seq == end
        for key in ("ef", "01", "02"):
            assert ws.log.lookup_dedup("xxh3_128:" + key * 16) is None, "a refused event left a key behind"


def test_a_single_append_indexes_every_claimed_key(home):
    with Workspace.open(home, writable=True) as ws:
        keys = ["xxh3_128:" + f"{i:032x}" for i in range(3)]
        seq = ws.log.append(DiaryLines(date="2026-11-01", lines=["a", "b", "c"], session_keys=["s"] * 3,
                                       message_ids=["1", "2", "3"], source_seqs=[0] * 3, roles=["user"] * 3,
                                       dedup_keys=keys))
        assert [ws.log.lookup_dedup(k) for k in keys] == [seq] * 3


@pytest.mark.parametrize(("change", "field"), [
    ({"roles": []}, "roles"),
    ({"source_seqs": [1, 2, 3]}, "source_seqs"),
    ({"lines": ["a\nb", "c"]}, "lines[0]"),
    ({"lines": ["a", "c\r"]}, "lines[1]"),
    ({"dedup_keys": ["xxh3_128:" + "0" * 32, "my secret key"]}, "dedup_keys[1]"),
    ({"dedup_keys": ["xxh3_128:" + "0" * 32 + "\nxxh3_128:" + "4" * 32, "xxh3_128:" + "5" * 32]}, "dedup_keys[0]"),
    ({"session_keys": ["s", "k" * 5000]}, "session_keys[1]"),
    ({"date": "../../x"}, "date"),
    ({"source_seqs": [1, -1]}, "source_seqs[1]"),
])
def test_a_malformed_diary_lines_event_is_refused_naming_its_field(home, change, field):
    good = {"date": "2026-11-01", "lines": ["a", "b"], "session_keys": ["s", "s"], "message_ids": ["1", "2"],
            "source_seqs": [1, 2], "roles": ["user", "user"], "dedup_keys": ["xxh3_128:" + "0" * 32, "xxh3_128:" + "1" * 32]}
    with Workspace.open(home, writable=True) as ws:
        ws.append([DiaryLines(**good)])  # the good one is accepted
        with pytest.raises(InvalidEventError) as err:
            ws.append([DiaryLines(**{**good, "dedup_keys": ["xxh3_128:" + "2" * 32, "xxh3_128:" + "3" * 32], **change})])
        assert err.value.field == field and field.split("[")[0] in str(err.value)


def _legacy_snapshot(ws: Workspace, msgs: list[MessageAppended]) -> None:
    """What the snapshot wrote before diary.lines: one diary.appended per message (key version 2)."""
    from eventlog.timeutil import source_time

    out = []
    for m in msgs:
        when = source_time(m.timestamp, m.ts)
        out.append(DiaryAppended(date=when[:10], line=diary_line(m, when), session_key=m.session_key,
                                 message_id=m.message_id, source_seq=m.seq, role=m.role, key_version=2, dedup=_key(m)))
    ws.append(out)


def test_a_log_mixing_both_shapes_projects_what_per_line_events_project(tmp_path):
    """Old log: per-line events for the first messages. Then the new snapshot writes the rest as diary.lines.
    The diary and the digest's entries match a log written entirely with per-line events."""
    homes = {}
    for shape in ("mixed", "legacy"):
        home = homes[shape] = str(tmp_path / shape)
        init_workspace(home, digest_batch_bytes=300)
        with Workspace.open(home, writable=True) as ws:
            ws.append(_messages(12))
            first = _events(ws, MessageAppended)
            _legacy_snapshot(ws, first)
            ws.append(_messages(12, start=12))
            rest = [m for m in _events(ws, MessageAppended) if m.seq > first[-1].seq]
            if shape == "legacy":
                _legacy_snapshot(ws, rest)
            else:
                assert processors.run(ws, "snapshot").duplicates_skipped == 12, "the old lines' keys must count"
                assert len(_events(ws, DiaryLines)) == 1
            processors.run(ws, "digest")
            ws.flush()
            entries = _events(ws, StmAdded)
            homes[shape + "_entries"] = [(e.text, e.session_keys, e.message_seqs) for e in entries]
            replay.rebuild(ws)
            assert replay.check(ws).clean
    assert _diary(homes["mixed"]) == _diary(homes["legacy"])
    assert homes["mixed_entries"] == homes["legacy_entries"]


def test_digest_entries_starting_inside_an_event_get_ids_of_their_own(home):
    shutil.rmtree(home)
    init_workspace(home, digest_batch_bytes=120)  # a few lines per entry: entries start mid-event
    with Workspace.open(home, writable=True) as ws:
        ws.append(_messages(20))
        processors.run(ws, "snapshot")
        processors.run(ws, "digest")
        (batch,) = _events(ws, DiaryLines)
        entries = _events(ws, StmAdded)
        ids = [e.entry_id for e in entries]
        assert len(entries) > 2 and len(set(ids)) == len(ids), "two entries share an id: the second would be dropped"
        assert ids[0] == f"stm-2026-11-01-{batch.seq}" and all(i.startswith(f"stm-2026-11-01-{batch.seq}.") for i in ids[1:])
        assert [s for e in entries for s in e.message_seqs] == batch.source_seqs, "every line once, in order"


def test_a_digest_step_stops_after_step_lines_of_diary_lines(home, monkeypatch):
    monkeypatch.setattr(digest_mod, "STEP_LINES", 10)
    monkeypatch.setattr(snapshot_mod, "EVENT_LINE_BYTES", 200)  # several events for one day
    with Workspace.open(home, writable=True) as ws:
        ws.append(_messages(60))
        processors.run(ws, "snapshot")
        assert len(_events(ws, DiaryLines)) >= 6
        processors.run(ws, "digest")
        commits = [e for e in ws.log.read() if e.type == "offset.committed" and e.processor == "digest"]
        assert len(commits) >= 3, "the digest read every diary.lines event in one step"
        assert sorted(s for e in _events(ws, StmAdded) for s in e.message_seqs) == sorted(
            s for e in _events(ws, DiaryLines) for s in e.source_seqs)


@pytest.mark.parametrize("secret", ["the launch code is 7781-4431-mango", "ok 7781"])  # the short one: no text search
def test_erasing_a_session_erases_the_diary_lines_holding_its_lines(home, secret):
    with Workspace.open(home, writable=True) as ws:
        ws.append(_messages(4, sessions=("keep",)) + [
            MessageAppended(session_key="gone", message_id="g1", role="user", content=secret,
                            timestamp="2026-11-01T11:00:00Z")])
        processors.run(ws, "snapshot")
        processors.run(ws, "digest")
        ws.flush()
        assert secret.encode() in _diary(home)
        erase(ws, Target("session", "gone"))
        assert not [e for e in _events(ws, DiaryLines) if "gone" in e.session_keys]
    for dirpath, _dirs, files in os.walk(home):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as f:
                assert b"7781" not in f.read(), f"{name} still holds the erased text"


def test_diary_lines_stay_on_this_device():
    assert "diary.lines" not in REPLICATED_TYPES
    assert "diary.appended" not in REPLICATED_TYPES


TEXTS = st.text(alphabet=st.sampled_from(list("ab .\t\n\r\x0b\x0c\x1c\x85\u2028\u2029\u3000\xa0é😀⏎")), max_size=14)


@settings(max_examples=400, deadline=None)
@given(text=TEXTS, role=st.sampled_from(["user", "x\ny", "a\rb"]), key=st.sampled_from(["s", "k\r\nz"]))
def test_a_diary_line_is_one_line_and_the_fast_path_changes_no_text(text, role, key):
    """diary_line skips the split-and-join for printable text: what it gives is what the join gives."""
    ev = MessageAppended(session_key=key, message_id="m", role=role, content=text)
    line = diary_line(ev, "2026-11-01T10:00:00.000Z")
    joined = " ⏎ ".join(p.strip() for p in text.strip().splitlines() if p.strip()) or "(no text)"
    assert line.endswith(": " + joined)
    assert "\n" not in line and "\r" not in line
    assert msgspec.json.decode(msgspec.json.encode(line)) == line


def test_an_erased_diary_lines_event_keeps_its_keys_so_a_reset_brings_no_line_back(home):
    """The marker of an erased diary.lines keeps its keys (hashed): the other session's line it took along
    does not come back when the snapshot reads the log again, nor after the dedup checkpoint is lost."""
    with Workspace.open(home, writable=True) as ws:
        ws.append(_messages(3, sessions=("keep",)) + [
            MessageAppended(session_key="gone", message_id="g1", role="user", content="ok 7781",
                            timestamp="2026-11-01T11:00:00Z")])
        processors.run(ws, "snapshot")
        (batch,) = _events(ws, DiaryLines)
        erase(ws, Target("session", "gone"))
    _drop_dedup_checkpoint(home)
    with Workspace.open(home, writable=True) as ws:
        assert [ws.log.lookup_dedup(k) for k in batch.dedup_keys] == [batch.seq] * 4
        ws.append([OffsetCommitted(processor="snapshot", record_seq=1, segment="00000000000000000001.jsonl",
                                   position=1, fingerprint="xxh3-64:" + "0" * 16)])
        report = processors.run(ws, "snapshot")
        assert report.resets and report.duplicates_skipped == 3 and "diary.lines" not in report.outputs


def test_the_secrets_door_redacts_every_line_of_a_diary_lines_event(home):
    from tests.core.test_secrets import OPENAI

    with Workspace.open(home, writable=True) as ws:
        ws.append([DiaryLines(date="2026-11-01", lines=["fine", f"my key is {OPENAI} ok"], session_keys=["s", "s"],
                              message_ids=["1", "2"], source_seqs=[0, 0], roles=["user", "user"],
                              dedup_keys=["xxh3_128:" + "7" * 32, "xxh3_128:" + "8" * 32])])
        (ev,) = _events(ws, DiaryLines)
        assert ev.lines[0] == "fine" and OPENAI not in ev.lines[1] and "[REDACTED:openai-key]" in ev.lines[1]
        assert ev.dedup_keys == ["xxh3_128:" + "7" * 32, "xxh3_128:" + "8" * 32], "keys are names, never rewritten"
        ws.flush()
    assert OPENAI.encode() not in _diary(home)
