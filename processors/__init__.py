"""Processors: background jobs that read the log and write their results back as events.

``runner.py`` runs log processors from validated offsets (outputs and the offset in one
atomic batch); ``snapshot.py`` (messages -> diary), ``digest.py`` (diary -> short-term
memory and Dream's history), ``archive.py`` (short-term -> long-term memory),
``consolidator.py`` (old messages -> summaries in history), ``autocompact.py`` (which
sessions to consolidate, with backoff), ``dream.py`` (history -> facts in MEMORY.md,
the LLM interface beside it in ``llm/``), ``audit.py`` (explaining Dream) and
``daemon.py`` (all of them on schedules). Each job is declared once in ``registry.py``
(built-ins in ``builtins.py``, registered as a plugin would be); processors receive the
narrow ``context.Context``, not the workspace. ``run`` is the one entry point the command
line and the daemon use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from eventlog.errors import ConfigError
from processors import registry
from processors.registry import Report, RunOptions

if TYPE_CHECKING:
    from eventlog.events import Event
    from processors.context import Context
    from processors.llm import LLM

#: Dream's inputs: every message, and the notes of ``evlog remember`` (``history.appended`` with this source).
#: Said here so ``evlog offsets`` and ``evlog status`` count them without importing Dream and its extractor
#: (~0.3 s); tests/app/test_status.py checks it agrees with ``processors.dream._is_input``.
DREAM_NOTE_SOURCE = "remember"


def is_dream_input(ev: Event) -> bool:
    """Whether Dream learns from this event (a message, or a note given with ``evlog remember``)."""
    return ev.type == "message.appended" or (ev.type == "history.appended" and
                                             getattr(ev, "source", None) == DREAM_NOTE_SOURCE)


def run(ctx: Context, name: str, *, llm: LLM | None = None, key: str | None = None,
        retry_failed: bool = False, max_calls: int | None = None) -> Report:
    """Run the registered job ``name`` once over a writable workspace (``llm`` for one that needs a model).

    A job that needs a model and gets none runs with ``processors.llm.make_llm()`` (the
    best one available). Its report has ``failed`` and ``summary()`` (``registry.Report``).
    """
    job = registry.get(name)
    if job.run is None:
        raise ConfigError(f"{name!r} is supplied by the daemon's caller ('evlog daemon'); it cannot run on its own")
    if llm is None and job.needs_model:
        from processors.llm.providers import llm_for

        llm = llm_for(ctx)
    return job.run(ctx, RunOptions(llm=llm, key=key, retry_failed=retry_failed, max_calls=max_calls))


@dataclass
class OffsetRow:
    """One line of ``evlog offsets``: a processor's position, lag and recorded losses.

    ``lag`` is the work still to do: the input events after the offset for a processor whose
    inputs are known (snapshot, digest, dream; counted in a bounded look, the next
    ``LAG_SCAN_RECORDS`` records, so a lower bound beyond them, as ``detail`` says), else
    every event after it; ``behind`` is always the number of log events after the offset
    (most are not the processor's input).
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


def offsets(ws: Context) -> list[OffsetRow]:
    """Every processor's position, lag behind the log end and recorded losses (one row each)."""
    state = ws.offsets.s
    last = ws.log.last_seq
    inputs = registry.log_inputs()
    rows = []
    for name in sorted(set(state.processors) | set(inputs) | {"dream"}):
        p = state.processors.get(name)
        if name.startswith("sync.") and p is not None and not p.seq:  # refused sync rows (offset.reset, policy "rejected")
            rows.append(OffsetRow(name, 0, 0, "", p.resets, p.lost_bytes, p.lost_records,
                                  f"{p.lost_records} row(s) refused; see 'evlog sync status'"))
            continue
        seq = p.seq if p else 0
        if name == "dream":
            lag, detail = _dream_pending(ws)
        elif name in inputs:
            lag, detail = _inputs_pending(ws, seq, last, inputs[name])
        else:
            lag, detail = last - seq, ""
        rows.append(OffsetRow(name, seq, lag, p.committed_at if p else "", p.resets if p else 0,
                              p.lost_bytes if p else 0, p.lost_records if p else 0, detail, behind=last - seq))
    return rows


#: Log records ``evlog offsets`` looks at after Dream's offset (as Dream does to plan one call).
DREAM_SCAN_RECORDS = 100_000
#: Log records ``evlog offsets`` (and ``evlog status``) read after a processor's offset to count its
#: pending inputs: a processor that never ran on a log of 10M events would otherwise cost a read of it all.
LAG_SCAN_RECORDS = 10_000


def _inputs_pending(ws: Context, seq: int, last: int, types: frozenset[str]) -> tuple[int, str]:
    """The input events after ``seq`` (a bounded look: the next ``LAG_SCAN_RECORDS`` records), in words."""
    until = seq + LAG_SCAN_RECORDS
    lag = sum(1 for e in ws.log.read(seq + 1, until_seq=until) if e.type in types)
    if last <= until:
        return lag, f"{lag} input event(s) pending"
    return lag, f"at least {lag} input event(s) pending (in the next {LAG_SCAN_RECORDS:,} of {last - seq:,} events)"


def _dream_pending(ws: Context) -> tuple[int, str]:
    """Dream's inputs after its offset not yet claimed by a call (a bounded look: ``LAG_SCAN_RECORDS``), and its
    failed runs, in words."""
    look = min(DREAM_SCAN_RECORDS, LAG_SCAN_RECORDS)  # status's bound: Dream's own window is 10x this
    with ws.lock:
        pos = ws.offsets.position("dream").seq
        claimed = set(ws.dream_runs.s.claimed)
        pending = sum(1 for ev in ws.log.read(pos + 1, until_seq=pos + look)
                      if is_dream_input(ev) and ev.seq not in claimed)
        beyond = ws.log.last_seq - pos > look
    failed = sum(1 for r in ws.dream_runs.s.runs.values() if r.failed)
    detail = (f"at least {pending} input(s) pending (in the next {look:,} events)" if beyond
              else f"{pending} input(s) pending")
    detail += f"; {failed} failed run(s): 'evlog run dream --retry-failed'" if failed else ""
    return pending, detail
