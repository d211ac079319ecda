"""The int8 first pass of the vector scan gives exactly the plain float32 scan's top-k (rows, scores, order)."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

from projections.recall import vscan  # noqa: E402
from projections.recall.embeddings import VectorIndex  # noqa: E402


def _unit(rng, n, d):
    m = rng.standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _assert_exact(matrix, q, k):
    quantised = vscan.Int8Rows()
    quantised.append(matrix[: len(matrix) // 3])  # appended in two parts, as catch-ups do
    quantised.append(matrix[len(matrix) // 3 :])
    from projections.recall.minilm_numpy import one_blas_thread

    rows, scores = vscan.top_k(matrix, quantised, q, k)
    with one_blas_thread():  # the plain scan as ``VectorIndex.nearest`` ran it before the first pass
        want_rows, want_scores = vscan.top_k_float32(matrix, np.asarray(q, dtype=np.float32), min(k, len(matrix)))
    assert rows.tolist() == want_rows.tolist()
    assert scores.tobytes() == want_scores.tobytes()  # the same bits, not merely close
    return quantised


@pytest.fixture(autouse=True)
def _first_pass_always(monkeypatch):
    monkeypatch.setattr(vscan, "SMALL", 0)  # small matrices take the first pass too
    monkeypatch.setattr(vscan, "BLOCK", 7)  # blocks that do not divide the row count
    monkeypatch.setitem(vscan._SAME_BITS, "checked", True)  # no first-query check: the answer is the first pass's


def test_random_matrices_and_queries():
    rng = np.random.default_rng(1)
    for _ in range(60):
        n, d = int(rng.integers(1, 400)), int(rng.choice([1, 2, 3, 16, 64, 384]))
        matrix = _unit(rng, n, d) * rng.uniform(0.2, 3.0, size=(n, 1)).astype(np.float32)  # not all unit length
        q = rng.standard_normal(d).astype(np.float32) * np.float32(rng.uniform(0.1, 10))
        _assert_exact(matrix, q, int(rng.integers(1, n + 3)))


def test_adversarial_near_ties():
    rng = np.random.default_rng(2)
    for _ in range(40):
        d, n, k = 64, 300, int(rng.integers(1, 60))
        q = _unit(rng, 1, d)[0]
        noise = _unit(rng, n, d)
        noise -= np.outer(noise @ q, q)  # orthogonal to q: every score is the chosen level, up to rounding
        noise /= np.linalg.norm(noise, axis=1, keepdims=True)
        level = np.float32(rng.uniform(0.1, 0.9))
        matrix = (level * q + np.float32(np.sqrt(1 - level**2)) * noise).astype(np.float32)
        matrix[rng.integers(0, n, 20)] = matrix[rng.integers(0, n, 20)]  # exact duplicates: equal scores
        bumps = rng.integers(0, n, 30)  # a few ulps off the level
        matrix[bumps] = np.nextafter(matrix[bumps], np.float32(np.inf) * np.sign(q)[None, :])
        _assert_exact(matrix, q, k)


def test_many_exact_ties_keep_the_row_order():
    rng = np.random.default_rng(3)
    base = _unit(rng, 5, 32)
    matrix = base[rng.integers(0, 5, 500)]
    q = _unit(rng, 1, 32)[0]
    _assert_exact(matrix, q, 37)
    rows, _s = vscan.top_k(matrix, vscan.Int8Rows(), q, 0)
    assert rows.tolist() == []


def test_zero_and_non_finite_rows():
    rng = np.random.default_rng(4)
    matrix = _unit(rng, 200, 16)
    matrix[5] = 0.0
    matrix[7, 3] = np.nan
    matrix[9, 0] = np.inf
    q = _unit(rng, 1, 16)[0]
    for k in (1, 10, 197, 198, 199, 200, 250):
        _assert_exact(matrix, q, k)
    with np.errstate(invalid="ignore"):  # inf * 0 in the plain product
        _assert_exact(matrix, np.zeros(16, dtype=np.float32), 5)  # a zero question: the plain scan


def test_the_first_pass_rescores_few_rows_of_a_large_matrix():
    rng = np.random.default_rng(5)
    matrix = _unit(rng, 20_000, 384)
    q = _unit(rng, 1, 384)[0]
    quantised = _assert_exact(matrix, q, 200)
    assert 200 <= len(quantised.candidates(q, 200)) < 2000  # the bound is tight enough to pay
    assert quantised.nbytes < matrix.nbytes / 3


def test_vector_index_nearest_uses_the_first_pass_and_orders_ties_by_row(monkeypatch):
    rng = np.random.default_rng(6)
    vi = VectorIndex()
    base = _unit(rng, 3, 8)
    vi.matrix = base[rng.integers(0, 3, 300)]
    vi.ids = np.arange(1000, 1300, dtype=np.int64)
    vi.quantised.append(vi.matrix)
    scanned = []
    approximate = vi.quantised.approximate
    monkeypatch.setattr(vi.quantised, "approximate", lambda q: scanned.append(1) or approximate(q))
    q = _unit(rng, 1, 8)[0]
    near = vi.nearest(q.tolist(), 150)
    assert scanned == [1]
    sims = vi.matrix @ q
    want = sorted(range(300), key=lambda j: (-sims[j], j))[:150]
    assert near == [(1000 + j, float(sims[j])) for j in want]


def test_rescore_gives_the_bits_of_the_full_product():
    from projections.recall.minilm_numpy import one_blas_thread

    rng = np.random.default_rng(7)
    for n, d in ((1, 8), (3, 8), (238, 384), (1001, 64), (4099, 384)):
        matrix = rng.standard_normal((n, d)).astype(np.float32)
        q = (rng.standard_normal(d) * 5).astype(np.float32)
        with one_blas_thread():  # as ``top_k`` runs it
            full = matrix @ q
            for size in (1, 2, 5, n):
                rows = np.sort(rng.choice(n, min(size, n), replace=False))
                assert vscan.rescore(matrix, rows, q).tobytes() == full[rows].tobytes()
            assert vscan.rescore(matrix, np.array([n - 1]), q).tobytes() == full[-1:].tobytes()


def test_a_blas_that_rounds_otherwise_falls_back_to_the_plain_scan(monkeypatch):
    rng = np.random.default_rng(8)
    matrix, q = _unit(rng, 500, 16), _unit(rng, 1, 16)[0]
    quantised = vscan.Int8Rows()
    quantised.append(matrix)
    monkeypatch.setitem(vscan._SAME_BITS, "checked", None)
    monkeypatch.setattr(vscan, "rescore", lambda m, rows, q: np.nextafter(m[rows] @ q, np.float32(np.inf)))
    want = vscan.top_k_float32(matrix, q, 20)
    for _ in range(2):
        got = vscan.top_k(matrix, quantised, q, 20)
        assert got[0].tolist() == want[0].tolist() and got[1].tobytes() == want[1].tobytes()
    assert vscan._SAME_BITS["checked"] is False
