#!/usr/bin/env python3
"""Recall measured on LoCoMo: evidence hit@1/5/10 per question category, and query latency.

Run from the repository root::

    .venv/bin/python tools/eval_locomo.py                 # BM25, and hybrid if the extra is installed
    .venv/bin/python tools/eval_locomo.py --json          # one JSON object per line
    .venv/bin/python tools/eval_locomo.py --mode bm25     # skip the embedding run
    .venv/bin/python tools/eval_locomo.py --scale 1000000 # the synthetic latency/build/size benchmark instead

What it does: LoCoMo (read in place through ``tools/locomo_data.py``, never copied) is
ingested into a fresh temporary workspace through the library (``eventlog.init_workspace``,
``open_workspace(writable=True).append(locomo_data.events(conv))``), the recall index is
built from the log (``RecallIndex.catch_up(ws.log.read(1))``), and every non-adversarial
question (categories 1-4: 1,540 questions) is asked through ``recall(...)`` with
``scope="messages"`` and ``project`` = its conversation's project. A question is a hit at
k when at least one of its evidence turns (``D<session>:<turn>`` ids, read with a regex,
so ``"D8:6; D9:17"`` counts as two) is among the top-k message hits. Questions whose
evidence names no turn count as misses. A question is asked as of its conversation's
last session (``now``): a date it writes without a year ("in June") resolves to the
latest one before that.

Held out: conversations whose ``xxh32(sample_id)`` is even are the tuning subset, odd
ones are held out; the report gives ``hit@10`` of both (``tuning``, ``held_out``)
beside the whole.

Latency is the wall time of each ``recall`` call (index already open), p50 and p95 over
all questions. Nothing here is random except the ``--scale`` benchmark's generator,
which is seeded (``--seed``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import locomo_data  # noqa: E402
import xxhash  # noqa: E402

import eventlog  # noqa: E402
from projections.recall import RecallIndex, recall  # noqa: E402
from projections.recall.search import Ranking, ranking_from  # noqa: E402

KS = (1, 5, 10)
_TURN_ID = re.compile(r"D\d+:\d+")


def evidence_ids(evidence: list[str]) -> set[str]:
    """The turn ids a question's evidence names."""
    return {m.group() for e in evidence for m in _TURN_ID.finditer(e)}


def build(tmp: str, convs: list) -> tuple[RecallIndex, dict]:
    """Ingest ``convs`` into a fresh workspace under ``tmp`` and build the recall index from its log."""
    home = os.path.join(tmp, "home")
    eventlog.init_workspace(home)
    n_events = 0
    with eventlog.open_workspace(home, writable=True) as ws:
        for c in convs:
            evs = locomo_data.events(c)
            n_events += len(evs)
            ws.append(evs)
    ix = RecallIndex(os.path.join(tmp, "recall.sqlite"))
    reader = eventlog.open_workspace(home)
    try:
        t0 = time.perf_counter()
        ix.catch_up(reader.log.read(1))
        build_s = time.perf_counter() - t0
    finally:
        close = getattr(reader, "close", None)
        if close:
            close()
    return ix, {"events": n_events, "build_s": round(build_s, 3), "index_bytes": ix.stats()["bytes"]}


def tuning(conv) -> bool:
    """True for the conversations one may tune on (even ``xxh32`` of the sample id)."""
    return xxhash.xxh32(conv.sample_id.encode()).intdigest() % 2 == 0


def evaluate(ix: RecallIndex, convs: list, *, semantic=None, ranking: Ranking | None = None, label: str = "bm25",
             categories: tuple[int, ...] = (1, 2, 3, 4)) -> dict:
    """Ask every question of ``categories``; hit rates per category and overall, latency percentiles."""
    hits = {c: dict.fromkeys(KS, 0) for c in categories}
    counts = dict.fromkeys(categories, 0)
    halves = {True: [0, 0], False: [0, 0]}  # tuning subset? -> [hits at 10, questions]
    lat: list[float] = []
    for c in convs:
        now = max(c.session_dates.values())
        for q in c.questions:
            if q.category not in categories:
                continue
            t0 = time.perf_counter()
            res = recall(ix, q.question, scope="messages", project=c.project, limit=max(KS), semantic=semantic,
                         ranking=ranking, now=now)
            lat.append(time.perf_counter() - t0)
            ids = [h.message_id for h in res if h.kind == "message"]
            ev = evidence_ids(q.evidence)
            counts[q.category] += 1
            halves[tuning(c)][0] += bool(ev & set(ids[: max(KS)]))
            halves[tuning(c)][1] += 1
            for k in KS:
                if ev & set(ids[:k]):
                    hits[q.category][k] += 1
    total = sum(counts.values())
    out: dict = {"mode": label, "questions": total}
    for name, half in (("tuning", halves[True]), ("held_out", halves[False])):
        out[f"{name}_hit@{max(KS)}"] = round(half[0] / half[1], 4) if half[1] else 0.0
        out[f"{name}_questions"] = half[1]
    for k in KS:
        out[f"hit@{k}"] = round(sum(h[k] for h in hits.values()) / total, 4) if total else 0.0
    out["by_category"] = {
        f"{cat} {locomo_data.CATEGORY_NAMES[cat]}": {"questions": counts[cat],
                                                     **{f"hit@{k}": round(hits[cat][k] / counts[cat], 4)
                                                        for k in KS}}
        for cat in categories if counts[cat]
    }
    lat.sort()
    out["latency_ms"] = {"p50": round(statistics.median(lat) * 1000, 2),
                         "p95": round(lat[int(0.95 * (len(lat) - 1))] * 1000, 2)} if lat else {}
    return out


def _print(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, ensure_ascii=False), flush=True)
        return
    if "by_category" in result:
        print(f"\n{result['mode']}: {result['questions']} questions   " +
              "   ".join(f"hit@{k} {result[f'hit@{k}']:.3f}" for k in KS) +
              f"   latency p50 {result['latency_ms']['p50']} ms, p95 {result['latency_ms']['p95']} ms")
        print(f"  hit@10: tuning conversations {result['tuning_hit@10']:.3f} (n={result['tuning_questions']}), "
              f"held out {result['held_out_hit@10']:.3f} (n={result['held_out_questions']})")
        for name, r in result["by_category"].items():
            print(f"  {name:<16} n={r['questions']:<4} " + "  ".join(f"@{k} {r[f'hit@{k}']:.3f}" for k in KS))
    else:
        print("  ".join(f"{k}={v}" for k, v in result.items()), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="one JSON object per line on stdout")
    ap.add_argument("--mode", choices=("auto", "bm25", "hybrid"), default="auto",
                    help="bm25 only, hybrid only, or bm25 plus hybrid when the embeddings extra is installed (auto)")
    ap.add_argument("--conversations", type=int, default=0, help="only the first N conversations (0: all 10)")
    ap.add_argument("--locomo", default=None, help="path of locomo10.json (default: ../shared/data/real/locomo)")
    ap.add_argument("--scale", type=int, default=0,
                    help="instead of LoCoMo: build a synthetic index of N messages and report build rate, size and "
                         "query latency (projections.recall.bench)")
    ap.add_argument("--seed", type=int, default=20261130, help="seed of the --scale generator")
    ap.add_argument("--queries", type=int, default=300, help="queries timed by --scale")
    ap.add_argument("--median-chars", type=int, default=300,
                    help="median message length of --scale (300: agent transcripts; 80: chat lines)")
    ap.add_argument("--tmpdir", default=None, help="where temporary workspaces go")
    ap.add_argument("--embeddings-cache", default=None, metavar="PATH",
                    help="keep the embedding cache in this file (reused by the next run) instead of the temporary "
                         "directory")
    ap.add_argument("--ranking", default="", metavar="K=V,...",
                    help="override Ranking fields (e.g. diversity=0.7) to compare settings")
    args = ap.parse_args(argv)
    ranking = ranking_from(args.ranking)

    if args.scale:
        from projections.recall.bench import bench

        result = bench(args.scale, seed=args.seed, queries=args.queries, median_chars=args.median_chars,
                       tmpdir=args.tmpdir,
                       progress=None if args.json else lambda m: print(m, file=sys.stderr, flush=True))
        _print({"bench": "recall_scale", **result}, args.json)
        return 0

    convs = locomo_data.load(args.locomo)
    if args.conversations:
        convs = convs[: args.conversations]
    with tempfile.TemporaryDirectory(prefix="evlog-locomo-", dir=args.tmpdir) as tmp:
        ix, info = build(tmp, convs)
        try:
            _print({"build": "locomo", "conversations": len(convs), **info}, args.json)
            if args.mode in ("auto", "bm25"):
                _print(evaluate(ix, convs, label="bm25", ranking=ranking), args.json)
            if args.mode in ("auto", "hybrid"):
                semantic = _semantic(args.embeddings_cache or os.path.join(tmp, "embeddings.sqlite"),
                                     required=args.mode == "hybrid")
                if semantic is not None:
                    t0 = time.perf_counter()
                    from projections.recall.embeddings import batch_model

                    stats = semantic.prepare(ix, embedder=batch_model())  # torch's batches when installed
                    _print({"build": "embeddings", **stats, "seconds": round(time.perf_counter() - t0, 2)}, args.json)
                    _print(evaluate(ix, convs, semantic=semantic, label=f"hybrid ({semantic.name})", ranking=ranking),
                           args.json)
        finally:
            ix.close()
    return 0


def _semantic(cache: str, *, required: bool):
    try:
        from projections.recall.embeddings import Semantic, available
    except ImportError:
        available = None
    if available is None or not available():
        if required:
            raise SystemExit("the embeddings extra is not installed: pip install -e '.[embeddings]'")
        print("(embeddings extra not installed: BM25 only)", file=sys.stderr)
        return None
    return Semantic.default(cache=cache)


if __name__ == "__main__":
    sys.exit(main())
