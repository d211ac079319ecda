"""The daemon's embed job: vectors computed in a child process, so torch never loads beside its loop.

A fake embedder (``tests.projections.test_recall_embeddings.FakeEmbedder``, named to the child
by ``module:Class``) stands in for the model, so these run on the default install.
"""

from __future__ import annotations

import functools
import os
import threading
import time

import pytest

from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended, SessionCreated
from processors import embed_job
from processors.daemon import run_daemon
from processors.embed_job import needs_embedding, run_in_background, stop_background
from processors.llm import OfflineExtractor
from projections.recall.embeddings import EmbeddingCache
from projections.recall.workspace import embeddings_path, update
from tests.projections.test_recall_embeddings import FakeEmbedder

FAKE = "tests.projections.test_recall_embeddings:FakeEmbedder"
SLOW = "tests.processors.test_embed_background:SlowEmbedder"


class SlowEmbedder(FakeEmbedder):
    """The fake, taking a second per batch: a child that is still busy when it is stopped."""

    def embed(self, texts):
        time.sleep(1.0)
        return super().embed(texts)


@pytest.fixture
def home(tmp_path):
    path = str(tmp_path / "ws")
    init_workspace(path)
    with Workspace.open(path, writable=True) as ws:
        ws.append([SessionCreated(session_key="s", project="p")]
                  + [MessageAppended(session_key="s", message_id=str(i), role="user", content=f"message number {i}")
                     for i in range(300)])
        update(path, ws=ws).close()  # what the daemon's recall job does first
    yield path
    stop_background(path)


def _wait_for_child(home: str, timeout: float = 120.0) -> None:
    child = embed_job._CHILDREN[os.path.abspath(home)]  # noqa: SLF001
    child.wait(timeout)


def _vectors(home: str) -> int:
    cache = EmbeddingCache(embeddings_path(home))
    try:
        return cache.count("fake-bow")
    finally:
        cache.close()


def test_the_daemon_turn_starts_a_child_reports_it_and_starts_none_when_nothing_is_new(home):
    with Workspace.open(home, writable=True) as ws:
        first = run_in_background(ws, embedder=FAKE)
        assert first.background and first.background != os.getpid()
        assert "in the background" in first.summary()
        _wait_for_child(home)
        done = run_in_background(ws, embedder=FAKE)
        assert (done.embedded, done.pending, done.background) == (300, 0, 0)
        assert _vectors(home) == 300
        assert not needs_embedding(home, "fake-bow")
        assert run_in_background(ws, embedder=FAKE).skipped == "nothing new to embed"
        ws.append([MessageAppended(session_key="s", message_id="new", role="user", content="a new message")])
        update(home, ws=ws).close()
        assert needs_embedding(home, "fake-bow")
        assert run_in_background(ws, embedder=FAKE).background  # new work: a new child
        _wait_for_child(home)
        assert run_in_background(ws, embedder=FAKE).embedded == 1


def test_a_second_turn_while_the_child_runs_starts_no_other(home):
    with Workspace.open(home, writable=True) as ws:
        pid = run_in_background(ws, embedder=SLOW).background
        again = run_in_background(ws, embedder=SLOW)
        assert again.background == 0 and f"process {pid}" in again.skipped


def test_stopping_ends_a_busy_child_promptly_and_keeps_what_it_stored(home):
    with Workspace.open(home, writable=True) as ws:
        run_in_background(ws, embedder=SLOW)
        child = embed_job._CHILDREN[os.path.abspath(home)]  # noqa: SLF001
        time.sleep(0.5)
        t0 = time.monotonic()
        stop_background(home)
        assert time.monotonic() - t0 < 4 and child.poll() is not None
        assert needs_embedding(home, "fake-bow")  # not covered: the next daemon starts over where it stopped


def test_a_child_whose_parent_is_gone_stops_between_batches(home, capsys):
    gone = os.getpid() + 1_000_000  # no such process: this child's parent "died"
    assert embed_job.main(["--home", home, "--parent", str(gone), "--embedder", FAKE]) == 0
    out = capsys.readouterr().out
    assert '"embedded": 0' in out and '"pending": 300' in out
    assert needs_embedding(home, "fake-bow")


def test_the_daemon_runs_embed_in_a_child_and_its_shutdown_ends_it(home, monkeypatch):
    monkeypatch.setattr(embed_job, "run_in_background", functools.partial(run_in_background, embedder=SLOW))
    lines: list[str] = []
    stop = threading.Event()
    with Workspace.open(home, writable=True) as ws:
        t = threading.Thread(target=run_daemon, args=(ws, OfflineExtractor()),
                             kwargs={"stop": stop, "log": lines.append, "schedule": {"recall": 0.1, "embed": 0.1}})
        t.start()
        deadline = time.monotonic() + 60
        while not any("embed: skipped: still embedding" in ln for ln in lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        child = embed_job._CHILDREN.get(os.path.abspath(home))  # noqa: SLF001
        stop.set()
        t.join(15)
    assert not t.is_alive() and child is not None and child.poll() is not None
    assert any("embed: embedding in the background (process " in ln for ln in lines)
    assert lines[-1].startswith("daemon stopping")
