"""The vector scan of hybrid recall: the exact float32 top-k found through a cheaper int8 first pass.

``VectorIndex`` (``embeddings``) keeps the stored float32 vectors; this module owns how the ``k`` rows most
similar to a question are found in them, and guarantees the answer of the plain float32 scan
(``top_k_float32``: ``matrix @ q``, then the ``k`` best, score descending, ties by row ascending).

``Int8Rows`` is derived from the float32 rows when they are loaded (nothing new is stored on disk): per row
``i`` a scale ``a_i = max|v_i| / 127``, codes ``c_i = round(v_i / a_i)`` in int8, and an error bound ``e_i``
such that for every query ``q`` the float32 scores satisfy ``|fl(v_i . q) - fl(a_i (c_i . q))| <= e_i |q|``:

* quantisation: ``v_i . q - a_i c_i . q = r_i . q`` with ``r_i = v_i - a_i c_i``, so by Cauchy-Schwarz
  ``|r_i . q| <= |r_i| |q|``;
* float32 arithmetic: a dot product of ``d`` terms in float32, in any summation order, is within
  ``gamma_d = d u / (1 - d u)`` (``u = 2**-24``) of ``sum |x_j y_j| <= |x| |y|``; both the plain scan and the
  first pass are such products, so ``e_i`` adds ``2 gamma_d (|v_i| + a_i |c_i|)`` (twice the bound, which
  also covers the few roundings of the scale product and the bound arithmetic itself, each ~1e-8 for unit
  vectors against a slack of ~1e-4).

``top_k`` scores every row from its int8 codes (blocks cast to float32 in cache, then one BLAS product
each: 4x fewer bytes read than the float32 matrix), keeps as candidates every row whose upper bound reaches
the ``k``-th best lower bound (every row of the exact top-k, ties included, passes: ``k`` rows have true
scores at or above that lower bound), re-scores the candidates exactly from the float32 rows
(``rescore``: the bits of the full product; checked against the plain scan on a process's first query, which
falls back to the plain scan for good if they differ) and orders them as ``top_k_float32`` does. A row with a non-finite value has an infinite bound: always a candidate, never a
lower bound that excludes another.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Rows cast from int8 to float32 at a time (6 MB of float32 at 384 dimensions would leave the cache; measured
#: at 100k x 384: 256 rows 12.9 ms, 1024 11.3, 2048 10.7, 4096 11.7 CPU ms vs 15.5 for the float32 product).
BLOCK = 2048
#: Below this many rows the plain float32 scan is used (the first pass saves nothing there).
SMALL = 8192
#: Rows quantised at a time at load (its float64 temporaries: 25 MB at 384 dimensions, not 300 MB at 100k rows).
CHUNK = 8192
#: Rows of the groups ``rescore`` reads (see there).
GROUP = 4
_U = 2.0**-24
_SAME_BITS: dict[str, bool] = {}  # "checked": whether ``rescore`` matched the full product on this process's BLAS


def ordered_top(rows: Any, scores: Any, k: int) -> Any:
    """Positions into ``rows``/``scores`` of the ``k`` best: score descending, then row ascending."""
    if k <= 0 or not len(scores):
        return np.empty(0, dtype=np.int64)
    if k < len(scores):
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = np.flatnonzero(scores >= kth)  # every tie of the k-th score, so the row order decides among them
        if len(keep) < k:  # NaN scores: not >= anything; they come last, as in a full sort
            keep = np.arange(len(scores))
    else:
        keep = np.arange(len(scores))
    order = np.lexsort((rows[keep], -scores[keep]))[:k]
    return keep[order]


def top_k_float32(matrix: Any, q: Any, k: int) -> tuple[Any, Any]:
    """(rows, scores) of the ``k`` rows of ``matrix`` most similar to ``q``: the plain float32 scan."""
    scores = matrix @ q
    best = ordered_top(np.arange(len(scores)), scores, k)
    return best, scores[best]


class Int8Rows:
    """Int8 codes, scales and error bounds of float32 rows (see the module docstring), appended as rows arrive."""

    def __init__(self, dim: int = 0) -> None:
        self.codes = np.empty((0, dim), dtype=np.int8)
        self.scales = np.empty(0, dtype=np.float32)
        self.bounds = np.empty(0, dtype=np.float32)  # e_i: multiplied by |q| at query time

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scales.nbytes + self.bounds.nbytes)

    def append(self, rows: Any) -> None:
        """Add the quantised form of float32 ``rows`` (2-D) after the rows already held."""
        rows = np.asarray(rows, dtype=np.float32)
        parts = [_quantise(rows[s : s + CHUNK]) for s in range(0, len(rows), CHUNK)]
        self.codes = np.concatenate([self.codes.reshape(-1, rows.shape[1]), *(p[0] for p in parts)])
        self.scales = np.concatenate([self.scales, *(p[1] for p in parts)])
        self.bounds = np.concatenate([self.bounds, *(p[2] for p in parts)])

    def approximate(self, q: Any) -> Any:
        """``a_i (c_i . q)`` for every row, in float32."""
        n = len(self.scales)
        out = np.empty(n, dtype=np.float32)
        buf = np.empty((min(BLOCK, n), self.codes.shape[1]), dtype=np.float32)
        for s in range(0, n, BLOCK):
            block = buf[: min(BLOCK, n - s)]
            np.copyto(block, self.codes[s : s + BLOCK], casting="unsafe")  # int8 -> float32 is exact
            np.matmul(block, q, out=out[s : s + len(block)])
        out *= self.scales
        return out

    def candidates(self, q: Any, k: int) -> Any:
        """Rows (ascending) that may be among the ``k`` best of the float32 scan of ``q``."""
        approx = self.approximate(q)
        slack = self.bounds * np.float32(float(np.linalg.norm(np.asarray(q, dtype=np.float64))) * (1 + 1e-6))
        lower = approx - slack
        kth = np.partition(lower, len(lower) - k)[len(lower) - k]
        return np.flatnonzero(approx + slack >= kth)


def _quantise(rows: Any) -> tuple[Any, Any, Any]:
    """(codes, scales, bounds) of float32 ``rows`` (see the module docstring)."""
    v = rows.astype(np.float64)
    finite = np.isfinite(v).all(axis=1)
    v[~finite] = 0.0
    top = np.abs(v).max(axis=1) if v.shape[1] else np.zeros(len(v))
    scales = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(v / scales[:, None]), -127, 127)
    approx = codes * scales.astype(np.float64)[:, None]
    gamma = v.shape[1] * _U / (1 - v.shape[1] * _U)
    bound = (np.linalg.norm(v - approx, axis=1)
             + 2 * gamma * (np.linalg.norm(v, axis=1) + np.linalg.norm(approx, axis=1))) * (1 + 1e-6)
    bound[~finite] = np.inf
    return codes.astype(np.int8), scales, np.nextafter(bound.astype(np.float32), np.float32(np.inf))


def top_k(matrix: Any, quantised: Int8Rows | None, q: Any, k: int) -> tuple[Any, Any]:
    """The answer of ``top_k_float32(matrix, q, k)`` on one BLAS thread, through ``quantised`` (the int8 form of
    ``matrix``) when ``matrix`` is large enough for it to pay."""
    from projections.recall.minilm_numpy import one_blas_thread

    q = np.asarray(q, dtype=np.float32)
    k = min(k, len(matrix))
    with one_blas_thread() as alone:  # OpenBLAS's threads split the rows otherwise: other roundings (``rescore``)
        if quantised is None or not alone or not _pays(matrix, quantised, q, k):
            return top_k_float32(matrix, q, k)
        rows = quantised.candidates(q, k)
        best = ordered_top(rows, scores := rescore(matrix, rows, q), k)
        found = rows[best], scores[best]
        if _SAME_BITS.get("checked") is None:  # once per process: this BLAS groups rows as ``rescore`` assumes
            want = top_k_float32(matrix, q, k)
            _SAME_BITS["checked"] = same = bool(np.array_equal(found[0], want[0])
                                                and found[1].tobytes() == want[1].tobytes())
            return found if same else want
        return found


def _pays(matrix: Any, quantised: Int8Rows, q: Any, k: int) -> bool:
    """True when the first pass may answer: a large matrix, all quantised, a finite non-zero question, and
    ``rescore`` not found to round otherwise than this BLAS."""
    big = len(matrix) >= SMALL and len(quantised.scales) == len(matrix) and k > 0
    return big and bool(np.isfinite(q).all() and np.any(q)) and _SAME_BITS.get("checked") is not False


def rescore(matrix: Any, rows: Any, q: Any) -> Any:
    """``(matrix @ q)[rows]`` bit for bit, for ascending ``rows``, reading only their ``GROUP``-row groups.

    OpenBLAS's float32 matrix-vector kernel sums the rows of a group of four in one pass and the last
    ``n % 4`` rows by another path, which rounds differently: ``matrix[rows] @ q`` differs from the full
    product in the last bit of about half the rows (measured on this OpenBLAS, one thread). Rows gathered in their aligned groups, the partial last
    group last, go through the same paths as in the full product."""
    n = len(matrix)
    groups = np.union1d(rows // GROUP, [0])  # never one row alone: numpy would take another kernel for it
    at = (groups[:, None] * GROUP + np.arange(GROUP)).ravel()
    scores = matrix[at[at < n]] @ q  # only the last group can be partial, and it comes last
    return scores[np.searchsorted(groups, rows // GROUP) * GROUP + rows % GROUP]


__all__ = ["BLOCK", "SMALL", "Int8Rows", "ordered_top", "top_k", "top_k_float32"]
