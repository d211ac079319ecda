"""Recall over a workspace: ranked search of every message, history entry and fact, with sources.

The index (``projections.recall``, SQLite FTS5 at ``state/recall.sqlite``) is a projection:
``search`` catches it up with the log first (cheap when nothing is new), ``evlog replay``
keeps it when it looks sound and rebuilds it otherwise (``refresh``), ``replay --check``
proves it against the log. Searching records nothing:
a caller that chooses to use hits says so with ``use`` (the archive and the MEMORY.md
budget keep what is used).

Hybrid recall (``semantic=True``; needs ``pip install -e '.[embeddings]'``) fuses BM25F with
the nearest neighbours of the question among stored sentence vectors; only the question is
embedded at query time. The vectors are computed in the background by the ``embed`` job and
kept by content hash in ``state/recall-embeddings.sqlite`` (they survive rebuilds; an erasure
deletes them). ``semantic=None`` (the default) is hybrid where it is cheap (see
``semantic_ranker``); a one-shot command stays lexical, as loading the model takes seconds.

A long-lived process (the MCP server, the local web app) calls ``warm`` at start: from then on,
as soon as the workspace's store holds vectors, the model loads once in a background thread and
every later query of the process is hybrid, embedding only itself (the queries asked while it
loads are lexical, never delayed). The daemon needs no model of its own: its embed job computes
the vectors in a child process (``processors.embed_job``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from eventlog.errors import ConfigError
from projections.recall import Hit, RecallIndex, SessionHit, recall_sessions
from projections.recall import recall as _search
from projections.recall import workspace as rw
from projections.recall.pack import pack

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace

__all__ = ["Hit", "SessionHit", "check", "index", "proof", "rebuild", "refresh", "search", "search_sessions", "use",
           "warm"]


def index(ws: Workspace, *, notes: list[str] | None = None) -> RecallIndex:
    """The workspace's recall index, caught up with the log.

    Where the workspace cannot be written (a read-only disk, no permission) nothing is written:
    ``projections.recall.workspace.unwritable_index``, with a line in ``notes`` when the search
    runs on a copy caught up in memory.
    """
    path = rw.index_path(ws.home)
    folder = os.path.dirname(path) or "."
    writable = os.access(folder, os.W_OK) if os.path.isdir(folder) else os.access(ws.home, os.W_OK)
    if writable and (not os.path.exists(path) or os.access(path, os.W_OK)):
        return rw.update(ws.home, ws=ws)
    return rw.unwritable_index(ws.home, ws=ws, notes=notes)


_LONG_LIVED: list[bool] = []  # a server said it answers many queries (``warm``)


def warm(home: str) -> bool:
    """Mark this process as long-lived and load the model in the background if the store at ``home`` has
    vectors (later queries start the load once vectors appear); True when the load started."""
    _LONG_LIVED[:] = [True]
    return _warm_if_vectors(home)


def _warm_if_vectors(home: str) -> bool:
    from projections.recall import embeddings

    if embeddings.loaded() or not embeddings.available() or not embeddings.has_vectors(rw.embeddings_path(home)):
        return False
    return embeddings.warm_up() is not None


def semantic_ranker(ws: Workspace, semantic: bool | None) -> Any:
    """The ranker recall uses: hybrid if ``semantic`` (ConfigError without the extra), lexical if False.

    None (the default) is hybrid only where it is cheap: the extra installed, the model already
    loaded in this process (a server that called ``projections.recall.embeddings.warm_up``) and
    vectors in the store (the ``embed`` job); otherwise lexical.
    """
    from projections.recall import embeddings

    if semantic is None:
        if _LONG_LIVED and not embeddings.loaded():
            _warm_if_vectors(ws.home)
        return embeddings.automatic(rw.embeddings_path(ws.home))
    if not semantic:
        return None
    if not embeddings.available():
        raise ConfigError("semantic recall needs the embeddings extra: pip install -e '.[embeddings]' in a checkout of evlog")
    return embeddings.Semantic.default(rw.embeddings_path(ws.home), **embeddings.HYBRID)


def search(ws: Workspace, query: str, *, scope: str = "all", project: str | None = None, session: str | None = None,
           role: str | None = None, since: str | None = None, until: str | None = None, limit: int = 10,
           states: tuple[str, ...] | None = None, semantic: bool | None = None, now: str | None = None,
           budget: int | None = None, notes: list[str] | None = None) -> list[Hit]:
    """Ranked hits for ``query`` (see ``projections.recall.search.recall`` for every option).

    ``now``: the time the question is asked (relative times in it resolve against it;
    default the clock). ``budget``: pack the hits into that many tokens, each trimmed
    around its evidence (``projections.recall.pack``). ``notes``: see ``index``.
    """
    ix = index(ws, notes=notes)
    try:
        hits = _search(ix, query, scope=scope, project=project, session=session, role=role, since=since,
                       until=until, limit=limit, states=states, semantic=semantic_ranker(ws, semantic), now=now)
    finally:
        ix.close()
    return hits if budget is None else pack(hits, budget, query)


def search_sessions(ws: Workspace, query: str, *, limit: int = 10, turns: int = 3, semantic: bool | None = None,
                    notes: list[str] | None = None, **options: Any) -> list[SessionHit]:
    """The best ``limit`` sessions for ``query`` with their best ``turns`` turns (options as ``search``)."""
    ix = index(ws, notes=notes)
    try:
        return recall_sessions(ix, query, limit=limit, turns=turns, semantic=semantic_ranker(ws, semantic), **options)
    finally:
        ix.close()


def rebuild(ws: Workspace) -> int:
    """Build the index again from seq 1 (the embedding cache stays); returns the seq it covers."""
    ix = rw.rebuild(ws.home, ws=ws)
    try:
        return ix.seq
    finally:
        ix.close()


def refresh(ws: Workspace) -> str:
    """Keep the index if it looks sound (caught up with the log), else rebuild it; says which
    (``projections.recall.workspace.refresh``)."""
    return rw.refresh(ws.home, ws)


def check(ws: Workspace, *, full: bool = False) -> list[str]:
    """Problems of the index against the log ([] when none): one tokenising of its rows and a
    row-by-row comparison with a fold of the log; ``full`` compares with a whole rebuild instead."""
    return rw.check(ws.home, ws=ws, full=full)


def proof(ws: Workspace, *, full: bool = False) -> rw.IndexProof:
    """``check`` in steps, fed the events of a read of the log the caller makes anyway (``replay --check``);
    ``finish()`` gives the problems. A context manager (``projections.recall.workspace.IndexProof``)."""
    return rw.IndexProof(ws.home, ws=ws, full=full)


def use(ws: Workspace, hits: list[Hit], *, query: str = "") -> None:
    """Record that the caller chose to use these hits: the facts, and the messages (whose short-term entries count as used)."""
    from eventlog.app import memory

    memory.used(ws, [h.fact_id for h in hits if h.fact_id], query=query,
                message_seqs=[h.seq for h in hits if h.kind == "message"])
