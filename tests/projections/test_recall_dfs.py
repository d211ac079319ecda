"""The document counts the recall index's writer keeps (``dfs``, schema 3) are FTS5's own (issue 23).

``RecallIndex.df`` answers from ``dfs`` instead of walking a term's whole row list through
fts5vocab (up to 45 ms for a common word at 1M messages). Hypothesis draws logs of messages,
updates, session deletes, history entries, facts and fact state changes, commits them in random
cuts, reopens the index, re-delivers events it already holds; after every commit ``dfs`` must
equal fts5vocab's (term, rows) term by term, and ``df`` (whole terms and prefixes) what fts5vocab
counts. ``verify`` compares the two too, so ``replay --check`` sees a count that drifted.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projections.recall import RecallIndex, ftsproof
from tests.projections.test_recall_index import _apply, logs


def _vocab(ix: RecallIndex) -> list[tuple[str, int]]:
    return ix.db.execute("SELECT term, doc FROM fts_row ORDER BY term").fetchall()


def _assert_counts(ix: RecallIndex) -> None:
    vocab = _vocab(ix)
    assert ix.db.execute("SELECT term, n FROM dfs ORDER BY term").fetchall() == vocab
    ix.snapshot()  # a new seq clears df's cache
    for term, n in vocab:
        assert ix.df(term) == n
    for prefix in sorted({t[:1] for t, _n in vocab} | {t[:2] for t, _n in vocab} | {"zzz"}):
        assert ix.df(prefix, prefix=True) == sum(n for t, n in vocab if t.startswith(prefix))
    assert ix.df("notaterm") == 0
    assert ftsproof.df_problems(ix.db) == []


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(log=logs(), cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8),
       restarts=st.lists(st.integers(min_value=0, max_value=60), max_size=3),
       replay_from=st.integers(min_value=0, max_value=60))
def test_the_kept_counts_are_fts5s_after_every_commit(tmp_path_factory, log, cuts, restarts, replay_from):
    path = str(tmp_path_factory.mktemp("ix") / "live.sqlite")
    ix = RecallIndex(path)
    try:
        for i, ev in enumerate(log):
            _apply(ix, ev)
            if i in cuts:
                ix.commit()
                _assert_counts(ix)
            if i in restarts:
                ix.commit()
                ix.close()
                ix = RecallIndex(path)
            if i == replay_from:  # a reader that re-delivers events the index already holds
                ix.commit()
                for old in log[: i + 1]:
                    _apply(ix, old)
        ix.commit()
        _assert_counts(ix)
        assert ix.verify() == [] and ix.verify(tokenise=True) == []
    finally:
        ix.close()


def test_a_drifted_count_is_a_problem_of_verify(tmp_path):
    ix = RecallIndex(str(tmp_path / "ix.sqlite"))
    from eventlog.events import MessageAppended, SessionCreated

    ix.catch_up([SessionCreated(seq=1, ts="2026-01-01T00:00:00.000Z", session_key="s", project="p", title="t"),
                 MessageAppended(seq=2, ts="2026-01-01T00:00:01.000Z", session_key="s", message_id="m", role="user",
                                 content="alpha bravo"),
                 MessageAppended(seq=3, ts="2026-01-01T00:00:02.000Z", session_key="s", message_id="n", role="user",
                                 content="alpha")])
    assert ix.df("alpha") == 2 and ix.df("bravo") == 1 and ix.verify() == []
    ix.db.execute("UPDATE dfs SET n = 3 WHERE term = 'alpha'")
    for tokenise in (False, True):
        found = ix.verify(tokenise=tokenise)
        assert any("document counts (dfs) differ" in p and "('alpha', 2)" in p for p in found), found
    ix.db.execute("UPDATE dfs SET n = 2 WHERE term = 'alpha'")
    ix.db.execute("DELETE FROM dfs WHERE term = 'bravo'")
    assert any("document counts (dfs) differ" in p for p in ix.verify())
    ix.close()


@pytest.mark.parametrize("batch", [1, 2, 1000])
def test_an_update_and_a_delete_in_one_commit_move_the_counts(tmp_path, batch):
    from eventlog.events import MessageAppended, MessageUpdated, SessionCreated, SessionDeleted

    ts = "2026-01-01T00:00:0{}.000Z".format
    ix = RecallIndex(str(tmp_path / "ix.sqlite"))
    ix.catch_up([SessionCreated(seq=1, ts=ts(0), session_key="s", project="p", title="t"),
                 MessageAppended(seq=2, ts=ts(1), session_key="s", message_id="m", role="user", content="alpha bravo"),
                 MessageUpdated(seq=3, ts=ts(2), session_key="s", message_id="m", content="delta"),
                 MessageAppended(seq=4, ts=ts(3), session_key="t", message_id="x", role="user", content="alpha"),
                 SessionDeleted(seq=5, ts=ts(4), session_key="t")], batch=batch)
    ix.snapshot()
    assert (ix.df("alpha"), ix.df("bravo"), ix.df("delta")) == (0, 0, 1)
    _assert_counts(ix)
    ix.close()
