"""Processors: background jobs that read the log and write their results back as events.

``runner.py`` runs log processors from validated offsets (outputs and the offset in one
atomic batch); ``snapshot.py`` (messages -> diary), ``digest.py`` (diary -> short-term
memory and Dream's history), ``archive.py`` (short-term -> long-term memory). ``run``
is the one entry point the command line and the daemon use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from eventlog.errors import ConfigError
from eventlog.workspace import Workspace
from processors.runner import RunReport


def _snapshot(ws: Workspace) -> RunReport:
    from processors.runner import run_log_processor
    from processors.snapshot import Snapshot

    return run_log_processor(ws, Snapshot())


def _digest(ws: Workspace) -> RunReport:
    from processors.digest import run_digest

    return run_digest(ws)


def _archive(ws: Workspace) -> RunReport:
    from processors.archive import run_archive

    return run_archive(ws)


PROCESSORS: dict[str, Callable[[Workspace], RunReport]] = {
    "snapshot": _snapshot,
    "digest": _digest,
    "archive": _archive,
}


def run(ws: Workspace, name: str) -> RunReport:
    """Run one processor by name over a writable workspace."""
    try:
        fn = PROCESSORS[name]
    except KeyError:
        raise ConfigError(f"unknown processor {name!r}; choose one of {', '.join(PROCESSORS)}") from None
    return fn(ws)


@dataclass
class OffsetRow:
    """One line of ``evlog offsets``: a processor's position, lag and recorded losses."""

    processor: str
    seq: int
    lag: int
    committed_at: str
    resets: int
    lost_bytes: int
    lost_records: int
    detail: str = ""


def offsets(ws: Workspace) -> list[OffsetRow]:
    """Every processor's position, lag behind the log end and recorded losses."""
    state = ws.projections["offsets"].s  # type: ignore[attr-defined]
    last = ws.log.last_seq
    rows = []
    for name in sorted(set(state.processors) | {"snapshot"}):
        p = state.processors.get(name)
        if name == "digest":
            diary = ws.projections["diary"].days  # type: ignore[attr-defined]
            unread = sum(max(0, d.end - max(state.digest.get(date, 0), d.start)) for date, d in diary.items())
            rows.append(OffsetRow("digest", 0, unread, p.committed_at if p else "", p.resets if p else 0,
                                  p.lost_bytes if p else 0, 0, f"{unread} diary bytes unread in {len(diary)} day(s)"))
            continue
        seq = p.seq if p else 0
        rows.append(OffsetRow(name, seq, last - seq, p.committed_at if p else "", p.resets if p else 0,
                              p.lost_bytes if p else 0, p.lost_records if p else 0))
    return rows
