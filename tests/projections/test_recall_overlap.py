"""Candidates from the overlaps of complete term lists (``overlap.py``) are the plain query's, to the bit (issue 23).

The plain query is one ``sum(w) ... GROUP BY r`` over the union of every term's newest
``generation_budget`` rows, ``ORDER BY s DESC, r DESC LIMIT k`` (``_grouped``, as in
test_recall_candidates.py). ``untimed_candidates`` takes the overlap path when it is told no list is
longer than the budget; Hypothesis draws the texts, the terms, their weights (order-sensitive
ones among them) and ``k``.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.events import MessageAppended, SessionCreated
from projections.recall import overlap
from projections.recall.index import RecallIndex
from projections.recall.search import Ranking, _Filters, _Search
from tests.projections.test_recall_candidates import ORDER_SENSITIVE, _grouped  # the plain query

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


def _index(tmp_path, seed: int, n: int) -> RecallIndex:
    rng = random.Random(seed)
    events: list = []
    seq = 0
    for sess in range(3):
        seq += 1
        events.append(SessionCreated(seq=seq, ts="2026-03-01T10:00:00.000Z", session_key=f"s{sess}", title="t",
                                     project=f"p{sess}"))
        for i in range(n):
            seq += 1
            ws = [w for j, w in enumerate(WORDS) if rng.random() < 0.9 / (j + 1)] or ["zulu"]
            events.append(MessageAppended(seq=seq, ts="2026-03-01T10:00:00.000Z", session_key=f"s{sess}",
                                          message_id=f"m{sess}-{i}", role="user" if i % 2 else "assistant",
                                          content=" ".join(ws) + (" 数据库" if rng.random() < 0.2 else "")))
    ix = RecallIndex(str(tmp_path / f"recall-{seed}-{n}.sqlite"))
    ix.catch_up(events)
    return ix


term_st = st.sampled_from([(w, False) for w in WORDS + ["zulu", "nothing"]] + [("数据", False), ("数", True)])
weight_st = st.one_of(st.sampled_from(ORDER_SENSITIVE + [1.5]), st.floats(0.1, 5.0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 3), n=st.integers(1, 40), project=st.sampled_from([None, "p1"]),
       picked=st.lists(st.tuples(term_st, weight_st), min_size=2, max_size=overlap.MAX_TERMS,
                       unique_by=lambda x: x[0]),
       k=st.sampled_from([1, 2, 5, 10, 100]))
def test_overlap_candidates_equal_one_sum_over_every_term(tmp_path, seed, n, project, picked, k):
    ix = _index(tmp_path, seed, n)
    try:
        s = _Search(ix, Ranking(generation_budget=1000))
        s.filters = _Filters((0, 1, 2), project, None, None, None, None, {0, 1})
        terms = [(t, prefix, w) for (t, prefix), w in picked]
        suffix = s.filters.match_suffix()
        got = s.untimed_candidates(terms, k, suffix, 1000, longest=1000)
        assert got == _grouped(s, terms, k)
        assert got == s.untimed_candidates(terms, k, suffix, 1000)  # the SQL path
    finally:
        ix.close()


def test_a_list_longer_than_the_cap_takes_the_sql_path(tmp_path):
    ix = _index(tmp_path, 1, 40)
    try:
        s = _Search(ix, Ranking(generation_budget=5))
        s.filters = _Filters((0, 1, 2), None, None, None, None, None, {0, 1})
        terms = [("alpha", False, 2.0), ("bravo", False, 1.0)]
        # the lists are longer than 5: only their newest 5 rows count, which the overlaps would not see
        got = s.untimed_candidates(terms, 10, s.filters.match_suffix(), 5, longest=ix.df("alpha"))
        assert got == _grouped(s, terms, 10)
    finally:
        ix.close()
