"""Selecting events from the log: the filters ``evlog tail`` and ``evlog audit`` share.

Filters are plain predicates over events, so library users get exactly what the command
line shows. ``last_events`` finds the newest N matches; ``matching`` streams matches
from a seq on; ``follow_matching`` keeps streaming as the log grows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from eventlog.events import Event
from eventlog.log import Log, Record


@dataclass(frozen=True)
class EventFilter:
    """Which events to show: types (exact, or ``prefix.*``) and a session key."""

    types: tuple[str, ...] = ()
    session_key: str | None = None

    @property
    def empty(self) -> bool:
        """True when the filter lets every event through."""
        return not self.types and self.session_key is None

    def __call__(self, ev: Event) -> bool:
        if self.types and not any(_type_matches(ev.type, t) for t in self.types):
            return False
        return self.session_key is None or getattr(ev, "session_key", None) == self.session_key


def _type_matches(tag: str, pattern: str) -> bool:
    if pattern.endswith(".*"):
        return tag.startswith(pattern[:-1])
    return tag == pattern


def matching(log: Log, from_seq: int, flt: EventFilter) -> Iterator[Record]:
    """Records from ``from_seq`` on that pass ``flt``."""
    for rec in log.records(from_seq):
        if flt.empty or flt(rec.event):
            yield rec


def last_events(log: Log, n: int, flt: EventFilter) -> tuple[list[Record], int]:
    """The newest ``n`` records passing ``flt`` (all if ``n == 0``) and the seq to follow from."""
    end = log.last_seq
    if n and flt.empty:
        return list(log.records(max(end - n + 1, 1), until_seq=end)), end + 1
    keep: Iterable[Record]
    keep = deque(maxlen=n) if n else []
    for rec in matching(log, 1, flt):
        if rec.seq > end:
            break
        keep.append(rec)
    return list(keep), end + 1


def follow_matching(
    log: Log,
    from_seq: int,
    flt: EventFilter,
    *,
    stop: Callable[[], bool] | None = None,
    on_notice: Callable[[str], None] | None = None,
    on_idle: Callable[[], None] | None = None,
    poll_interval: float = 0.01,
) -> Iterator[Record]:
    """Records from ``from_seq`` on that pass ``flt``, waiting for new ones until ``stop()`` (``on_idle``: before each wait)."""
    for rec in log.follow(from_seq, stop=stop, on_notice=on_notice, on_idle=on_idle, poll_interval=poll_interval):
        if flt.empty or flt(rec.event):
            yield rec


# --- resumable positions (tail --cursor-file) -----------------------------------------


def read_cursor(path: str) -> tuple[int, str] | None:
    """The (seq, fingerprint) saved in a cursor file, or None if there is none yet."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read().split()
    except FileNotFoundError:
        return None
    if len(text) != 2 or not text[0].isdigit():
        from eventlog.errors import ConfigError

        raise ConfigError(f"{path} is not an evlog cursor file (expected '<seq> <fingerprint>')")
    return int(text[0]), text[1]


def write_cursor(path: str, rec: Record) -> None:
    """Save the position after ``rec`` (atomically: the file is old or new, never torn)."""
    from eventlog.fsio import OS_FS

    OS_FS.atomic_write(path, f"{rec.seq} {rec.fingerprint}\n".encode(), sync=False)


def resume_after(log: Log, cursor: tuple[int, str]) -> tuple[int, str | None]:
    """The seq to continue from after a saved cursor, and a notice if the log changed under it.

    If the record at the cursor is gone or different, recovery cut the log there and it
    grew again: the new events from the cut on were never emitted, so resume at the cut
    (a ``log.recovered`` event's own seq is the first seq after its cut).
    """
    seq, fp = cursor
    rec = log.find(seq)
    if rec is not None and rec.fingerprint == fp:
        return seq + 1, None
    cut = None
    for r in matching(log, 1, EventFilter(types=("log.recovered",))):
        if r.seq <= seq:
            cut = r.seq
    resume = cut if cut is not None else min(seq + 1, log.last_seq + 1)
    return resume, f"the event at cursor seq {seq} is no longer the one emitted before (the log was cut); resuming at seq {resume}"
