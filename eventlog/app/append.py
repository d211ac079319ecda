"""Appending NDJSON input (``evlog append``): streamed, in atomic batches of bounded size.

Input is read and validated line by line (``eventlog.ndjson``) and appended in atomic
batches of at most ``BATCH_EVENTS`` events or ``BATCH_BYTES`` bytes of input, so memory
stays bounded whatever the input's size. A bad line stops the append: batches before it
are in the log (the error says which lines and seqs), nothing from the bad line's batch
on is. ``atomic=True`` appends the whole input as ONE batch (all of it survives a crash,
or none) up to ``ATOMIC_LIMIT_BYTES`` of input; a larger input is refused before anything
is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eventlog.errors import ConfigError, InvalidEventError
from eventlog.events import Event
from eventlog.ndjson import iter_events

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace

BATCH_EVENTS = 10_000
BATCH_BYTES = 8 << 20
ATOMIC_LIMIT_BYTES = 64 << 20


@dataclass
class AppendResult:
    """What an append did."""

    appended: int = 0
    duplicates: int = 0
    first_seq: int | None = None
    last_seq: int | None = None
    batches: int = 0
    lines: int = 0


def append_ndjson(ws: Workspace, lines: Iterable[bytes], source: str, *, atomic: bool = False,
                  any_type: bool = False) -> AppendResult:
    """Append NDJSON event lines (see the module docstring); returns what was appended."""
    result = AppendResult()
    batch: list[Event] = []
    size = 0
    first_line = 1
    ws.catch_up()  # built once: each batch is folded in memory, never read back

    def commit() -> None:
        nonlocal batch, size
        if not batch:
            return
        before = ws.log.last_seq
        seqs = ws.append(batch)
        new = [s for s in seqs if s > before]
        result.appended += len(new)
        result.duplicates += len(seqs) - len(new)
        if new:
            result.first_seq = result.first_seq or new[0]
            result.last_seq = new[-1]
        result.batches += 1
        batch, size = [], 0

    try:
        for lineno, nbytes, ev in iter_events(lines, source, any_type=any_type):
            if not batch:
                first_line = lineno
            batch.append(ev)
            size += nbytes
            result.lines = lineno
            if atomic:
                if size > ATOMIC_LIMIT_BYTES:
                    raise ConfigError(f"{source}: --atomic takes at most {ATOMIC_LIMIT_BYTES >> 20} MiB of input in one "
                                      f"batch (line {lineno} passes it); nothing was appended. Append without --atomic "
                                      "(batches of bounded size) or split the input")
            elif len(batch) >= BATCH_EVENTS or size >= BATCH_BYTES:
                commit()
    except InvalidEventError as e:
        if result.batches:
            span = f"seq {result.first_seq}..{result.last_seq}" if result.first_seq else "all duplicates"
            raise InvalidEventError(f"{e} (lines 1..{first_line - 1} were appended in {result.batches} batch(es), {span}; "
                                    f"nothing from line {first_line} on was: fix the line and append the rest, "
                                    f"e.g. tail -n +{first_line})", source=e.source, line=e.line, field=e.field) from None
        raise
    commit()
    return result
