"""The embed job: sentence vectors for every indexed text, computed in the background.

Hybrid recall (``projections.recall.embeddings``) embeds only the question at query time;
the vectors of messages, history entries and facts come from here. The job catches the
recall index up with the log, then embeds the texts the embedding store
(``state/recall-embeddings.sqlite``, keyed by model and content hash) does not hold yet,
at most ``MAX_PER_RUN`` per run so one round of the daemon stays short. Loading the model takes
seconds: ``evlog run embed`` waits for it; ``wait=False`` (a caller that must stay responsive)
starts the load in a background thread and skips this run instead. The daemon does not schedule
this job yet (``daemon=False``): loading torch beside the daemon's loop broke its prompt, clean exit
on SIGINT in the tests; run it from cron or after ``evlog ingest``. A replay that
rebuilds the index finds every vector by its hash and embeds nothing again; an erasure
deletes the store (``eventlog.app.erase``) and the next runs embed what is left. Hooks
never call this: it runs in ``evlog run embed`` and the daemon. Without the embeddings
extra it does nothing and says so.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from processors.context import Context
    from projections.recall.embeddings import Embedder

#: The most texts one run embeds (the next run takes the rest): seconds, not minutes, on a CPU.
MAX_PER_RUN = 512
#: The same in a worker thread (a daemon inside a server), which must stop within seconds when asked.
MAX_PER_THREAD_RUN = 64


@dataclass
class EmbedReport:
    """What one embed run did."""

    processor: str = "embed"
    texts: int = 0
    embedded: int = 0
    cached: int = 0
    pending: int = 0
    skipped: str = ""

    @property
    def failed(self) -> bool:
        """Never: no extra is a skip, not a failure; an error raises."""
        return False

    def summary(self) -> str:
        """One line for the daemon's log."""
        if self.skipped:
            return f"skipped: {self.skipped}"
        return f"{self.embedded} embedded, {self.cached} already stored, {self.pending} left for the next run"


def run_embed(ctx: Context, *, embedder: Embedder | None = None, max_texts: int | None = None,
              wait: bool = True) -> EmbedReport:
    """Catch the recall index up, then embed the texts the store lacks (``embedder``: a test's fake;
    ``wait``: load the model now if it is not loaded, instead of skipping this run)."""
    from projections.recall import embeddings
    from projections.recall.workspace import embeddings_path, update

    report = EmbedReport()
    worker = threading.current_thread() is not threading.main_thread()
    if max_texts is None:
        max_texts = MAX_PER_THREAD_RUN if worker else MAX_PER_RUN
    if embedder is None and not embeddings.available():
        report.skipped = "the embeddings extra is not installed"
        return report
    if embedder is None and not embeddings.loaded():
        loading = embeddings.warm_up()
        if not wait or loading is None:
            report.skipped = "loading the model in the background; the next run embeds"
            return report
        loading.join()
    ix = update(ctx.home, ws=ctx)
    try:
        if embedder is None:
            sem = embeddings.Semantic.default(embeddings_path(ctx.home))
        else:
            sem = embeddings.Semantic(embedder, embeddings.EmbeddingCache(embeddings_path(ctx.home)))
        try:
            stats = sem.prepare(ix, limit=max_texts, batch=32)
        finally:
            sem.cache.close()
    finally:
        ix.close()
    report.texts, report.embedded, report.cached = stats["texts"], stats["embedded"], stats["cached"]
    report.pending = stats["pending"]
    return report
