"""The processor runner: read the log from a validated offset, write outputs + offset atomically.

A log processor is a policy from input events to output events (``Processor``). The
runner reads the records after the processor's committed offset, asks the policy for
outputs, and appends the outputs together with an ``offset.committed`` event as ONE
atomic batch: after a crash either both are in the log or neither is, so a step is never
half-applied, and a rerun resumes after the last committed record and never applies a
step twice. A run stops at the log's end as it was when the run started (its own
outputs come after that and are not its input).

An offset is the last consumed record's seq, segment file, end position and checksum.
Before it is trusted it is validated (``validate_offset``): the segment must exist and
reach the position, the position must sit right after a newline, and the line ending
there must carry the committed seq and checksum. File size alone is not enough: a file
cut and regrown passes a size check. An offset that does not hold is found again by seq
(same record elsewhere: resume after it) or, if that record is gone or different, moved
by the processor's policy: ``earliest`` (re-read from the start: safe for idempotent
processors), ``latest`` (skip to the end) or ``error``. Every such move is recorded as
an ``offset.reset`` event with its reason; nothing is guessed silently.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from eventlog.errors import OffsetInvalidError
from eventlog.events import Event, OffsetCommitted, OffsetReset
from eventlog.segments import segment_name

if TYPE_CHECKING:
    from processors.context import Context

STEP_RECORDS = 5_000  # records read per atomic step
IDLE_COMMIT_RECORDS = 50_000  # commit even without outputs when this many records were skipped


@dataclass
class RunReport:
    """What one run of a processor did (``evlog run ... --json`` prints it)."""

    processor: str
    events_read: int = 0
    events_consumed: int = 0
    entries_written: int = 0
    duplicates_skipped: int = 0
    bytes_trimmed: int = 0
    lost_bytes: int = 0
    offset_before: int = 0
    offset_after: int = 0
    resets: list[str] = field(default_factory=list)
    outputs: dict[str, int] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """Never: a step that cannot be done raises, and nothing of it is written."""
        return False

    def summary(self) -> str:
        """One line for the daemon's log."""
        return (f"read {self.events_read}, wrote {self.entries_written}, duplicates {self.duplicates_skipped}, "
                f"trimmed {self.bytes_trimmed} B" + (f", resets {len(self.resets)}" if self.resets else ""))

    def count(self, events: list[Event]) -> None:
        """Add a step's outputs to the per-type counts."""
        c = Counter(e.type for e in events)
        for k, v in c.items():
            self.outputs[k] = self.outputs.get(k, 0) + v


class Processor(ABC):
    """A policy from input events to output events, run by ``run_log_processor``."""

    name: ClassVar[str]
    consumes: ClassVar[frozenset[str]]
    reset_policy: ClassVar[str] = "earliest"

    def begin(self, ws: Context, report: RunReport) -> None:  # noqa: B027 - optional hook
        """Called once per run before the first step."""

    def first_seq(self, ws: Context) -> int:
        """Where a processor that never committed an offset starts (the log's start; older logs may know better)."""
        return ws.log.log_start

    @abstractmethod
    def policy(self, ev: Event) -> list[Event]:
        """Outputs for one consumed event (it carries its ``seq``)."""

    def end_step(self) -> list[Event]:
        """Outputs after a step's records (e.g. diary trims); called once per step."""
        return []

    def entries_in(self, outputs: list[Event]) -> int:
        """How many entries a step's outputs hold (``RunReport.entries_written``): one per event, unless an
        event carries many (the snapshot's ``diary.lines`` count their lines)."""
        return len(outputs)

    def step_full(self) -> bool:
        """True to end the step after the event just consumed (a processor whose inputs are large ones
        bounds a step's memory by its own measure, not only by ``STEP_RECORDS``)."""
        return False


def validate_offset(ws: Context, processor: str, policy: str, first: int | None = None) -> tuple[int, OffsetReset | None]:
    """The seq to read from next, and the reset to record if the committed offset did not hold."""
    pos = ws.offsets.position(processor)
    log = ws.log
    if pos.seq == 0:
        return max(first or 0, log.log_start), None
    problem = _offset_problem(log.dir, pos.segment, pos.position, pos.seq, pos.fingerprint)
    if problem is None:
        return pos.seq + 1, None
    rec = log.find(pos.seq) if 0 < pos.seq < 2**63 else None
    if rec is not None and rec.fingerprint == pos.fingerprint:
        reset = OffsetReset(processor=processor, reason=f"{problem}; record seq {pos.seq} found at "
                            f"{segment_name(rec.segment)}:{rec.end}", policy="by-seq",
                            from_seq=pos.seq, to_seq=pos.seq + 1)
        return pos.seq + 1, reset
    why = f"{problem}; record seq {pos.seq} " + ("is gone" if rec is None else "is a different record")
    if policy == "error":
        raise OffsetInvalidError(f"offset of {processor} does not hold: {why}")
    to = log.log_start if policy == "earliest" else log.last_seq + 1
    from_seq = pos.seq if 0 <= pos.seq < 2**63 else 0  # a forged offset (an old log) cannot make the reset invalid
    return to, OffsetReset(processor=processor, reason=why, policy=policy, from_seq=from_seq, to_seq=to)


def _offset_problem(log_dir: str, segment: str, position: int, seq: int, fingerprint: str) -> str | None:
    """Why a committed offset does not hold on disk, or None if it does."""
    from eventlog import codec

    if segment_name(int(segment[:20])) != segment if segment[:20].isdigit() else True:
        return f"{segment!r} is not a segment file name"
    path = os.path.join(log_dir, segment)
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return f"segment {segment} does not exist"
    if position > size:
        return f"position {position} is past the end of {segment} ({size} bytes)"
    if position <= 0:
        return f"position {position} is not after a record"
    with open(path, "rb") as f:
        start = max(0, position - 65536)
        f.seek(start)
        chunk = f.read(position - start)
    if not chunk.endswith(b"\n"):
        return f"position {position} of {segment} is not at a line boundary"
    line = chunk[chunk.rfind(b"\n", 0, len(chunk) - 1) + 1 :]
    if not codec.checksum_ok(line):
        return f"the line ending at {segment}:{position} is not an intact record"
    fr = codec.FRAME_DECODER.decode(line)
    if fr.seq != seq or codec.fingerprint(line) != fingerprint:
        return f"the record ending at {segment}:{position} is seq {fr.seq}, not the committed seq {seq}"
    return None


def run_log_processor(ws: Context, proc: Processor, *, step_records: int = STEP_RECORDS) -> RunReport:
    """Run ``proc`` over the records after its offset, up to the log's end at start.

    One instance of a processor runs at a time across processes (``Context.processor_lock``);
    the workspace's own lock is held for one step at a time, so the projection files keep
    being flushed and other threads keep appending while a long run goes on.
    """
    report = RunReport(proc.name)
    with ws.processor_lock(proc.name):
        with ws.lock:
            ws.catch_up()  # catch up with what every writer appended
            before = ws.offsets.position(proc.name).seq
            report.offset_before = before
            next_seq, reset = validate_offset(ws, proc.name, proc.reset_policy, proc.first_seq(ws))
            stop_at = ws.log.last_seq
            proc.begin(ws, report)
        pending: list[Event] = []
        if reset is not None:
            pending.append(reset)
            report.resets.append(reset.reason)
        while next_seq <= stop_at:
            with ws.lock:
                outputs: list[Event] = []
                last = None
                consumed = 0
                wanted = proc.consumes
                policy, full = proc.policy, proc.step_full
                for rec in ws.log.records(next_seq, until_seq=min(stop_at, next_seq + step_records - 1)):
                    last = rec
                    ev = rec.event
                    if ev.type in wanted:  # a class attribute (eventlog.events): no call per record
                        consumed += 1
                        outputs.extend(policy(ev))
                        if full():
                            break
                if last is None:
                    break
                outputs.extend(proc.end_step())
                report.events_read += last.seq - next_seq + 1
                report.events_consumed += consumed
                next_seq = last.seq + 1
                if not outputs and not consumed and not pending and report.events_read < IDLE_COMMIT_RECORDS:
                    continue  # nothing to do: do not grow the log with a bare offset
                commit = OffsetCommitted(processor=proc.name, record_seq=last.seq, segment=segment_name(last.segment),
                                         position=last.end, fingerprint=last.fingerprint)
                ws.append(pending + outputs + [commit])
                report.count(outputs)
                report.entries_written += proc.entries_in(outputs)
                pending = []
        with ws.lock:
            if pending:
                ws.append(pending)
            report.offset_after = ws.offsets.position(proc.name).seq
    return report


# --- followers that call a model: plan -> claim (with the offset) -> call -> record ------------------

W = TypeVar("W")  # one planned unit of work
Out = TypeVar("Out")  # what the call brought back
R = TypeVar("R")  # what one unit reports


@dataclass
class Claim(Generic[W]):
    """One planned unit: the events that claim it (appended, with the offset, before the call) and the work.

    ``work`` None: nothing here is input, only the offset moves (the run ends after appending it).
    """

    events: list[Event]
    work: W | None


class ModelFollower(ABC, Generic[W, Out, R]):
    """A follower whose step calls a model, run by ``run_model_follower`` in four phases.

    ``plan`` (under the context's lock, from the validated offset) picks the next unit and
    the events that claim it; the runner appends them in one batch *before* the call, so a
    crash during the call leaves a claimed, started unit (never one fed twice by accident);
    ``call`` runs outside the lock (a model call may take minutes); ``record`` (under the
    lock again) turns the outcome into the events the runner appends in one batch.
    """

    name: ClassVar[str]

    def begin(self, ctx: Context) -> None:  # noqa: B027 - optional hook
        """Called once per run, holding the processor lock, before the first plan."""

    @abstractmethod
    def plan(self, ctx: Context) -> Claim[W] | None:
        """The next unit to work on, or None when nothing is pending."""

    @abstractmethod
    def call(self, ctx: Context, work: W) -> Out:
        """Do the unit's model call(s)."""

    @abstractmethod
    def record(self, ctx: Context, work: W, outcome: Out) -> tuple[list[Event], R]:
        """The events recording the outcome (one atomic append) and what the unit reports."""


def run_model_follower(ctx: Context, follower: ModelFollower[W, Out, R], *, max_calls: int | None = None) -> list[R]:
    """Run ``follower`` until nothing is pending (or ``max_calls`` units); one report per unit."""
    done: list[R] = []
    with ctx.processor_lock(follower.name):
        follower.begin(ctx)
        while max_calls is None or len(done) < max_calls:
            with ctx.lock:
                claim = follower.plan(ctx)
                if claim is None:
                    break
                if claim.events:
                    ctx.append(claim.events)
            if claim.work is None:
                break
            outcome = follower.call(ctx, claim.work)
            with ctx.lock:
                events, result = follower.record(ctx, claim.work, outcome)
                if events:
                    ctx.append(events)
            done.append(result)
    return done
