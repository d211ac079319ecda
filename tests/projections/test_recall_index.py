"""The recall index is a projection: any way of applying the log gives the same content.

The property test draws a log (sessions created and deleted, messages appended and
updated, history entries, facts appended, edited and moved between states, events recall
ignores) and applies it to one index in arbitrary commit chunks, with restarts (close and
reopen) and replays of events it already holds, and to another index in one go from seq 1.
Both must have the same ``content_digest`` and answer a set of queries identically; no
message of a deleted session and no superseded or forgotten fact may ever be found.
"""

from __future__ import annotations

import os
import sqlite3

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.errors import ConfigError, NotFound
from eventlog.events import (
    EVENT_TYPES,
    DiaryAppended,
    DiaryTrimmed,
    HistoryAppended,
    MemoryAppended,
    MessageAppended,
    MessageUpdated,
    OffsetCommitted,
    SessionCreated,
    SessionDeleted,
)
from projections.recall import RecallIndex, recall
from projections.recall.index import SCHEMA

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "painting", "painted", "camping", "support",
         "group", "東京", "数据库", "迁移", "テスト", "café"]
SESSIONS = ["s1", "s2", "s3"]
QUERIES = ["alpha bravo", "painting", "camp", "support group", "东京 数据库", "数据库迁移", "テスト", "echo foxtrot",
           "cafe", "charlie delta echo"]


def _text(draw: st.DrawFn, tag: str) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
    return " ".join(words) + f" {tag}"


@st.composite
def logs(draw: st.DrawFn) -> list:
    """A log of recall-relevant events (and some it ignores), stamped with dense seqs."""
    evs: list = []
    n = draw(st.integers(min_value=1, max_value=40))
    live: dict[str, list[str]] = {}
    facts: list[str] = []
    for i in range(n):
        kind = draw(st.sampled_from(["create", "msg", "msg", "msg", "update", "delete", "history", "fact", "factstate",
                                     "other"]))
        seq = len(evs) + 1
        ts = f"2026-01-{1 + seq // 60:02d}T10:00:{seq % 60:02d}.000Z"  # never decreasing, as the log's
        key = draw(st.sampled_from(SESSIONS))
        if kind == "create":
            evs.append(SessionCreated(seq=seq, ts=ts, session_key=key, project=draw(st.sampled_from(["p1", "p2", ""])),
                                      title=f"title {i}"))
            live.setdefault(key, [])
        elif kind == "msg":
            mid = draw(st.sampled_from(["m1", "m2", "m3", f"m{i}"]))
            extra = {"speaker": draw(st.sampled_from(["Alice", "Bob"]))} if draw(st.booleans()) else {}
            calls = [{"name": "Bash"}] if draw(st.booleans()) else None
            evs.append(MessageAppended(seq=seq, ts=ts, session_key=key, message_id=mid,
                                       role=draw(st.sampled_from(["user", "assistant", "tool"])),
                                       content=_text(draw, f"tok{i}"), extra=extra, tool_calls=calls))
            live.setdefault(key, []).append(mid)
        elif kind == "update" and live.get(key):
            mid = draw(st.sampled_from(live[key]))
            evs.append(MessageUpdated(seq=seq, ts=ts, session_key=key, message_id=mid, content=_text(draw, f"upd{i}"),
                                      extra={"speaker": "Carol"} if draw(st.booleans()) else {}))
        elif kind == "delete":
            evs.append(SessionDeleted(seq=seq, ts=ts, session_key=key))
            live.pop(key, None)
        elif kind == "history":
            evs.append(HistoryAppended(seq=seq, ts=ts, text=_text(draw, f"hist{i}"), source="consolidator",
                                       project=draw(st.sampled_from(["p1", ""])), session_key=key))
        elif kind == "fact":
            fid = draw(st.sampled_from(["f1", "f2", f"f{i}"]))
            evs.append(MemoryAppended(seq=seq, ts=ts, fact_id=fid, scope="project", section="## Project Context",
                                      text=_text(draw, f"fact{i}"), project="p1"))
            facts.append(fid)
        elif kind == "factstate" and facts:
            evs.append(("set_fact", seq, draw(st.sampled_from(facts)),
                        draw(st.sampled_from(["active", "superseded", "forgotten", "archived", None])),
                        draw(st.one_of(st.none(), st.just(f"edited fact {i} alpha")))))
        elif draw(st.booleans()):
            evs.append(DiaryAppended(seq=seq, ts=ts, date="2026-01-01", line=f"ignored {i} alpha"))
        else:
            evs.append(DiaryTrimmed(seq=seq, ts=ts, date="2026-01-01", dropped_lines=1, dropped_bytes=10,
                                    start_before=0, start_after=10, budget=100))
    return evs


def _apply(ix: RecallIndex, ev) -> None:
    if isinstance(ev, tuple):
        _, seq, fid, state, text = ev
        ix.set_fact(fid, state=state, text=text, seq=seq)
    else:
        ix.apply(ev)


def _answers(ix: RecallIndex) -> list:
    out = []
    for q in QUERIES:
        for scope in ("all", "messages", "facts", "history"):
            hits = recall(ix, q, scope=scope, limit=50)
            out.append([(h.kind, h.seq, h.session_key, h.message_id, round(h.score, 9), h.snippet, h.state)
                        for h in hits])
    return out


def _fts_ok(ix: RecallIndex) -> None:
    ix.db.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")
    assert ix.verify() == []


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(log=logs(), cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8),
       restarts=st.lists(st.integers(min_value=0, max_value=60), max_size=3),
       replay_from=st.integers(min_value=0, max_value=60))
def test_incremental_equals_rebuild(tmp_path_factory, log, cuts, restarts, replay_from):
    d = tmp_path_factory.mktemp("ix")
    live_path, fresh_path = str(d / "live.sqlite"), str(d / "fresh.sqlite")
    ix = RecallIndex(live_path)
    for i, ev in enumerate(log):
        _apply(ix, ev)
        if i in cuts:
            ix.commit()
        if i in restarts:
            ix.commit()
            ix.close()
            ix = RecallIndex(live_path)
        if i == replay_from:  # a reader that re-delivers events the index already holds
            ix.commit()
            for old in log[: i + 1]:
                _apply(ix, old)
    ix.commit()
    fresh = RecallIndex(fresh_path)
    for ev in log:
        _apply(fresh, ev)
    fresh.commit()
    try:
        assert ix.seq == fresh.seq == (len(log) if not isinstance(log[-1], tuple) else ix.seq)
        assert ix.content_digest() == fresh.content_digest()
        assert _answers(ix) == _answers(fresh)
        _fts_ok(ix)
        _fts_ok(fresh)
        _check_removed(fresh, log)
    finally:
        ix.close()
        fresh.close()


def _check_removed(ix: RecallIndex, log: list) -> None:
    """No message of a deleted session and no superseded/forgotten fact is ever found."""
    deleted_at: dict[str, int] = {}
    created_after: dict[str, int] = {}
    fact_state: dict[str, str] = {}
    for ev in log:
        if isinstance(ev, SessionDeleted):
            deleted_at[ev.session_key] = ev.seq
        elif isinstance(ev, MemoryAppended):
            fact_state.setdefault(ev.fact_id, "active")
        elif isinstance(ev, tuple) and ev[3] is not None and ev[2] in fact_state:
            fact_state[ev[2]] = ev[3]
    for ev in log:
        if isinstance(ev, MessageAppended) and ev.seq < deleted_at.get(ev.session_key, 0):
            created_after[f"tok{ev.seq - 1}"] = ev.seq
    for q in QUERIES + [w for w in WORDS]:
        for h in recall(ix, q, limit=100):
            if h.kind == "message":
                assert h.seq > deleted_at.get(h.session_key, 0), (q, h)
            if h.kind == "fact":
                assert h.state in ("active", "archived"), h
                assert fact_state[h.fact_id] in ("active", "archived")
    for _fid, state in fact_state.items():
        hits = recall(ix, "alpha bravo charlie delta echo foxtrot painting camping support group", scope="facts",
                      states=[state], limit=100)
        assert all(h.state == state for h in hits)


# -- totality and lifecycle -----------------------------------------------------------------


def _minimal(cls, seq: int):
    """An instance of any event type with placeholder values for its required fields."""
    fields = {}
    for f in msgspec.structs.fields(cls):
        if f.required:
            t = f.type
            fields[f.name] = (0 if t is int else [] if getattr(t, "__origin__", None) is list else "x")
    return cls(seq=seq, ts="2026-01-01T00:00:00.000Z", **fields)


def test_every_event_type_is_folded_or_ignored(tmp_path):
    ix = RecallIndex(str(tmp_path / "r.sqlite"))
    for i, cls in enumerate(EVENT_TYPES, 1):
        ix.apply(_minimal(cls, i))
    assert ix.commit() == len(EVENT_TYPES)
    weird = [
        MessageAppended(seq=100, ts="2026-01-01T00:00:00.000Z", session_key="k\x00/../x", message_id="\ud800",
                        role="user", content="lone \udc00 surrogate and NUL \x00 text",
                        timestamp="9999-12-31T23:59:59-23:59", tool_calls=[1, None, {"function": "x"}, {"name": 3}],
                        extra={"speaker": 7, "caption": ["no"]}),
        MessageUpdated(seq=101, ts="2026-01-01T00:00:00.000Z", session_key="k\x00/../x", message_id="\ud800",
                       content="\udfff replaced words", extra={"speaker": None}),
        SessionCreated(seq=102, ts="2026-01-01T00:00:00.000Z", session_key="", created_at="not a time"),
        MemoryAppended(seq=103, ts="2026-01-01T00:00:00.000Z", fact_id="", scope="", section="", text=""),
        OffsetCommitted(seq=104, ts="2026-01-01T00:00:00.000Z", processor="p", record_seq=1, segment="s", position=0,
                        fingerprint="f"),
    ]
    for ev in weird:
        ix.apply(ev)
    assert ix.commit() == 104
    assert recall(ix, "surrogate") == []  # the update replaced that text
    hit = recall(ix, "replaced")[0]
    assert (hit.message_id, hit.session_key, hit.text) == ("\ufffd", "k\x00/../x", "\ufffd replaced words")
    _fts_ok(ix)
    ix.close()


def test_position_is_committed_with_the_rows_and_failed_commits_leave_nothing(tmp_path, monkeypatch):
    import projections.recall.index as index_module

    path = str(tmp_path / "r.sqlite")
    ix = RecallIndex(path)
    ix.apply(MessageAppended(seq=1, ts="2026-01-01T00:00:00.000Z", session_key="s", message_id="1", role="user",
                             content="first durable words"))
    ix.commit()
    digest = ix.content_digest()
    ix.apply(MessageAppended(seq=2, ts="2026-01-01T00:00:00.000Z", session_key="s", message_id="2", role="user",
                             content="second words"))
    ix.apply(SessionDeleted(seq=3, ts="2026-01-01T00:00:00.000Z", session_key="s"))

    def boom(self, seq):
        raise OSError("disk full")

    monkeypatch.setattr(index_module._Writer, "finish", boom)
    with pytest.raises(OSError):
        ix.commit()
    monkeypatch.undo()
    assert ix.seq == 1 and ix.content_digest() == digest
    assert [h.message_id for h in recall(ix, "durable")] == ["1"]
    # the reader re-delivers what was not committed
    ix.apply(MessageAppended(seq=2, ts="2026-01-01T00:00:00.000Z", session_key="s", message_id="2", role="user",
                             content="second words"))
    ix.apply(SessionDeleted(seq=3, ts="2026-01-01T00:00:00.000Z", session_key="s"))
    assert ix.commit() == 3
    ix.close()
    again = RecallIndex(path)
    assert again.seq == 3
    assert recall(again, "durable words") == []
    again.close()


def test_bulk_batches_are_written_by_a_helper_thread_in_order(tmp_path):
    """More messages than one insert batch, then an update of an early one in the same commit."""
    ix = RecallIndex(str(tmp_path / "r.sqlite"))
    n = 5000
    for i in range(1, n + 1):
        ix.apply(MessageAppended(seq=i, ts="2026-01-01T00:00:00.000Z", session_key=f"s{i % 7}", message_id=str(i),
                                 role="user", content=f"message number w{i} about things"))
    ix.apply(MessageUpdated(seq=n + 1, ts="2026-01-01T00:00:00.000Z", session_key="s1", message_id="1",
                            content="rewritten zebra"))
    ix.commit()
    assert ix.stats()["messages"] == n
    hits = recall(ix, "zebra")
    assert hits[0].message_id == "1" and hits[0].snippet == "rewritten [zebra]"
    assert {h.session_key for h in hits} == {"s1"}  # the others are its neighbours, found through their context
    assert recall(ix, "w2 number")[0].message_id == "2"
    assert recall(ix, "w4999")[0].message_id == "4999"
    _fts_ok(ix)
    ix.close()


def test_schema_change_rebuilds_and_readonly_refuses(tmp_path):
    path = str(tmp_path / "r.sqlite")
    ix = RecallIndex(path)
    ix.apply(MessageAppended(seq=1, ts="2026-01-01T00:00:00.000Z", session_key="s", message_id="1", role="user",
                             content="hello"))
    ix.commit()
    ix.db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA + 1,))
    ix.close()
    with pytest.raises(ConfigError, match="rebuild"):
        RecallIndex(path, readonly=True)
    ix = RecallIndex(path)
    assert ix.seq == 0 and ix.reset_reason.startswith("schema")
    ix.close()
    with open(path, "wb") as f:
        f.write(b"this is not a database at all" * 100)
    ix = RecallIndex(path)
    assert ix.seq == 0 and ix.reset_reason.startswith("unreadable")
    ix.close()
    with pytest.raises(NotFound):
        RecallIndex(str(tmp_path / "missing.sqlite"), readonly=True)


def test_readonly_reader_sees_commits_of_the_writer(tmp_path):
    path = str(tmp_path / "r.sqlite")
    w = RecallIndex(path)
    w.apply(MessageAppended(seq=1, ts="2026-01-01T00:00:00.000Z", session_key="s", message_id="1", role="user",
                            content="kiwi"))
    w.commit()
    r = RecallIndex(path, readonly=True)
    assert [h.message_id for h in recall(r, "kiwi")] == ["1"]
    w.apply(MessageAppended(seq=2, ts="2026-01-01T00:00:00.000Z", session_key="s", message_id="2", role="user",
                            content="kiwi kiwi mango"))
    w.commit()
    assert {h.message_id for h in recall(r, "kiwi")} == {"1", "2"}
    with pytest.raises(ConfigError):
        r.apply(MessageAppended(seq=3, ts="", session_key="s", message_id="3", role="user", content="x"))
    assert recall(path, "mango")[0].message_id == "2"  # by path: opened read-only for the call
    r.close()
    w.close()
    with pytest.raises(sqlite3.ProgrammingError):
        r.db.execute("SELECT 1")
    assert os.path.exists(path)


# -- in a workspace -------------------------------------------------------------------------


def test_workspace_update_check_and_rebuild(tmp_path):
    import eventlog
    from projections.recall import workspace as rw

    home = str(tmp_path / "home")
    eventlog.init_workspace(home)
    with eventlog.open_workspace(home, writable=True) as ws:
        ws.append([SessionCreated(session_key="cli:me", project="evlog", title="t"),
                   MessageAppended(session_key="cli:me", message_id="1", role="user",
                                   content="We chose SQLite FTS5 for recall."),
                   MessageAppended(session_key="cli:me", message_id="2", role="assistant",
                                   content="Noted: FTS5 with porter stemming.")])
    ix = rw.update(home)
    assert ix.seq == 3 and [h.message_id for h in recall(ix, "what did we pick for recall?")][:1] == ["1"]
    ix.close()
    assert rw.check(home) == []
    with eventlog.open_workspace(home, writable=True) as ws:
        ws.append([SessionDeleted(session_key="cli:me")])
    ix = rw.update(home)
    assert ix.seq == 4 and recall(ix, "SQLite FTS5") == []
    ix.db.execute("INSERT INTO fts(rowid, t) VALUES (99, 'ghost sqlite')")  # drift the projection on purpose
    ix.close()
    problems = rw.check(home)
    assert problems and any("full-text index" in p for p in problems)
    rw.rebuild(home).close()
    assert rw.check(home) == []
    assert os.path.exists(rw.index_path(home))
