"""The embed job: sentence vectors for every indexed text, computed in the background.

Hybrid recall (``projections.recall.embeddings``) embeds only the question at query time;
the vectors of messages, history entries and facts come from here. The job embeds the texts of
the recall index that the embedding store (``state/recall-embeddings.sqlite``, keyed by model
and content hash) does not hold yet, and records in the store the index seq it has covered.

Two ways to run it:

* ``evlog run embed`` (``run_embed``): in this process; it catches the index up, loads the batch model
  (``embeddings.batch_model``: torch when installed, seconds) and embeds at most ``MAX_PER_RUN`` texts. ``wait=False`` (a caller that must stay
  responsive) starts the load in a background thread and skips this run instead.
* The daemon (``run_in_background``, every 60 s by default): when the extra is installed and the
  index has grown past the covered seq, it starts ``python -m processors.embed_job`` as a child
  process (its own session, ``nice`` 10, half the cores for torch, the index opened read-only) and
  returns at once; the next turns report the child's result or that it still runs, and start no
  second child. Torch never loads in the daemon, so its loop, its signals and its prompt clean exit
  are untouched: ``stop_background`` (the daemon's shutdown) terminates the child, and a child whose
  parent died stops between batches. What a stopped child embedded is kept (one commit per batch).

A replay that rebuilds the index finds every vector by its hash and embeds nothing again; an
erasure deletes the store (``eventlog.app.erase``) and the next runs embed what is left. Hooks
never call this. Without the embeddings extra it does nothing and says so.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from processors.context import Context
    from projections.recall.embeddings import Embedder

#: The most texts one run embeds (the next run takes the rest): seconds, not minutes, on a CPU.
MAX_PER_RUN = 512
#: The same in a worker thread (a daemon inside a server), which must stop within seconds when asked.
MAX_PER_THREAD_RUN = 64
#: The most texts one background child embeds before it exits (the daemon starts the next one).
MAX_PER_CHILD = 2048
#: The child's niceness: embedding yields the CPU to hooks, ingest and queries.
CHILD_NICE = 10
#: Where a background child's stderr goes, under the workspace.
CHILD_LOG = os.path.join("logs", "embed.log")


@dataclass
class EmbedReport:
    """What one embed run did."""

    processor: str = "embed"
    texts: int = 0
    embedded: int = 0
    cached: int = 0
    pending: int = 0
    skipped: str = ""
    background: int = 0  # the pid of the child the daemon started this turn
    texts_per_s: float | None = None

    @property
    def failed(self) -> bool:
        """Never: no extra is a skip, not a failure; an error raises."""
        return False

    def summary(self) -> str:
        """One line for the daemon's log."""
        if self.skipped:
            return f"skipped: {self.skipped}"
        if self.background:
            done = f"{self.embedded} embedded; " if self.embedded else ""
            return f"{done}embedding in the background (process {self.background})"
        return f"{self.embedded} embedded, {self.cached} already stored, {self.pending} left for the next run"


def run_embed(ctx: Context, *, embedder: Embedder | None = None, max_texts: int | None = None,
              wait: bool = True) -> EmbedReport:
    """Catch the recall index up, then embed the texts the store lacks (``embedder``: a test's fake;
    ``wait``: load the model now if it is not loaded, instead of skipping this run)."""
    from projections.recall import embeddings
    from projections.recall.workspace import update

    report = EmbedReport()
    worker = threading.current_thread() is not threading.main_thread()
    if max_texts is None:
        max_texts = MAX_PER_THREAD_RUN if worker else MAX_PER_RUN
    if embedder is None and not embeddings.available():
        report.skipped = "the embeddings extra is not installed"
        return report
    if embedder is None and not embeddings.batch_loaded():
        loading = embeddings.warm_up_batch()
        if not wait or loading is None:
            report.skipped = "loading the model in the background; the next run embeds"
            return report
        loading.join()
    ix = update(ctx.home, ws=ctx)
    try:
        return embed_index(ctx.home, ix, embeddings.batch_model() if embedder is None else embedder,
                           max_texts=max_texts)
    finally:
        ix.close()


def embed_index(home: str, ix: Any, embedder: Embedder, *, max_texts: int,
                stop: Callable[[], bool] | None = None) -> EmbedReport:
    """Embed what the store lacks of index ``ix``; with nothing left, record the seq covered."""
    from projections.recall import embeddings
    from projections.recall.workspace import embeddings_path

    seq = ix.snapshot()[0]
    sem = embeddings.Semantic(embedder, embeddings.EmbeddingCache(embeddings_path(home)))
    try:
        stats = sem.prepare(ix, limit=max_texts, batch=128, stop=stop)
        if not stats["pending"]:
            sem.cache.set_covered(embedder.name, seq)
    finally:
        sem.cache.close()
    return EmbedReport(texts=stats["texts"], embedded=stats["embedded"], cached=stats["cached"],
                       pending=stats["pending"], texts_per_s=stats["texts_per_s"])


# -- in the background: the daemon's way ---------------------------------------------------------


_CHILDREN: dict[str, subprocess.Popen[bytes]] = {}
_CHILDREN_LOCK = threading.Lock()


def _read_int(path: str, sql: str, args: tuple[Any, ...] = ()) -> int | None:
    """One integer from a SQLite file opened read-only (None: no file, no table, no row)."""
    import sqlite3

    if not os.path.exists(path):
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute(sql, args).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return int(row[0]) if row and row[0] is not None else None


def needs_embedding(home: str, model: str = "") -> bool:
    """True when the recall index holds a seq the store has not covered for ``model`` (default the
    packaged model's name; cheap: the model is not loaded)."""
    from projections.recall.embeddings import MODEL_NAME
    from projections.recall.workspace import embeddings_path, index_path

    seq = _read_int(index_path(home), "SELECT value FROM meta WHERE key = 'seq'")
    if not seq:
        return False
    key = f"covered:{model or MODEL_NAME}"
    return _read_int(embeddings_path(home), "SELECT value FROM meta WHERE key = ?", (key,)) != seq


def _collect(child: subprocess.Popen[bytes]) -> EmbedReport:
    """The report of a child that has exited (its one JSON line), or what went wrong."""
    out, _err = child.communicate()
    try:
        fields = json.loads(out.decode("utf-8").strip().splitlines()[-1])
        return EmbedReport(**{k: v for k, v in fields.items() if k in EmbedReport.__dataclass_fields__})
    except (ValueError, IndexError, TypeError):
        raise RuntimeError(f"the background embedding exited with {child.returncode}; see {CHILD_LOG}") from None


def child_command(home: str, *, embedder: str = "") -> list[str]:
    """The command line of a background child for the workspace at ``home``."""
    cmd = [sys.executable, "-m", "processors.embed_job", "--home", home, "--parent", str(os.getpid())]
    return [*cmd, "--embedder", embedder] if embedder else cmd


def _start(home: str, embedder: str) -> subprocess.Popen[bytes]:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p))
    os.makedirs(os.path.join(home, os.path.dirname(CHILD_LOG)), mode=0o700, exist_ok=True)
    log: IO[bytes]
    with open(os.path.join(home, CHILD_LOG), "ab") as log:
        return subprocess.Popen(child_command(home, embedder=embedder), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=log, env=env, start_new_session=True)


def run_in_background(ctx: Context, *, embedder: str = "") -> EmbedReport:
    """The daemon's embed turn: report a finished child, start one if there is new work; never waits.

    ``embedder``: ``module:Class`` of another ``Embedder`` for the child (tests); default the model."""
    from projections.recall import embeddings

    home = os.path.abspath(ctx.home)
    if not embedder and not embeddings.available():
        return EmbedReport(skipped="the embeddings extra is not installed")
    with _CHILDREN_LOCK:
        child = _CHILDREN.get(home)
        if child is not None and child.poll() is None:
            return EmbedReport(skipped=f"still embedding in the background (process {child.pid})")
        report = EmbedReport(skipped="nothing new to embed")
        if child is not None:
            del _CHILDREN[home]
            report = _collect(child)
        if needs_embedding(home, _load_embedder(embedder, 1).name if embedder else ""):
            _CHILDREN[home] = _start(home, embedder)
            report.background, report.skipped = _CHILDREN[home].pid, ""
    return report


def stop_background(home: str | None = None, *, timeout: float = 3.0) -> None:
    """Terminate the background child of ``home`` (every one: None); kill one that lingers."""
    with _CHILDREN_LOCK:
        homes = [os.path.abspath(home)] if home is not None else list(_CHILDREN)
        children = [c for c in (_CHILDREN.pop(h, None) for h in homes) if c is not None]
    for child in children:
        if child.poll() is None:
            child.terminate()
        try:
            child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()


def _load_embedder(spec: str, threads: int) -> Embedder:
    if not spec:
        from projections.recall.embeddings import batch_embedder

        return batch_embedder(threads)
    module, _, name = spec.partition(":")
    made: Embedder = getattr(importlib.import_module(module), name)()
    return made


def main(argv: list[str] | None = None) -> int:
    """The background child: embed what the store lacks of the workspace's index, print one JSON line."""
    from projections.recall import RecallIndex
    from projections.recall.workspace import index_path

    ap = argparse.ArgumentParser(prog="python -m processors.embed_job", description=main.__doc__)
    ap.add_argument("--home", required=True)
    ap.add_argument("--parent", type=int, default=0, help="stop between batches once this process is gone")
    ap.add_argument("--max-texts", type=int, default=MAX_PER_CHILD)
    ap.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--embedder", default="", help="module:Class of another Embedder (default: the model)")
    args = ap.parse_args(argv)
    try:
        os.nice(CHILD_NICE)
    except OSError:
        pass
    orphaned = (lambda: os.getppid() != args.parent) if args.parent else None
    ix = RecallIndex(index_path(args.home), readonly=True)
    try:
        report = embed_index(args.home, ix, _load_embedder(args.embedder, args.threads), max_texts=args.max_texts,
                             stop=orphaned)
    finally:
        ix.close()
    print(json.dumps(asdict(report)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
