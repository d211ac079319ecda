"""Digest: diary lines -> short-term memory entries, a log follower like every other.

The digest reads diary events (``diary.appended``, one line each, and ``diary.lines``,
many) from its committed offset (the runner in
``processors.runner`` validates it and commits it with the outputs, atomically). It never
reads the rendered diary file: each event carries its session, message id and role, so
a session key or role holding a newline or ``]`` cannot make it misread a line, and a
diary trim (which shortens the file, not the log) never takes a line from it.

Lines are grouped per day, in log order, into entries of at most ``digest_batch_bytes``
(50 KB) of diary text; a day's remaining lines become an entry at the end of each step.
Each entry is one ``memory.stm.added`` event: its text is the entry's lines, whole, as
many as fit in ``STM_CHARS`` (a single longer line is cut at a word boundary and marked
with ``…``), the sessions it covers and the seqs of the messages its lines came from
(facts that cite those messages make the archive keep it). Its ``entry_id`` is derived
from its first line's place in the log (``stm-<date>-<seq>``, plus ``.<index>`` when that
line is not the first of a ``diary.lines`` event) and carries a dedup key, so a re-read
after an offset reset adds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eventlog.events import DiaryAppended, DiaryLines, Event, StmAdded
from processors.runner import Processor, RunReport
from projections.diary import diary_items

if TYPE_CHECKING:
    from processors.context import Context

STM_CHARS = 4000
STEP_LINES = 5_000  # lines of diary.lines events per step (as many as one step of diary.appended events holds at most)


@dataclass
class _Batch:
    first_seq: int
    first_index: int = 0  # the first line's index in its diary.lines event
    lines: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    message_seqs: list[int] = field(default_factory=list)
    nbytes: int = 0
    last_seq: int = 0


def cut_at_word(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its longest prefix ending at a word boundary, plus ``…``."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def entry_text(lines: list[str], limit: int = STM_CHARS) -> str:
    """Whole lines while they fit in ``limit`` characters (the first one cut at a word if it alone is longer)."""
    out: list[str] = []
    used = 0
    for ln in lines:
        need = len(ln) + (1 if out else 0)
        if used + need > limit:
            if not out:
                out.append(cut_at_word(ln, limit))
            break
        out.append(ln)
        used += need
    return "\n".join(out)


class Digest(Processor):
    """Diary lines to short-term entries (see the module docstring)."""

    name = "digest"
    consumes = frozenset({"diary.appended", "diary.lines"})
    reset_policy = "earliest"  # safe: every entry carries a dedup key

    def begin(self, ws: Context, report: RunReport) -> None:
        self.limit = ws.config.digest_batch_bytes
        self.open: dict[str, _Batch] = {}
        self.step_lines = 0  # lines of diary.lines events read in this step

    def step_full(self) -> bool:
        return self.step_lines >= STEP_LINES

    def policy(self, ev: Event) -> list[Event]:
        assert isinstance(ev, DiaryAppended | DiaryLines)
        out: list[Event] = []
        if isinstance(ev, DiaryLines):
            self.step_lines += len(ev.lines)
        for i, item in enumerate(diary_items(ev)):
            self._line(out, ev.date, ev.seq, i, item.line, item.session_key, item.source_seq)
        return out

    def _line(self, out: list[Event], date: str, seq: int, index: int, line: str, session_key: str,
              source_seq: int) -> None:
        """Add one diary line (line ``index`` of event ``seq``) to its day's entry, closing the entry first if full."""
        size = len(line.encode()) + 1
        batch = self.open.get(date)
        if batch is not None and batch.nbytes + size > self.limit:
            out.append(self._entry(date, batch))
            batch = None
        if batch is None:
            batch = self.open[date] = _Batch(first_seq=seq, first_index=index)
        batch.lines.append(line)
        batch.nbytes += size
        batch.last_seq = seq
        if session_key and session_key not in batch.sessions:
            batch.sessions.append(session_key)
        if source_seq:
            batch.message_seqs.append(source_seq)

    def first_seq(self, ws: Context) -> int:
        # a log from before the digest followed events: it had read every diary line appended before its last run
        return max(ws.log.log_start, ws.offsets.s.last_digested_seq + 1)

    def end_step(self) -> list[Event]:
        out: list[Event] = [self._entry(date, batch) for date, batch in sorted(self.open.items())]
        self.open = {}
        self.step_lines = 0
        return out

    def _entry(self, date: str, batch: _Batch) -> StmAdded:
        self.open.pop(date, None)
        entry_id = f"stm-{date}-{batch.first_seq}" + (f".{batch.first_index}" if batch.first_index else "")
        return StmAdded(entry_id=entry_id, text=entry_text(batch.lines), date=date, start=batch.first_seq,
                        end=batch.last_seq, session_keys=batch.sessions, message_seqs=batch.message_seqs,
                        dedup=f"digest:{entry_id}")


def run_digest(ws: Context) -> RunReport:
    """Digest every diary line appended since the last run."""
    from processors.runner import run_log_processor

    return run_log_processor(ws, Digest())
