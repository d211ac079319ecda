"""Catching up: what other writers appended since this writer's last turn, read once from disk.

Each turn starts by catching up: one ``fstat`` of the active segment tells whether
anything changed (size, or the read-only mark a roll sets); if so ``plan_catch_up`` scans
the new bytes (of the active segment from where this writer stopped, and of any segment
rolled to since) for their seqs, dedup keys, index positions and last ``ts``. So seqs
stay dense, dedup holds across processes, an expected-version check sees the true end,
and ``ts`` never goes backwards across writers. It only reads; the writer applies it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from eventlog.errors import CorruptionError
from eventlog.reader import LogReader
from eventlog.segments import ScanResult, scan_segment, segment_bases, segment_name


@dataclass(frozen=True)
class CatchUp:
    """What the log holds beyond this writer's view: ``reload`` (start over), or scans in segment order."""

    reload: bool = False  # the log changed in a way appends cannot explain (a repair, a restore, an erasure)
    scans: list[ScanResult] = field(default_factory=list)  # the active segment's new bytes, then newer segments


def plan_catch_up(reader: LogReader, *, base: int, size: int, next_seq: int, next_mark: int,
                  replaced: bool) -> CatchUp:
    """Scan what was appended after byte ``size`` (holding ``next_seq``) of segment ``base`` and in later segments.

    ``replaced``: the active path no longer is the file this writer has open. Raises
    ``CorruptionError`` when a segment is missing or a sealed one is damaged.
    """
    bases = segment_bases(reader.dir)
    path = reader.seg_path(base)
    if base not in bases or replaced or os.path.getsize(path) < size:
        return CatchUp(reload=True)
    newer = bases[bases.index(base) :]
    scans = []
    for k, b in enumerate(newer):
        if b == base:
            res = scan_segment(path, b, start=size, start_seq=next_seq, index_from=next_mark)
        else:
            if b != next_seq:
                raise CorruptionError(f"segment {segment_name(b)} starts at seq {b} but seq {next_seq} "
                                      "was expected: a segment is missing; run 'evlog verify'",
                                      segment=segment_name(b), seq=next_seq)
            res = scan_segment(reader.seg_path(b), b)
        if k < len(newer) - 1 and (res.damage is not None or res.valid_end != res.size):
            seg = segment_name(b)
            raise CorruptionError(f"sealed segment {seg} is damaged at byte {res.valid_end}; run 'evlog verify'",
                                  segment=seg, offset=res.valid_end, seq=res.next_seq)
        scans.append(res)
        next_seq = res.next_seq
    return CatchUp(scans=scans)
