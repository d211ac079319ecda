"""Where a workspace keeps its recall files: names only, so a reader pays for no index code.

``projections.recall.workspace`` re-exports every name here.

* ``state/recall.sqlite``: the index (disposable, like every file outside ``log/``);
* ``state/recall-embeddings.sqlite``: the embedding cache (kept across rebuilds).
"""

from __future__ import annotations

import os

INDEX_FILE = os.path.join("state", "recall.sqlite")
EMBEDDINGS_FILE = os.path.join("state", "recall-embeddings.sqlite")


def index_path(home: str) -> str:
    """Where the workspace's recall index lives."""
    return os.path.join(home, INDEX_FILE)


def embeddings_path(home: str) -> str:
    """Where the workspace's embedding cache lives."""
    return os.path.join(home, EMBEDDINGS_FILE)
