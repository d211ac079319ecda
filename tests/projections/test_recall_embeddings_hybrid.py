"""Hybrid recall: vectors computed in the background, only the question embedded at query time.

The fake embedder of ``test_recall_embeddings`` (hashed bag of words with synonyms) stands in
for the model, so these run on the default install; numpy comes with the test environment.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("numpy")

from eventlog.app.workspace import Workspace, init_workspace  # noqa: E402
from eventlog.events import MessageAppended, SessionCreated  # noqa: E402
from processors import registry  # noqa: E402
from processors.embed_job import run_embed  # noqa: E402
from projections.recall import RecallIndex, recall, recall_sessions  # noqa: E402
from projections.recall.embeddings import EmbeddingCache, Semantic, vector_index  # noqa: E402
from projections.recall.workspace import EMBEDDINGS_FILE, index_path  # noqa: E402
from tests.projections.test_recall_embeddings import EVENTS, FakeEmbedder  # noqa: E402


def _index(path, events=EVENTS) -> RecallIndex:
    ix = RecallIndex(str(path))
    ix.catch_up(events)
    return ix


class CountingEmbedder(FakeEmbedder):
    """The fake, remembering each batch it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return super().embed(texts)


def test_hybrid_embeds_only_the_question(tmp_path):
    fake = CountingEmbedder()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    ix = _index(tmp_path / "recall.sqlite")
    Semantic(fake, cache).prepare(ix)  # what the embed job did when the messages arrived
    fake.calls.clear()
    sem = Semantic(fake, cache, mode="hybrid", fusion_weight=0.5, vector_k=3)
    recall(ix, "car wash", semantic=sem)
    assert fake.calls == [["car wash"]]
    ix.close()


def test_hybrid_finds_by_meaning_what_no_word_finds(tmp_path):
    fake = FakeEmbedder()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    ix = _index(tmp_path / "recall.sqlite")
    Semantic(fake, cache).prepare(ix)
    assert recall(ix, "feline") == []  # no indexed word: lexical recall finds nothing
    hits = recall(ix, "feline", semantic=Semantic(fake, cache, mode="hybrid", vector_k=2))
    assert hits and hits[0].message_id == "3"  # "My kitten sleeps ...": a kitten is a cat is a feline
    # the rerank mode only reorders what the words found
    assert recall(ix, "feline", semantic=Semantic(fake, cache, max_embed_per_query=0)) == []
    ix.close()


def test_fusion_adds_the_rescaled_similarity_to_bm25(tmp_path):
    fake = FakeEmbedder()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    ix = _index(tmp_path / "recall.sqlite")
    Semantic(fake, cache).prepare(ix)
    plain = {h.seq: h.score for h in recall(ix, "car", limit=10)}
    sem = Semantic(fake, cache, mode="hybrid", fusion_weight=0.5, vector_k=3)
    fused = {h.seq: h.score for h in recall(ix, "car", semantic=sem, limit=10)}
    near = vector_index(ix, sem).nearest(fake.embed(["car"])[0], 3)
    top, floor = near[0][1], near[-1][1]
    lift = 0.5 * max(plain.values())
    assert set(plain) <= set(fused)
    for seq, cos in near:
        assert fused[seq] == pytest.approx(plain.get(seq, 0.0) + lift * (cos - floor) / (top - floor), rel=1e-4)
    for seq in set(fused) - {s for s, _c in near}:
        assert fused[seq] == pytest.approx(plain[seq], rel=1e-6)  # beyond the neighbours: BM25F unchanged
    ix.close()


def test_filters_hold_for_vector_candidates_and_sessions_work(tmp_path):
    fake = FakeEmbedder()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    ix = _index(tmp_path / "recall.sqlite")
    Semantic(fake, cache).prepare(ix)
    sem = Semantic(fake, cache, mode="hybrid", vector_k=10)
    assert {h.session_key for h in recall(ix, "lunch pasta feline", session="t", semantic=sem)} == {"t"}
    groups = recall_sessions(ix, "feline", semantic=sem)
    assert groups and groups[0].session_key == "s"
    ix.close()


def test_new_vectors_are_picked_up_without_a_restart(tmp_path):
    fake = FakeEmbedder()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    ix = _index(tmp_path / "recall.sqlite")
    sem = Semantic(fake, cache, mode="hybrid", vector_k=2)
    assert recall(ix, "feline", semantic=sem) == []  # nothing embedded yet: nothing is embedded at query time
    ix.catch_up([MessageAppended(seq=6, ts="2026-01-01T00:00:01.000Z", session_key="t", message_id="2",
                                 role="user", content="A kitten visited.")])
    Semantic(fake, cache).prepare(ix)
    assert [h.message_id for h in recall(ix, "feline", semantic=sem)][:1] in (["3"], ["2"])
    assert {h.seq for h in recall(ix, "feline", semantic=sem, limit=10)} >= {4, 6}
    ix.close()


def test_the_embed_job_is_registered_and_fills_the_store(tmp_path):
    assert registry.get("embed").kind == "state" and registry.get("embed").daemon  # in a child process
    home = str(tmp_path / "ws")
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key="s", project="p")] +
                  [MessageAppended(session_key="s", message_id=str(i), role="user", content=text)
                   for i, text in enumerate(("The car wash was closed.", "My kitten sleeps on the car roof."))])
        fake = FakeEmbedder()
        first = run_embed(ws, embedder=fake)
        assert (first.embedded, first.pending, first.failed) == (2, 0, False)
        assert os.path.exists(os.path.join(home, EMBEDDINGS_FILE)) and os.path.exists(index_path(home))
        assert run_embed(ws, embedder=fake).embedded == 0  # stored by content hash
        ws.append([MessageAppended(session_key="s", message_id="9", role="user", content="Lunch was pasta.")])
        capped = run_embed(ws, embedder=fake, max_texts=0)
        assert (capped.embedded, capped.pending) == (0, 1)
        assert run_embed(ws, embedder=fake).embedded == 1


def test_the_embed_job_skips_without_the_extra(tmp_path, monkeypatch):
    from projections.recall import embeddings

    monkeypatch.setattr(embeddings, "available", lambda: False)
    init_workspace(str(tmp_path / "ws"))
    with Workspace.open(str(tmp_path / "ws"), writable=True) as ws:
        report = run_embed(ws)
        assert report.skipped and not report.failed and "skipped" in report.summary()


def test_hybrid_is_the_default_only_where_it_is_cheap(tmp_path, monkeypatch):
    from eventlog.app import recall as rc
    from projections.recall import embeddings

    home = str(tmp_path / "ws")
    init_workspace(home)
    fake = FakeEmbedder(embeddings.MiniLM.name)
    warm: list[bool] = []
    monkeypatch.setattr(embeddings, "available", lambda: True)
    monkeypatch.setattr(embeddings, "loaded", lambda: bool(warm))
    monkeypatch.setattr(embeddings, "_shared_minilm", lambda: fake)
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key="s", project="p"),
                   MessageAppended(session_key="s", message_id="0", role="user", content="My kitten sleeps.")])
        assert rc.semantic_ranker(ws, None) is None  # no model in this process: a one-shot stays lexical
        warm.append(True)  # a warm process: the model is loaded
        assert rc.semantic_ranker(ws, None) is None  # and no vectors yet
        run_embed(ws, embedder=fake)
        auto = rc.semantic_ranker(ws, None)
        assert auto is not None and auto.mode == "hybrid"
        assert rc.semantic_ranker(ws, False) is None
        fake.embedded.clear()
        hits = rc.search(ws, "feline")  # the default: hybrid here, so meaning finds what no word does
        assert [h.message_id for h in hits] == ["0"] and fake.embedded == ["feline"]


def test_the_embed_job_never_waits_for_the_model(tmp_path, monkeypatch):
    import threading

    from projections.recall import embeddings

    started: list[bool] = []
    monkeypatch.setattr(embeddings, "available", lambda: True)
    monkeypatch.setattr(embeddings, "batch_loaded", lambda: False)
    monkeypatch.setattr(embeddings, "warm_up_batch", lambda: started.append(True))
    init_workspace(str(tmp_path / "ws"))
    with Workspace.open(str(tmp_path / "ws"), writable=True) as ws:
        reports = []
        t = threading.Thread(target=lambda: reports.append(run_embed(ws, wait=False)))
        t.start()
        t.join(30)
        assert started == [True] and "loading the model" in reports[0].skipped


def test_a_long_lived_process_loads_the_model_once_vectors_exist_and_a_one_shot_never_does(tmp_path, monkeypatch):
    from eventlog.app import recall as rc
    from projections.recall import embeddings

    home = str(tmp_path / "ws")
    init_workspace(home)
    fake = FakeEmbedder(embeddings.MiniLM.name)
    loads: list[bool] = []  # warm_up calls
    ready: list[bool] = []  # the background load finished
    monkeypatch.setattr(rc, "_LONG_LIVED", [])
    monkeypatch.setattr(embeddings, "available", lambda: True)
    monkeypatch.setattr(embeddings, "loaded", lambda: bool(ready))
    monkeypatch.setattr(embeddings, "warm_up", lambda: loads.append(True) or object())
    monkeypatch.setattr(embeddings, "_shared_minilm", lambda: fake)
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key="s", project="p"),
                   MessageAppended(session_key="s", message_id="0", role="user", content="My kitten sleeps.")])
        assert rc.warm(home) is False and loads == []  # a server starting on a workspace with no vectors yet
        run_embed(ws, embedder=fake)  # the daemon's embed job stores them
        loads.clear()
        assert rc.search(ws, "feline") == []  # this query is lexical, and starts the load in the background
        assert loads == [True]
        ready.append(True)
        fake.embedded.clear()
        assert [h.message_id for h in rc.search(ws, "feline")] == ["0"]  # then hybrid: only the query embedded
        assert fake.embedded == ["feline"]
        loads.clear()
        ready.clear()
        monkeypatch.setattr(rc, "_LONG_LIVED", [])  # a one-shot command (no warm): never starts a load
        rc.search(ws, "feline")
        assert loads == []


def test_a_large_catch_up_reads_the_store_in_one_pass_with_the_same_matrix(tmp_path, monkeypatch):
    import numpy as np

    from projections.recall import embeddings

    fake = FakeEmbedder()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    ix = _index(tmp_path / "recall.sqlite")
    sem = Semantic(fake, cache, mode="hybrid")
    sem.prepare(ix)
    hashes = [embeddings.text_hash(t) for t in ("My kitten sleeps on the car roof.", "never stored")]
    looked_up = cache.get_bytes(fake.name, hashes)
    by_rows = embeddings.VectorIndex()
    by_rows.catch_up(ix, cache, fake.name)
    monkeypatch.setattr(embeddings, "SCAN_OVER", 1)  # every catch-up now reads the model's rows in one pass
    scanned = cache.get_bytes(fake.name, hashes)
    assert scanned == looked_up and len(scanned) == 1  # the text never stored stays absent
    in_one_pass = embeddings.VectorIndex()
    in_one_pass.catch_up(ix, cache, fake.name)
    assert in_one_pass.ids.tolist() == by_rows.ids.tolist() and len(by_rows.ids) == 4
    assert np.array_equal(in_one_pass.matrix, by_rows.matrix)
    assert {h: list(v) for h, v in cache.get(fake.name, hashes).items()} == {
        h: np.frombuffer(v, dtype=np.float32).tolist() for h, v in scanned.items()}
    ix.close()


def test_prepare_may_batch_with_another_embedder_of_the_same_model(tmp_path):
    from eventlog.errors import ConfigError

    asker, batcher = CountingEmbedder(), CountingEmbedder()  # the question's embedder and the batches' (one name)
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    ix = _index(tmp_path / "recall.sqlite")
    sem = Semantic(asker, cache, mode="hybrid", vector_k=2)
    assert sem.prepare(ix, embedder=batcher)["embedded"] == 4
    assert asker.calls == [] and sum(len(c) for c in batcher.calls) == 4
    assert recall(ix, "feline", semantic=sem)[0].message_id == "3" and asker.calls == [["feline"]]
    with pytest.raises(ConfigError, match="cannot serve"):
        sem.prepare(ix, embedder=FakeEmbedder("another-model"))
    ix.close()
