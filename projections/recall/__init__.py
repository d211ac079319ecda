"""Recall: ranked search over everything the log holds, with sources.

``RecallIndex`` (``index.py``) is a projection of the log into one SQLite/FTS5 file;
``recall`` (``search.py``) answers a question in plain words with ``Hit``s that say where
each answer comes from (kind, seq, session, message id, role, time, project). Optional
sentence-embedding re-ranking lives in ``embeddings.py`` and needs ``evlog[embeddings]``.

    from projections.recall import RecallIndex, recall
    with RecallIndex(path) as ix:
        ix.catch_up(ws.log.read(ix.seq + 1))
        for hit in recall(ix, "what did we decide about the cache?", project="evlog"):
            print(hit.score, hit.session_key, hit.message_id, hit.snippet)
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # typing's, without importing typing: a SessionStart that renders reads .text and .files
if TYPE_CHECKING:
    from typing import Any

    from projections.recall.index import SCHEMA, RecallIndex
    from projections.recall.query import SCOPES
    from projections.recall.search import DEFAULT_RANKING, Hit, Ranking, SessionHit, recall, recall_sessions

#: Where each name of the facade lives: imported on first use, so reading one submodule
#: (``projections.recall.text``, ``.files``) does not load the index and the search.
_HOME = {"SCHEMA": "index", "RecallIndex": "index", "SCOPES": "query", "DEFAULT_RANKING": "search", "Hit": "search",
         "Ranking": "search", "SessionHit": "search", "recall": "search", "recall_sessions": "search"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"projections.recall.{_HOME[name]}"), name)
    globals()[name] = value
    return value


__all__ = ["DEFAULT_RANKING", "SCHEMA", "SCOPES", "Hit", "Ranking", "RecallIndex", "SessionHit", "recall",
           "recall_sessions"]
