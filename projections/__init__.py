"""Projections: pure folds of the log into the files users and agents read.

Every file here can be deleted and rebuilt from the log (``evlog replay``): session files
(``sessions.py``), Dream's input ``memory/history.jsonl`` (``history.py``), the layered
MEMORY.md files (``memory.py``), daily diaries (``diary.py``), short- and long-term memory
entries (``memory_entries.py``); and state without files: the processors' positions
(``offsets.py``), Dream's runs (``dream_runs.py``) and AutoCompact's backoff (``compaction.py``). ``projector.py`` keeps them caught up and checkpointed;
``session_store.py`` is the API agents embed; ``replay.py`` rebuilds and checks.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing
if TYPE_CHECKING:  # the package stays cheap to enter: a reader of one file pays for that module alone
    from eventlog.fsio import FileSystem
    from projections.base import Projection


def default_projections(root: str, fs: FileSystem, *, live: bool = True, mirror_projects: list[str] | None = None) -> list[Projection]:
    """The projections every workspace maintains, rooted at ``root``.

    ``mirror_projects``: the project directories (registered in ``evlog.json``) whose
    ``memory/MEMORY.md`` a live memory projection keeps a copy in; no other place outside
    ``root`` is ever written.
    """
    from projections.compaction import CompactionProjection
    from projections.diary import DiaryProjection
    from projections.dream_runs import DreamRunsProjection
    from projections.history import HistoryProjection
    from projections.memory import MemoryProjection
    from projections.memory_entries import MemoryEntriesProjection
    from projections.offsets import OffsetsProjection
    from projections.sessions import SessionsProjection

    kinds = (SessionsProjection, HistoryProjection, MemoryProjection, DiaryProjection, OffsetsProjection,
             MemoryEntriesProjection, DreamRunsProjection, CompactionProjection)
    out: list[Projection] = [kind(root, fs, live=live) for kind in kinds]
    for p in out:
        if isinstance(p, MemoryProjection):
            p.mirror_projects = frozenset(mirror_projects or ())
    return out
