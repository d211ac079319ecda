"""Projections: pure folds of the log into the files users and agents read.

Every file here can be deleted and rebuilt from the log (``evlog replay``): session files
(``sessions.py``), Dream's input ``memory/history.jsonl`` (``history.py``) and the layered
MEMORY.md files (``memory.py``). ``projector.py`` keeps them caught up and checkpointed;
``session_store.py`` is the API agents embed; ``replay.py`` rebuilds and checks.
"""

from __future__ import annotations

from eventlog.fsio import FileSystem
from projections.base import Projection


def default_projections(root: str, fs: FileSystem, *, live: bool = True) -> list[Projection]:
    """The projections every workspace maintains, rooted at ``root``."""
    from projections.history import HistoryProjection
    from projections.memory import MemoryProjection
    from projections.sessions import SessionsProjection

    return [SessionsProjection(root, fs, live=live), HistoryProjection(root, fs, live=live), MemoryProjection(root, fs, live=live)]
