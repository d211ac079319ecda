"""Candidate rows from the overlaps of a few complete term lists (step 2 of ``search.py``, issue 23).

``_Search.untimed_candidates`` wants the ``k`` rows with the highest sum of term weights over
the terms a row holds (newest first on ties). Its SQL reads every term's row list, the rarer
ones three times, and sorts every row of them; at 1M messages a question of two or three
rare-ish words spent ~10 ms there. When every list is known to be complete (no list longer
than ``generation_budget``, which would cut it to its newest rows), the same answer follows
from much less:

* a row that holds one term only scores exactly that term's weight, so of those rows only
  the ``k`` newest of each term can be candidates: a reversed walk of ``k`` rows (and the
  term's rows that hold another term too) per term;
* a row that holds two or more terms is in the intersection of some pair of lists, which
  FTS5 finds by skipping through the lists (an AND query per pair), not by reading them:
  the pairs a row is in are the terms it holds.

The sum of a row that holds several terms is SQLite's ``sum()`` over those weights in the
terms' order, computed by SQLite once per set of terms (the plain query adds a group's
rows in the union's order: tests/projections/test_recall_candidates.py), so every score is
the plain query's to the bit, whatever summation this SQLite uses.
"""

from __future__ import annotations

import itertools
import sqlite3

#: At most this many terms go this way (their pairs are one FTS5 query each); more take the SQL path.
MAX_TERMS = 6


def candidates(db: sqlite3.Connection, matches: list[str], weights: list[float], suffix: str,
               k: int) -> list[tuple[int, float]]:
    """The ``k`` rows with the highest sum of ``weights`` over the ``matches`` (FTS5 expressions, each
    with ``suffix`` AND-ed on) they hold, ``(row, sum)`` by sum descending then row descending.

    Every term's list must be complete: the caller knows none is longer than its row cap."""
    held: dict[int, set[int]] = {}  # a row holding two or more terms -> those terms
    for i, j in itertools.combinations(range(len(matches)), 2):
        for (r,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?",
                               (f"({matches[i]}) AND ({matches[j]}){suffix}",)):
            held.setdefault(r, set()).update((i, j))
    sums: dict[tuple[int, ...], float] = {}
    scored: list[tuple[float, int]] = []
    shared = [0] * len(matches)  # per term: how many of its rows hold another term too
    for r, terms in held.items():
        key = tuple(sorted(terms))
        s = sums.get(key)
        if s is None:
            s = sums[key] = _sql_sum(db, [weights[t] for t in key])
        scored.append((s, r))
        for t in key:
            shared[t] += 1
    for t, match in enumerate(matches):
        newest = db.execute("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?",
                            (match + suffix, k + shared[t])).fetchall()
        w = weights[t]
        scored += [(w, r) for (r,) in newest if r not in held][:k]
    scored.sort(key=lambda x: (-x[0], -x[1]))
    return [(r, s) for s, r in scored[:k]]


def _sql_sum(db: sqlite3.Connection, weights: list[float]) -> float:
    """SQLite's ``sum()`` of ``weights`` added in this order (what the plain query's GROUP BY gives a row)."""
    values = " UNION ALL ".join("SELECT ? AS w" for _ in weights)
    return db.execute(f"SELECT sum(w) FROM ({values})", weights).fetchone()[0]  # type: ignore[no-any-return]


__all__ = ["MAX_TERMS", "candidates"]
