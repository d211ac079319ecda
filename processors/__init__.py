"""Processors: background jobs that read the log and write their results back as events.

``runner.py`` runs log processors from validated offsets (outputs and the offset in one
atomic batch); ``snapshot.py`` (messages -> diary), ``digest.py`` (diary -> short-term
memory and Dream's history), ``archive.py`` (short-term -> long-term memory),
``consolidator.py`` (old messages -> summaries in history), ``autocompact.py`` (which
sessions to consolidate, with backoff), ``dream.py`` (history -> facts in MEMORY.md,
the LLM interface beside it in ``llm/``), ``audit.py`` (explaining Dream) and
``daemon.py`` (all of them on schedules). ``run`` is the one entry point the command
line and the daemon use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eventlog.errors import ConfigError

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace

#: The event types each log processor consumes (for the pending count of ``evlog offsets``).
LOG_INPUTS: dict[str, frozenset[str]] = {"snapshot": frozenset({"message.appended"}),
                                         "digest": frozenset({"diary.appended"})}
#: Dream's inputs: every message, and the notes of ``evlog remember`` (``history.appended`` with this source).
#: Said here so ``evlog offsets`` and ``evlog status`` count them without importing Dream and its extractor
#: (~0.3 s); tests/test_status.py checks it agrees with ``processors.dream._is_input``.
DREAM_NOTE_SOURCE = "remember"


def is_dream_input(ev: Any) -> bool:
    """Whether Dream learns from this event (a message, or a note given with ``evlog remember``)."""
    return ev.type == "message.appended" or (ev.type == "history.appended" and
                                             getattr(ev, "source", None) == DREAM_NOTE_SOURCE)


def _snapshot(ws: Workspace, **_: Any) -> Any:
    from processors.runner import run_log_processor
    from processors.snapshot import Snapshot

    return run_log_processor(ws, Snapshot())


def _digest(ws: Workspace, **_: Any) -> Any:
    from processors.digest import run_digest

    return run_digest(ws)


def _archive(ws: Workspace, **_: Any) -> Any:
    from processors.archive import run_archive

    return run_archive(ws)


def _consolidate(ws: Workspace, *, llm: Any, key: str | None = None, **_: Any) -> Any:
    from processors.consolidator import run_consolidate

    return run_consolidate(ws, llm, key)


def _autocompact(ws: Workspace, *, llm: Any, **_: Any) -> Any:
    from processors.autocompact import run_autocompact

    return run_autocompact(ws, llm, idle_minutes=ws.config.idle_minutes)


def _dream(ws: Workspace, *, llm: Any, retry_failed: bool = False, **_: Any) -> Any:
    from processors.dream import run_dream

    return run_dream(ws, llm, retry_failed=retry_failed)


def _recall(ws: Workspace, **_: Any) -> Any:
    from projections.recall.workspace import update

    report = RecallReport()
    ix = update(ws.home, ws=ws)
    try:
        report.seq = ix.seq
    finally:
        ix.close()
    return report


@dataclass
class RecallReport:
    """What catching the recall index up did."""

    processor: str = "recall"
    seq: int = 0


PROCESSORS: dict[str, Callable[..., Any]] = {
    "snapshot": _snapshot,
    "digest": _digest,
    "archive": _archive,
    "consolidate": _consolidate,
    "autocompact": _autocompact,
    "dream": _dream,
    "recall": _recall,
}


def run(ws: Workspace, name: str, *, llm: Any = None, **options: Any) -> Any:
    """Run one processor by name over a writable workspace (``llm`` for those that need one)."""
    try:
        fn = PROCESSORS[name]
    except KeyError:
        raise ConfigError(f"unknown processor {name!r}; choose one of {', '.join(PROCESSORS)}") from None
    if llm is None and name in ("consolidate", "autocompact", "dream"):
        from processors.llm.providers import llm_for

        llm = llm_for(ws)
    return fn(ws, llm=llm, **options)


@dataclass
class OffsetRow:
    """One line of ``evlog offsets``: a processor's position, lag and recorded losses.

    ``lag`` is the work still to do: the input events after the offset for a processor whose
    inputs are known (snapshot, digest, dream), else every event after it; ``behind`` is
    always the number of log events after the offset (most are not the processor's input).
    """

    processor: str
    seq: int
    lag: int
    committed_at: str
    resets: int
    lost_bytes: int
    lost_records: int
    detail: str = ""
    behind: int = 0


def offsets(ws: Workspace) -> list[OffsetRow]:
    """Every processor's position, lag behind the log end and recorded losses (one row each)."""
    state = ws.offsets.s
    last = ws.log.last_seq
    rows = []
    for name in sorted(set(state.processors) | set(LOG_INPUTS) | {"dream"}):
        p = state.processors.get(name)
        if name.startswith("sync.") and p is not None and not p.seq:  # refused sync rows (offset.reset, policy "rejected")
            rows.append(OffsetRow(name, 0, 0, "", p.resets, p.lost_bytes, p.lost_records,
                                  f"{p.lost_records} row(s) refused; see 'evlog sync status'"))
            continue
        seq = p.seq if p else 0
        if name == "dream":
            lag, detail = _dream_pending(ws)
        elif name in LOG_INPUTS:
            lag = sum(1 for e in ws.log.read(seq + 1) if e.type in LOG_INPUTS[name])
            detail = f"{lag} input event(s) pending"
        else:
            lag, detail = last - seq, ""
        rows.append(OffsetRow(name, seq, lag, p.committed_at if p else "", p.resets if p else 0,
                              p.lost_bytes if p else 0, p.lost_records if p else 0, detail, behind=last - seq))
    return rows


#: Log records ``evlog offsets`` looks at after Dream's offset (as Dream does to plan one call).
DREAM_SCAN_RECORDS = 100_000


def _dream_pending(ws: Workspace) -> tuple[int, str]:
    """Dream's inputs after its offset not yet claimed by a call (a bounded look), and its failed runs, in words."""
    with ws.lock:
        pos = ws.offsets.position("dream").seq
        claimed = set(ws.dream_runs.s.claimed)
        pending = sum(1 for rec in ws.log.records(pos + 1, until_seq=pos + DREAM_SCAN_RECORDS)
                      if is_dream_input(rec.event) and rec.seq not in claimed)
    failed = sum(1 for r in ws.dream_runs.s.runs.values() if r.failed)
    detail = f"{pending} input(s) pending" + (f"; {failed} failed run(s): 'evlog run dream --retry-failed'"
                                              if failed else "")
    return pending, detail
