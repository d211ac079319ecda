"""Candidate generation without a time filter gives what one sum over every term's rows gives (issue 23, latency).

``_Search.untimed_candidates`` sums and sorts only the rows of the rarer terms (and their rows in
the commonest term's list) and takes the commonest term's rows alone by age. Its answer must be
the rows, scores (to the bit) and order of the plain query: one ``sum(w) ... GROUP BY r`` over the
union of every term's newest ``generation_budget`` rows, ``ORDER BY s DESC, r DESC LIMIT k``.
That rests on SQLite adding a group's rows in the order the union gives them, checked here first
with weights whose sum depends on the order.
"""

from __future__ import annotations

import itertools
import random

import pytest

from eventlog.events import MessageAppended, SessionCreated
from projections.recall.index import RecallIndex
from projections.recall.search import Ranking, _Filters, _Search

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
#: Weights whose float sum depends on the order they are added in.
ORDER_SENSITIVE = [1e16, 1.0, -1e16, 3.0]


def _grouped(s: _Search, terms: list[tuple[str, bool, float]], k: int) -> list[tuple[int, float]]:
    """The plain query: one sum over the union of every term's rows."""
    suffix, cap = s.filters.match_suffix(), s.r.generation_budget
    subs, args = [], []
    for term, prefix, weight in terms:
        subs.append("SELECT * FROM (SELECT rowid AS r, ? AS w FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?)")
        args += [weight, s.match_term(term, prefix) + suffix, cap]
    sql = f"SELECT r, sum(w) AS s FROM ({' UNION ALL '.join(subs)}) GROUP BY r ORDER BY s DESC, r DESC LIMIT ?"
    return s.db.execute(sql, (*args, k)).fetchall()


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    rng = random.Random(23)
    events: list = []
    seq = 0
    for sess in range(12):
        seq += 1
        events.append(SessionCreated(seq=seq, ts="2026-03-01T10:00:00.000Z", session_key=f"s{sess}",
                                     title="t", project=f"p{sess % 3}"))
        for i in range(60):
            seq += 1
            # Zipf-like: early words are common, late ones rare
            ws = [w for j, w in enumerate(WORDS) if rng.random() < 0.9 / (j + 1)] or ["zulu"]
            events.append(MessageAppended(seq=seq, ts="2026-03-01T10:00:00.000Z", session_key=f"s{sess}",
                                          message_id=f"m{sess}-{i}", role="user" if i % 2 else "assistant",
                                          content=" ".join(ws)))
    ix = RecallIndex(str(tmp_path_factory.mktemp("cand") / "recall.sqlite"))
    ix.catch_up(events)
    yield ix
    ix.close()


def test_sqlite_sums_a_group_in_the_order_of_the_union():
    import sqlite3

    db = sqlite3.connect(":memory:")
    rng = random.Random(5)
    for t in range(3):
        db.execute(f"CREATE TABLE t{t}(r INTEGER PRIMARY KEY)")
        db.executemany(f"INSERT INTO t{t} VALUES (?)", [(x,) for x in rng.sample(range(6000), 3000)])
    subs = " UNION ALL ".join(f"SELECT * FROM (SELECT r, ? AS w FROM t{t} ORDER BY r DESC LIMIT 2000)"
                              for t in range(3))
    for weights in itertools.permutations(ORDER_SENSITIVE[:3]):
        got = dict(db.execute(f"SELECT r, sum(w) FROM ({subs}) GROUP BY r", weights).fetchall())
        expected: dict[int, float] = {}
        for t, w in enumerate(weights):
            for (r,) in db.execute(f"SELECT r FROM t{t} ORDER BY r DESC LIMIT 2000"):
                expected[r] = expected.get(r, 0.0) + w
        assert got == expected
        assert len(set(got.values())) > 3  # the order really changes some sums


@pytest.mark.parametrize("budget", [5, 40, 20_000])
@pytest.mark.parametrize("project", [None, "p1"])
def test_untimed_candidates_equal_one_sum_over_every_term(index, budget, project):
    s = _Search(index, Ranking(generation_budget=budget))
    s.filters = _Filters((0, 1, 2), project, None, None, None, None, {0, 1})
    rng = random.Random(budget)
    checked = 0
    for _ in range(120):
        n = rng.randint(1, 4)
        words = rng.sample(WORDS + ["zulu", "nothing"], n)
        pick = rng.random()
        if pick < 0.3:
            weights = [rng.choice(ORDER_SENSITIVE) for _ in words]
        elif pick < 0.5:
            weights = [1.5] * n  # ties everywhere: the order is by row
        else:
            weights = sorted((rng.uniform(0.1, 5) for _ in words), reverse=True)
        terms = [(w, False, x) for w, x in zip(words, weights, strict=True)]
        k = rng.choice([1, 3, 10, 100, 1000])
        got = s.untimed_candidates(terms, k, s.filters.match_suffix(), budget)
        assert got == _grouped(s, terms, k), (terms, k)
        checked += bool(got)
    assert checked > 60


def test_a_single_term_gives_its_newest_rows(index):
    s = _Search(index, Ranking(generation_budget=20_000))
    s.filters = _Filters((0, 1, 2), None, None, None, None, None, {0, 1})
    got = s.untimed_candidates([("alpha", False, 2.0)], 7, s.filters.match_suffix(), 20_000)
    assert [r for r, _w in got] == sorted((r for r, _w in got), reverse=True)
    assert len(got) == 7 and {w for _r, w in got} == {2.0}
    assert got == _grouped(s, [("alpha", False, 2.0)], 7)
