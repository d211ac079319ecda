"""Recall at scale: index build rate, index size and query latency on synthetic messages.

``bench(n_messages)`` builds a recall index of ``n_messages`` synthetic chat messages in a
temporary directory and returns a dict of figures (``tools/bench.py`` and
``tools/eval_locomo.py --scale N`` call it). Everything comes from a seeded generator:

* words: a vocabulary of 50,000 pseudo-words drawn with Zipf frequencies (s = 1.0), so
  posting lists look like natural language (a few very common words, a long tail) instead
  of a 30-word vocabulary where every query matches every message;
* message lengths: log-normal, median ``median_chars`` (default 300, mean ~550: agent
  transcripts, as in ``tools/bench.py``; 80 gives chat-sized lines like LoCoMo's), a tail
  to 32k; about 5% of messages carry a Chinese/Japanese fragment;
* sessions of ~200 messages in 100 projects, roles alternating;
* queries: natural-language questions ("what did we decide about <w1> <w2> <w3>?") whose
  content words come from a random stored message, so every query has an answer, mixing
  common and rare words as real questions do.

Reported: ``build_msgs_per_s`` (apply + commit of in-memory events: the projection's own
cost, not reading the log), ``index_bytes / text_bytes`` (text = UTF-8 bytes of the
message contents indexed), and p50/p95 of ``recall`` over all messages, with and without
a project filter.
"""

from __future__ import annotations

import gc
import itertools
import math
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

from eventlog.events import MessageAppended, SessionCreated
from projections.recall.index import RecallIndex
from projections.recall.search import recall

_LETTERS = "etaoinshrdlcumwfgypbvkjxqz"
_CJK = ["数据库迁移方案", "東京の天気は晴れです", "我们决定使用缓存", "テストが失敗しました", "记忆系统的设计"]


class Corpus:
    """A seeded generator of chat-like texts over a Zipf vocabulary."""

    def __init__(self, seed: int, vocab: int = 50_000, median_chars: int = 300) -> None:
        self.rng = random.Random(seed)
        self.median = median_chars
        words: set[str] = set()
        while len(words) < vocab:
            n = max(2, min(12, int(self.rng.gauss(6, 2))))
            words.add("".join(self.rng.choice(_LETTERS[:20] if self.rng.random() < 0.8 else _LETTERS)
                              for _ in range(n)))
        self.words = sorted(words)
        self.rng.shuffle(self.words)
        self.cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(vocab)))

    def text(self) -> str:
        rng = self.rng
        n = max(5, min(32_000, int(rng.lognormvariate(math.log(self.median), 1.1))))
        k = max(1, n // 6)
        ws = rng.choices(self.words, cum_weights=self.cum, k=k)
        for i in range(7, len(ws), rng.randint(8, 20)):
            ws[i] = ws[i] + "."
        text = " ".join(ws)
        if rng.random() < 0.05:
            text = text[: n // 2] + " " + rng.choice(_CJK) + " " + text[n // 2 :]
        return text[:n]

    def question(self, text: str) -> str:
        """A question about ``text``: a few of its words (mid-frequency ones preferred)."""
        ws = [w.strip(".") for w in text.split() if w.strip(".").isalpha()]
        if not ws:
            return "what did we decide about " + self.rng.choice(self.words)
        rank = {w: i for i, w in enumerate(self.words[:2000])}
        rare = [w for w in ws if w not in rank] or ws
        picked = self.rng.sample(rare, min(len(rare), self.rng.randint(1, 3)))
        picked += self.rng.sample(ws, min(len(ws), self.rng.randint(0, 2)))
        return self.rng.choice(["what did we decide about", "when did we talk about", "where is the", "how do I"]) + \
            " " + " ".join(picked) + "?"


def events(n: int, seed: int = 20261130, per_session: int = 200, projects: int = 100,
           median_chars: int = 300) -> Iterator[Any]:
    """``n`` synthetic messages (and their sessions) as stamped log events."""
    corpus = Corpus(seed, median_chars=median_chars)
    seq = 0
    base = 1_780_000_000
    for i in range(n):
        if i % per_session == 0:
            seq += 1
            s = i // per_session
            yield SessionCreated(seq=seq, ts=_ts(base + i), session_key=f"bench:{s:06d}", title=f"session {s}",
                                 project=f"proj-{s % projects:03d}")
        seq += 1
        yield MessageAppended(seq=seq, ts=_ts(base + i), session_key=f"bench:{i // per_session:06d}",
                              message_id=f"m{i:08d}", role="user" if i % 2 else "assistant", content=corpus.text(),
                              timestamp=_ts(base + i))


def _ts(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(epoch))


def bench(n_messages: int, *, seed: int = 20261130, queries: int = 300, median_chars: int = 300,
          tmpdir: str | None = None, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build an index of ``n_messages`` synthetic messages and measure it (see the module docstring)."""
    say = progress or (lambda _m: None)
    tmp = tempfile.mkdtemp(prefix="evlog-recall-bench-", dir=tmpdir)
    try:
        t0 = time.perf_counter()
        evs = list(events(n_messages, seed, median_chars=median_chars))
        say(f"generated {n_messages:,} messages in {time.perf_counter() - t0:.1f} s")
        text_bytes = sum(len(e.content.encode()) for e in evs if isinstance(e, MessageAppended))
        path = os.path.join(tmp, "recall.sqlite")
        ix = RecallIndex(path)
        t0 = time.perf_counter()
        ix.catch_up(evs, batch=50_000)
        build_s = time.perf_counter() - t0
        say(f"built in {build_s:.1f} s")
        ix.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        index_bytes = ix.stats()["bytes"]
        rng = random.Random(seed + 1)
        msgs = [e for e in evs if isinstance(e, MessageAppended)]
        corpus = Corpus(seed + 2)
        sample = [rng.choice(msgs) for _ in range(queries)]
        qs = [(corpus.question(m.content), _project_of(m.session_key, 200, 100)) for m in sample]
        seqs = [m.seq for m in sample]
        # The million generated events are dropped before the clock starts: a process that
        # still holds them pays cyclic-GC passes over them during the queries (milliseconds
        # each), which a server answering recall does not hold.
        del evs, msgs, sample
        gc.collect()
        recall(ix, qs[0][0])  # warm the page cache and the stemmer
        lat_all, lat_proj, found = [], [], 0
        for (q, proj), seq in zip(qs, seqs, strict=True):
            t = time.perf_counter()
            hits = recall(ix, q, limit=10)
            lat_all.append(time.perf_counter() - t)
            t = time.perf_counter()
            recall(ix, q, project=proj, limit=10)
            lat_proj.append(time.perf_counter() - t)
            found += any(h.seq == seq for h in hits)
        ix.close()
        return {
            "messages": n_messages,
            "median_chars": median_chars,
            "text_bytes": text_bytes,
            "build_s": round(build_s, 2),
            "build_msgs_per_s": round(n_messages / build_s),
            "index_bytes": index_bytes,
            "size_ratio": round(index_bytes / text_bytes, 3),
            "queries": len(qs),
            "p50_ms": _ms(statistics.median(lat_all)),
            "p95_ms": _ms(_pct(lat_all, 0.95)),
            "project_p50_ms": _ms(statistics.median(lat_proj)),
            "project_p95_ms": _ms(_pct(lat_proj, 0.95)),
            "source_in_top10": round(found / len(qs), 3),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _project_of(session_key: str, per_session: int, projects: int) -> str:
    s = int(session_key.rsplit(":", 1)[1])
    return f"proj-{s % projects:03d}"


def _pct(xs: list[float], p: float) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(p * (len(ys) - 1)))]


def _ms(s: float) -> float:
    return round(s * 1000, 2)


__all__ = ["Corpus", "bench", "events"]

