"""The int8 first pass of the vector scan against the plain float32 scan, alone and in the whole hybrid query.

Standalone: ``python tools/bench_vscan.py [--json] [--rounds 3] [--messages 100000]``. Builds the index of
``hybrid_query_100k`` (``tools/bench_hybrid.py``: synthetic messages, seeded random unit vectors, 100
questions embedded by the real model), then times, question by question and in alternating order, four
functions: the hybrid ``recall`` (int8 first pass), the same with the plain float32 scan
(``hybrid_plain``: the branch point's scan), and the two scans alone for the 200 rows ``fuse`` asks for.
Medians of wall, thread CPU and process CPU ms; the thread's CPU time is the honest one here (process CPU
also counts BLAS or torch threads spinning after another benchmark). Needs the embeddings extra.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _timed(fns: dict[str, Any], count: int, rounds: int) -> dict[str, dict[str, float]]:
    import numpy as np

    out: dict[str, dict[str, list[float]]] = {k: {"wall": [], "thread": [], "proc": []} for k in fns}
    for rnd in range(rounds):
        for i in range(count):
            for name in list(fns) if (i + rnd) % 2 == 0 else list(reversed(fns)):
                w, t, p = time.perf_counter(), time.thread_time(), time.process_time()
                fns[name](i)
                got = out[name]
                got["wall"].append(time.perf_counter() - w)
                got["thread"].append(time.thread_time() - t)
                got["proc"].append(time.process_time() - p)
    return {n: {m: round(float(np.median(v)) * 1000, 2) for m, v in d.items()} for n, d in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--messages", type=int, default=100_000)
    args = ap.parse_args(argv)
    import bench
    import bench_hybrid
    import numpy as np

    from projections.recall import recall
    from projections.recall.embeddings import available, vector_index
    from projections.recall.minilm_numpy import one_blas_thread
    from projections.recall.vscan import top_k, top_k_float32

    if not available():
        print("needs the embeddings extra", file=sys.stderr)
        return 1
    ix, sem, questions = bench_hybrid._hybrid_index(bench.Context(root=tempfile.mkdtemp(prefix="bench-vscan-")),
                                                    args.messages)
    recall(ix, "warm up the caches", semantic=sem)
    vi = vector_index(ix, sem)
    plain = bench_hybrid._plain_scan_recall(ix, sem, vi)
    k = sem.vector_k * 4
    qvs = [np.asarray(sem.query_vector(q), dtype=np.float32) for q in questions]

    def scan_float32(i: int) -> Any:
        with one_blas_thread():
            return top_k_float32(vi.matrix, qvs[i], k)

    fns = {"hybrid_int8": lambda i: recall(ix, questions[i], semantic=sem), "hybrid_plain": lambda i: plain(questions[i]),
           "scan_int8": lambda i: top_k(vi.matrix, vi.quantised, qvs[i], k), "scan_float32": scan_float32}
    load = os.getloadavg()[0]
    medians = _timed(fns, len(questions), args.rounds)
    row = {"messages": args.messages, "questions": len(questions), "rounds": args.rounds, "medians_ms": medians,
           "scan_exact": bench_hybrid._scan_exact(vi, qvs, k), "int8_mb": round(vi.quantised.nbytes / 1e6, 1),
           "hybrid_thread_cpu_ratio": round(medians["hybrid_int8"]["thread"] / medians["hybrid_plain"]["thread"], 3),
           "scan_thread_cpu_ratio": round(medians["scan_int8"]["thread"] / medians["scan_float32"]["thread"], 3),
           "load_1m_start": round(load, 2), "load_1m_end": round(os.getloadavg()[0], 2)}
    ix.close()
    print(json.dumps(row) if args.json else json.dumps(row, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
