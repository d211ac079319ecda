"""The document counts the recall index's writer keeps (``dfs``, schema 3) are FTS5's own (issue 23).

``RecallIndex.df`` answers from ``dfs`` instead of walking a term's whole row list through
fts5vocab (up to 45 ms for a common word at 1M messages). Hypothesis draws logs of messages,
updates, session deletes, history entries, facts and fact state changes, commits them in random
cuts, reopens the index, re-delivers events it already holds; after every commit ``dfs`` must
equal fts5vocab's (term, rows) term by term, and ``df`` (whole terms and prefixes) what fts5vocab
counts. ``verify`` compares the two too, so ``replay --check`` sees a count that drifted.

A build from empty (``catch_up`` of an index with no full-text row) keeps no counts commit by commit:
its commits mark them pending and one pass over fts5vocab fills them at the end. The same logs built
that way must give what commit-by-commit upkeep gives (``dfs``, fts5vocab, the content digest), a
reader in the middle of the build must count what fts5vocab counts, and commits after the build (or
after a build that stopped half-way) must keep the counts exact again.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.events import MessageAppended, MessageUpdated, SessionCreated, SessionDeleted
from projections.recall import RecallIndex, ftsproof
from tests.projections.test_recall_index import _apply, logs

_TS = "2026-01-01T00:00:0{}.000Z".format


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
@pytest.mark.parametrize("kept", [False, True], ids=["build", "kept"])
def test_an_update_and_a_delete_in_one_commit_move_the_counts(tmp_path, batch, kept):
    ix = RecallIndex(str(tmp_path / "ix.sqlite"))
    first = [SessionCreated(seq=1, ts=_TS(0), session_key="s", project="p", title="t"),
             MessageAppended(seq=2, ts=_TS(1), session_key="s", message_id="m", role="user", content="alpha bravo")]
    rest = [MessageUpdated(seq=3, ts=_TS(2), session_key="s", message_id="m", content="delta"),
            MessageAppended(seq=4, ts=_TS(3), session_key="t", message_id="x", role="user", content="alpha"),
            SessionDeleted(seq=5, ts=_TS(4), session_key="t")]
    if kept:  # the rest is caught up on an index that holds rows: the counts move commit by commit
        ix.catch_up(first)
        ix.catch_up(rest, batch=batch)
    else:  # all of it from empty: a build, counted once at its end
        ix.catch_up(first + rest, batch=batch)
    ix.snapshot()
    assert (ix.df("alpha"), ix.df("bravo"), ix.df("delta")) == (0, 0, 1)
    _assert_counts(ix)
    ix.close()


def _pending(ix: RecallIndex) -> bool:
    return ix.db.execute("SELECT 1 FROM meta WHERE key = ?", (ftsproof.DFS_PENDING,)).fetchone() is not None


def _fed(ix: RecallIndex, log: list, during=None):
    """``log`` as ``catch_up`` takes it: a fact state change (a tuple) is buffered on ``ix`` directly, in its place;
    ``during(i)`` runs before the i-th item is handed over (what a reader sees between the build's commits)."""
    for i, ev in enumerate(log):
        if during is not None:
            during(i)
        if isinstance(ev, tuple):
            _apply(ix, ev)
        else:
            yield ev


def _commit_by_commit(path: str, log: list) -> RecallIndex:
    """``log`` folded with the counts kept commit by commit (the writer's upkeep), one commit per item."""
    ix = RecallIndex(path)
    for ev in log:
        _apply(ix, ev)
        ix.commit()
    return ix


def _assert_reader_counts(path: str) -> None:
    """A reader of the index as committed now counts what fts5vocab counts, the build's mark set or not."""
    with RecallIndex(path, readonly=True) as reader:
        reader.snapshot()
        _assert_df(reader, _vocab(reader))
        assert ftsproof.df_problems(reader.db) == [] and reader.verify() == []


def _assert_df(ix: RecallIndex, vocab: list[tuple[str, int]]) -> None:
    for term, n in vocab:
        assert ix.df(term) == n
    for prefix in sorted({t[:1] for t, _n in vocab} | {"zzz"}):
        assert ix.df(prefix, prefix=True) == sum(n for t, n in vocab if t.startswith(prefix))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(log=logs(), batch=st.integers(min_value=1, max_value=30), built=st.integers(min_value=0, max_value=40),
       cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=5))
def test_a_build_from_empty_counts_once_and_later_commits_keep_the_counts(tmp_path_factory, log, batch, built,
                                                                           cuts):
    tmp = tmp_path_factory.mktemp("ix")
    path = str(tmp / "built.sqlite")
    head, tail = log[:built], log[built:]
    ix = RecallIndex(path)
    marks: list[bool] = []

    def between_commits(_i: int) -> None:
        if ix.seq:  # a commit of the build happened: its mark is set, a reader counts what fts5vocab counts
            marks.append(_pending(ix))
            _assert_reader_counts(path)

    try:
        ix.catch_up(_fed(ix, head, between_commits), batch=batch)
        assert not _pending(ix)  # the build's end filled the counts
        assert all(marks)
        _assert_counts(ix)
        kept = _commit_by_commit(str(tmp / "kept.sqlite"), head)
        try:
            assert ix.content_digest() == kept.content_digest()
            assert ix.db.execute("SELECT term, n FROM dfs ORDER BY term").fetchall() == \
                kept.db.execute("SELECT term, n FROM dfs ORDER BY term").fetchall()
        finally:
            kept.close()
        for i, ev in enumerate(tail):  # commits on the built index: counted by the writer again
            _apply(ix, ev)
            if i in cuts:
                ix.commit()
                assert not _pending(ix)
                _assert_counts(ix)
        ix.commit()
        assert not _pending(ix)
        _assert_counts(ix)
        assert ix.verify() == [] and ix.verify(tokenise=True) == []
        full = _commit_by_commit(str(tmp / "full.sqlite"), log)
        try:
            assert ix.content_digest() == full.content_digest()
        finally:
            full.close()
    finally:
        ix.close()


class _Stop(Exception):
    pass


@pytest.mark.parametrize("then", ["commit", "catch_up", "reopen"])
def test_a_build_stopped_half_way_is_counted_by_the_next_writer(tmp_path, then):
    path = str(tmp_path / "ix.sqlite")
    log = [SessionCreated(seq=1, ts=_TS(0), session_key="s", project="p", title="t")] + [
        MessageAppended(seq=2 + i, ts=_TS(1), session_key="s", message_id=f"m{i}", role="user",
                        content=f"alpha w{i} " + "bravo " * (i % 3)) for i in range(8)]

    def stop_at(i: int) -> None:
        if i == 6:
            raise _Stop

    ix = RecallIndex(path)
    with pytest.raises(_Stop):
        ix.catch_up(_fed(ix, log, stop_at), batch=2)
    assert ix.seq == 6 and _pending(ix)  # the build committed seqs 1-6 and stopped before its end
    assert ix.db.execute("SELECT count(*) FROM dfs").fetchone()[0] == 0  # nothing counted yet
    _assert_reader_counts(path)  # a reader counts what fts5vocab counts meanwhile
    assert ix.df("alpha") == 5 and ix.verify() == [] and ix.verify(tokenise=True) == []
    kept = _commit_by_commit(str(tmp_path / "kept.sqlite"), log[:6])
    assert ix.content_digest() == kept.content_digest()  # the digest of what the counts will be
    kept.close()
    if then == "reopen":
        ix.close()
        ix = RecallIndex(path)
    more = log[6:] + [MessageUpdated(seq=10, ts=_TS(2), session_key="s", message_id="m0", content="delta")]
    if then == "commit":  # a writer that is not building: fills the counts in its own commit, then keeps them
        for ev in more[:1]:
            ix.apply(ev)
        ix.commit()
        assert not _pending(ix)
        _assert_counts(ix)
        for ev in more[1:]:
            ix.apply(ev)
            ix.commit()
            _assert_counts(ix)
    else:  # a catch-up goes on with the build and counts at its end
        ix.catch_up(more, batch=2)
    assert not _pending(ix)
    _assert_counts(ix)
    assert (ix.df("alpha"), ix.df("bravo"), ix.df("delta")) == (7, 5, 1)
    assert ix.verify() == [] and ix.verify(tokenise=True) == []
    ix.close()
