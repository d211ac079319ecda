"""The dedup index of a writer: which dedup key the log holds, at which seq, and its checkpoint file.

Events carrying a ``dedup`` key are written once: appending a known key returns the first
event's seq and writes nothing. ``DedupIndex`` owns the in-memory ``HashIndex`` (24 bytes
a key) and ``log/dedup.idx``, a disposable checkpoint of it: a header line (the seq it
covers, that record's fingerprint, the xxh3-64 of the body) and the index's file form.
On open the checkpoint is used when it matches the log (same fingerprint at its seq),
else rebuilt; then the records after it are scanned. It is saved at segment rolls
(at most every ``DEDUP_SAVE_INTERVAL``) and at close when it is far behind.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_right
from collections.abc import Callable

import msgspec

from eventlog import codec
from eventlog.codec import hash_key
from eventlog.errors import CorruptionError
from eventlog.fsio import FileSystem
from eventlog.hashindex import HashIndex
from eventlog.reader import LogReader
from eventlog.segments import iter_lines, segment_bases, segment_name

DEDUP_FILE = "dedup.idx"
DEDUP_SAVE_INTERVAL = 30.0  # seconds between dedup checkpoints written at segment rolls
DEDUP_STALE_OK = 10_000  # a close leaves the checkpoint this many records behind (the next open scans them)


class DedupIndex:
    """Dedup keys (hashed, ``codec.hash_key``) to the seq that first carried them, with their checkpoint."""

    def __init__(self, reader: LogReader, fs: FileSystem) -> None:
        self.reader = reader
        self.fs = fs
        self.path = os.path.join(reader.dir, DEDUP_FILE)
        self.saved_at = 0.0  # monotonic time of the last checkpoint this writer wrote
        self.file_seq = -1  # the seq the checkpoint on disk covers, as far as we know (-1: none)
        self.keys = HashIndex()
        self.get: Callable[[int], int | None] = self.keys.get  # bound once: the append path calls it
        self.add: Callable[[int, int], int | None] = self.keys.add

    def reset(self, keys: HashIndex | None = None) -> None:
        """Forget every key (or start from ``keys``): the log is being loaded again."""
        self.keys = keys if keys is not None else HashIndex()
        self.get = self.keys.get
        self.add = self.keys.add

    def add_key(self, key: str, seq: int) -> None:
        """Remember that ``seq`` carries dedup key ``key``."""
        self.keys.add(hash_key(key), seq)

    def load(self, next_seq: int, active_base: int, active_keys: list[tuple[str, int]]) -> None:
        """Load the checkpoint if it matches the log, else start empty; then read the keys of the records after it.

        ``active_keys`` are the active segment's keys, which recovery just scanned.
        """
        self.reset()
        start = self.reader.log_start
        checkpoint = self._read_checkpoint(next_seq)
        if checkpoint is not None:
            seq, keys = checkpoint
            self.reset(keys)
            start = seq + 1
            self.file_seq = seq
        for base, pos in self._positions_from(start, next_seq):
            if base == active_base:  # recovery just scanned it: use what it found
                for key, seq in active_keys:
                    if seq >= start:
                        self.add_key(key, seq)
                continue
            self._scan_sealed(base, pos)

    def _read_checkpoint(self, next_seq: int) -> tuple[int, HashIndex] | None:
        """(the seq it covers, its keys) if the checkpoint file is intact and matches the log, else None."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
            head, _, body = data.partition(b"\n")
            meta = msgspec.json.decode(head)
            seq, fp = int(meta["seq"]), str(meta["fingerprint"])
            intact = meta.get("body") == "xxh3-64:" + codec._xxh64_hex(body)  # noqa: SLF001 - the checksum of the keys
            if intact and (seq == 0 or (seq < next_seq and self._fingerprint_at(seq) == fp)):
                return seq, HashIndex.from_bytes(body)
        except (OSError, ValueError, KeyError, TypeError, msgspec.DecodeError):
            pass
        return None

    def _scan_sealed(self, base: int, pos: int) -> None:
        for p, line in iter_lines(self.reader.seg_path(base), pos):
            if not codec.checksum_ok(line):  # a sealed segment damaged since it was written
                seg = segment_name(base)
                raise CorruptionError(f"sealed segment {seg} is damaged at byte {p}; run 'evlog verify'",
                                      segment=seg, offset=p)
            fr = codec.FRAME_DECODER.decode(line)
            for key in fr.all_keys():
                self.keys.add(hash_key(key), fr.seq)

    def _fingerprint_at(self, seq: int) -> str | None:
        rec = self.reader.find(seq)
        return rec.fingerprint if rec else None

    def _positions_from(self, seq: int, next_seq: int) -> list[tuple[int, int]]:
        """(segment base, byte position) pairs to scan to read every record from ``seq`` on."""
        if seq >= next_seq:
            return []
        bases = segment_bases(self.reader.dir)
        i = max(bisect_right(bases, seq) - 1, 0)
        base = bases[i]
        pos, _at = self.reader.locate(base, seq)
        return [(base, pos)] + [(b, 0) for b in bases[i + 1 :]]

    def due(self) -> bool:
        """True when the last checkpoint this writer wrote is older than ``DEDUP_SAVE_INTERVAL``."""
        return time.monotonic() - self.saved_at > DEDUP_SAVE_INTERVAL

    def stale(self, last_seq: int, stale_ok: int = DEDUP_STALE_OK) -> bool:
        """True when the checkpoint on disk is missing or more than ``stale_ok`` records behind."""
        return self.file_seq < 0 or last_seq - self.file_seq > stale_ok

    def save(self, last_seq: int) -> None:
        """Write the checkpoint covering the log up to ``last_seq`` (not synced: it is disposable)."""
        body = self.keys.to_bytes()
        head = msgspec.json.encode({"seq": last_seq, "fingerprint": self._fingerprint_at(last_seq) if last_seq else "",
                                    "body": "xxh3-64:" + codec._xxh64_hex(body)})  # noqa: SLF001
        self.fs.atomic_write(self.path, head + b"\n" + body, sync=False)
        self.saved_at = time.monotonic()
        self.file_seq = last_seq

    def save_quietly(self, last_seq: int) -> None:
        """``save``, ignoring a failure: the checkpoint is rebuilt from the log on next open."""
        try:
            self.save(last_seq)
        except OSError:
            pass
