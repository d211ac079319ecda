"""``bm25f``, ``context`` and ``neighbours`` give what their plain versions give, to the bit and in order (issue 23).

The reference below is BM25F as it was written before the shortcut: every neighbour's
frequency added for every term the doc or a neighbour holds, ``w * 0.0`` included.
Hypothesis draws the term frequencies (many docs with none), weights and lengths. ``neighbours``
merges the ranges before one join per chunk; the reference joins each sorted range and keeps each
row where it first appears (interleaved sessions, so ids and turns differ in order).
"""

from __future__ import annotations

import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projections.recall import rank
from projections.recall.search import DEFAULT_RANKING, Ranking, _Doc, _Search, _Terms

TERMS = ["alpha", "bravo", "charlie", "delta"]


def _doc(i: int, nchars: int, tf: dict[str, float], tf_aux: dict[str, float]) -> _Doc:
    d = _Doc((i, 0, "2026-01-01T00:00:00.000Z", "x" * nchars, nchars, 1, i, f"m{i}", "user", None, None, None,
              None, None, None, None, None, None, None))
    d.tf, d.tf_aux = tf, tf_aux
    return d


def _reference(s: _Search, d: _Doc, ctx: list[tuple[float, _Doc]], terms: _Terms, avg: float,
               ctx_avg: float) -> tuple[float, float] | None:
    r, idf, k1, b = s.r, terms.idf, s.r.k1, s.r.b
    if ctx:
        norm = k1 * (1 - b + b * (d.nchars + sum(w * n.nchars for w, n in ctx)) / ctx_avg)
    else:
        norm = k1 * (1 - b + b * d.nchars / avg)
    s_ = own = 0.0
    own_norm = k1 * (1 - b + b * d.nchars / avg)
    held = set(d.tf).union(d.tf_aux, *(n.tf for _w, n in ctx))
    for t in terms.live:
        if t not in held:
            continue
        tf = mine = d.tf.get(t, 0.0) + r.aux * d.tf_aux.get(t, 0.0)
        for w, n in ctx:
            tf += w * n.tf.get(t, 0.0)
        if tf:
            s_ += idf[t] * tf * (k1 + 1) / (tf + norm)
        if mine:
            own += idf[t] * mine * (k1 + 1) / (mine + own_norm)
    if s_ <= 0:
        return None
    if not (d.tf or d.tf_aux):
        s_ *= r.context_only
    return s_, own


tf_st = st.dictionaries(st.sampled_from(TERMS), st.integers(1, 5).map(float), max_size=3)
sparse_tf = st.one_of(st.just({}), st.just({}), tf_st)


@settings(max_examples=300, deadline=None)
@given(own=st.tuples(st.integers(1, 5000), sparse_tf, sparse_tf),
       ctx=st.lists(st.tuples(st.floats(0.01, 2.0), st.integers(1, 5000), sparse_tf), max_size=4),
       idf=st.lists(st.floats(0.01, 12.0), min_size=4, max_size=4), avg=st.floats(10.0, 2000.0))
def test_bm25f_equals_the_plain_formula(own, ctx, idf, avg):
    s = _Search(types.SimpleNamespace(db=None), DEFAULT_RANKING)  # type: ignore[arg-type]
    d = _doc(1, own[0], own[1], own[2])
    context = [(w, _doc(i + 2, n, tf, {})) for i, (w, n, tf) in enumerate(ctx)]
    live = list(TERMS)
    terms = _Terms(word_stem={}, singles=[], dfs={}, live=live, idf=dict(zip(live, idf, strict=True)),
                   name_tokens=frozenset(), boost=frozenset())
    ctx_avg = avg * 2.2
    assert s.bm25f(d, context, terms, avg, ctx_avg) == _reference(s, d, context, terms, avg, ctx_avg)


def _plain_context(s: _Search, d: _Doc, by_pos: dict, weights: dict) -> list:
    """``context`` as it was written before its loop was tightened (``max``/``min``, the weights by offset)."""
    r = s.r
    ctx: list = []
    if r.context <= 0:
        return ctx
    cc = s.context_chars
    for off in range(1, r.window + 1):
        n = by_pos.get((d.sid, d.pos - off))
        if n is not None:
            w = weights[off] * (min(1.0, cc / max(d.nchars, n.nchars, 1)) if cc else 1.0)
            if off == 1 and r.answer != 1.0 and rank.answers(d, n):
                w *= r.answer
            ctx.append((w, n))
        n = by_pos.get((d.sid, d.pos + off))
        if n is not None:
            ctx.append((weights[off] * r.after * (min(1.0, cc / max(d.nchars, n.nchars, 1)) if cc else 1.0), n))
    return ctx


@settings(max_examples=300, deadline=None)
@given(lengths=st.lists(st.integers(0, 3000), min_size=1, max_size=9), at=st.integers(0, 8),
       asks=st.lists(st.booleans(), min_size=9, max_size=9), cc=st.sampled_from([0, 1, 125, 250]),
       window=st.integers(1, 3), context=st.floats(0.0, 1.0), decay=st.floats(0.1, 1.0),
       after=st.floats(0.1, 1.0), answer=st.sampled_from([1.0, 2.0, 0.7]), roles=st.lists(st.booleans(), min_size=9,
                                                                                            max_size=9))
def test_context_equals_the_plain_formula(lengths, at, asks, cc, window, context, decay, after, answer, roles):
    r = Ranking(window=window, context=context, decay=decay, after=after, answer=answer)
    s = _Search(types.SimpleNamespace(db=None), r)  # type: ignore[arg-type]
    s.context_chars = cc
    docs = []
    for i, n in enumerate(lengths):
        text = ("what do you think?" if asks[i] else "fine") + " x" * (n // 2)
        d = _Doc((i + 1, 0, "2026-01-01T00:00:00.000Z", text, n, 1, i, f"m{i}", "user" if roles[i] else "assistant",
                  None, None, None, None, None, None, None, None, None, None))
        docs.append(d)
    by_pos = {(d.sid, d.pos): d for d in docs}
    weights = {off: r.context * r.decay ** (off - 1) for off in range(1, r.window + 1)}
    d = docs[at % len(docs)]
    got = [(w, n.id) for w, n in s.context(d, by_pos, weights)]
    assert got == [(w, n.id) for w, n in _plain_context(s, d, by_pos, weights)]


def _old_neighbour_ids(s: _Search, docs: list[_Doc], window: int) -> list[int]:
    """The neighbours as the unmerged sorted ranges' join gives them, each where it first appears."""
    have = {d.id for d in docs}
    out = []
    for sid, lo, hi in sorted({(d.sid, d.pos - window, d.pos + window) for d in docs}):
        for (j,) in s.db.execute("SELECT id FROM docs INDEXED BY docs_position WHERE kind = 0 AND sid = ? AND "
                                 "pos BETWEEN ? AND ?", (sid, lo, hi)):
            if j not in have:
                have.add(j)
                out.append(j)
    return out


@pytest.fixture(scope="module")
def sessions_index(tmp_path_factory):
    from eventlog.events import MessageAppended, SessionCreated
    from projections.recall.index import RecallIndex

    events: list = []
    seq = 0
    for sess in range(4):
        seq += 1
        events.append(SessionCreated(seq=seq, ts="2026-03-01T10:00:00.000Z", session_key=f"s{sess}", title="t",
                                     project="p"))
        for i in range(30):
            seq += 1
            events.append(MessageAppended(seq=seq, ts="2026-03-01T10:00:00.000Z", session_key=f"s{sess % 3}",
                                          message_id=f"m{sess}-{i}", role="user", content=f"turn {i}"))
    ix = RecallIndex(str(tmp_path_factory.mktemp("nb") / "recall.sqlite"))
    ix.catch_up(events)
    yield ix
    ix.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picked=st.lists(st.integers(0, 125), max_size=40), window=st.integers(1, 4))
def test_neighbours_are_the_unmerged_ranges_rows_in_their_order(sessions_index, picked, window):
    s = _Search(sessions_index, DEFAULT_RANKING)
    ids = [r for (r,) in s.db.execute("SELECT id FROM docs WHERE kind = 0 ORDER BY id")]
    docs = list(s.rows([ids[i % len(ids)] for i in picked]).values())
    assert [d.id for d in s.neighbours(docs, window)] == _old_neighbour_ids(s, docs, window)
