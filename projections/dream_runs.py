"""Dream's own record: its cursor and every run, as ``evlog audit`` shows them.

Folds ``cursor.advanced`` (Dream claimed input entries, before calling the model; their
seqs stay in ``claimed`` until Dream's offset passes them), ``dream.started``,
``dream.completed``, ``dream.failed`` and Dream's ``offset.committed``. A run that started but has
neither completion nor failure was interrupted (the process died mid-call); it is listed
like a failed one, and both can be retried on purpose (``evlog run dream
--retry-failed``): a retry names the run it retries, which then counts as retried.
No files: this is state for the audit and for Dream itself.
"""

from __future__ import annotations

import msgspec

from eventlog.events import CursorAdvanced, DreamCompleted, DreamFailed, DreamStarted, Event, OffsetCommitted
from projections.base import StateProjection


class Run(msgspec.Struct, kw_only=True):
    """One Dream run."""

    run_id: str
    started_at: str = ""
    ended_at: str = ""
    llm: str = ""
    model: str = ""
    prompt_hash: str = ""
    project: str = ""
    input_cursors: list[int] = []
    status: str = "claimed"  # claimed, started, valid, fallback, noop, failed
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    fact_ids: list[str] = []
    reason: str = ""
    retry_of: str = ""
    retried_by: str = ""
    seq: int = 0

    @property
    def failed(self) -> bool:
        """Failed or interrupted (and not retried yet)."""
        return self.status in ("failed", "claimed", "started") and not self.retried_by


class DreamState(msgspec.Struct, kw_only=True):
    """Everything the projection keeps."""

    cursor: int = 0  # highest seq Dream claimed (in logs from before Dream followed messages: a history cursor)
    runs: dict[str, Run] = {}
    claimed: list[int] = []  # seqs claimed by a run, after Dream's committed offset


class DreamRunsProjection(StateProjection):
    """Dream's cursor and runs (see the module docstring)."""

    name = "dream_runs"
    consumes = frozenset({"cursor.advanced", "dream.started", "dream.completed", "dream.failed", "offset.committed"})
    state_type = DreamState
    s: DreamState

    def runs(self) -> list[Run]:
        """Every run, oldest first."""
        return sorted(self.s.runs.values(), key=lambda r: r.seq)

    def _run(self, run_id: str, seq: int) -> Run:
        run = self.s.runs.get(run_id)
        if run is None:
            run = self.s.runs[run_id] = Run(run_id=run_id, seq=seq)
        return run

    def apply(self, ev: Event) -> None:
        match ev:
            case CursorAdvanced() if ev.processor == "dream":
                self.s.cursor = max(self.s.cursor, ev.to_cursor)
                run = self._run(ev.run_id, ev.seq)
                run.input_cursors = list(ev.cursors)
                self.s.claimed = sorted(set(self.s.claimed).union(ev.cursors))
            case OffsetCommitted() if ev.processor == "dream":
                self.s.claimed = [c for c in self.s.claimed if c > ev.record_seq]
            case DreamStarted():
                run = self._run(ev.run_id, ev.seq)
                run.started_at, run.llm, run.model, run.prompt_hash = ev.ts, ev.llm, ev.model, ev.prompt_hash
                run.project, run.input_cursors, run.status, run.retry_of = ev.project, list(ev.input_cursors), "started", ev.retry_of
                if ev.retry_of and ev.retry_of in self.s.runs:
                    self.s.runs[ev.retry_of].retried_by = ev.run_id
                if ev.replica is not None:  # another device's Dream learned from these inputs: this one skips them
                    self.s.claimed = sorted(set(self.s.claimed).union(ev.input_cursors))
            case DreamCompleted():
                run = self._run(ev.run_id, ev.seq)
                run.ended_at, run.status, run.attempts = ev.ts, ev.outcome, ev.attempts
                run.input_tokens, run.output_tokens, run.fact_ids = ev.input_tokens, ev.output_tokens, list(ev.fact_ids)
                run.model = ev.model or run.model
                run.reason = "; ".join(ev.validation)
            case DreamFailed():
                run = self._run(ev.run_id, ev.seq)
                run.ended_at, run.status, run.attempts, run.reason = ev.ts, "failed", ev.attempts, ev.reason
                run.input_tokens, run.output_tokens = ev.input_tokens, ev.output_tokens
                run.model = ev.model or run.model
