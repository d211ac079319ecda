"""Opening the recall index reads sessions as folding needs them (issue 25, lever 0: each MCP
call reopened the index and built every session object). Any log, applied in chunks with
restarts, still gives the index a fold from seq 1 gives, when every session is read lazily."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.events import MessageAppended, SessionCreated, SessionDeleted
from projections.recall import RecallIndex, recall
from projections.recall import index as index_module
from tests.projections.test_recall_index import _answers, _apply, logs


@pytest.fixture()
def lazy(monkeypatch):
    monkeypatch.setattr(index_module, "EAGER_SESSIONS", 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(log=logs(), cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=6),
       restarts=st.lists(st.integers(min_value=0, max_value=60), max_size=3))
def test_lazily_read_sessions_fold_like_a_rebuild(tmp_path_factory, lazy, log, cuts, restarts):
    d = tmp_path_factory.mktemp("lazy")
    ix = RecallIndex(str(d / "live.sqlite"))
    for i, ev in enumerate(log):
        _apply(ix, ev)
        if i in cuts:
            ix.commit()
        if i in restarts:
            ix.commit()
            ix.close()
            ix = RecallIndex(str(d / "live.sqlite"))
            n = ix.db.execute("SELECT count(*) FROM sessions").fetchone()[0]
            assert ix._sessions.complete is (n == 0) and (n == 0 or ix._sessions.values() == [])
    ix.commit()
    fresh = RecallIndex(str(d / "fresh.sqlite"))
    for ev in log:
        _apply(fresh, ev)
    fresh.commit()
    try:
        assert ix.content_digest() == fresh.content_digest()
        assert _answers(ix) == _answers(fresh)
    finally:
        ix.close()
        fresh.close()


def test_opening_a_large_index_reads_no_session_until_one_is_needed(tmp_path, monkeypatch):
    monkeypatch.setattr(index_module, "EAGER_SESSIONS", 5)
    path = str(tmp_path / "ix.sqlite")
    ix = RecallIndex(path)
    seq = 0
    for k in range(20):
        seq += 1
        ix.apply(SessionCreated(seq=seq, ts="", session_key=f"s{k}", project="p", title=f"t{k}"))
        seq += 1
        ix.apply(MessageAppended(seq=seq, ts="", session_key=f"s{k}", message_id="1", role="user", content=f"kiwi {k}"))
    ix.commit()
    ix.close()
    ix = RecallIndex(path)
    try:
        assert ix._sessions.values() == []
        ix.apply(MessageAppended(seq=seq + 1, ts="", session_key="s3", message_id="2", role="user", content="mango"))
        ix.apply(SessionDeleted(seq=seq + 2, ts="", session_key="s4"))
        ix.commit()
        assert sorted(s.key for s in ix._sessions.values()) == ["s3"]
        assert ix.db.execute("SELECT nmsg FROM sessions WHERE skey = 's3'").fetchone()[0] == 2
        assert ix.db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 19
        assert recall(ix, "mango")[0].session_key == "s3"
        assert all(h.session_key != "s4" for h in recall(ix, "kiwi", limit=50))
    finally:
        ix.close()
