"""The dedup index of a writer: which dedup key the log holds, at which seq, and its checkpoint file.

Events carrying a ``dedup`` key are written once: appending a known key returns the first
event's seq and writes nothing. ``DedupIndex`` owns the in-memory ``HashIndex`` (24 bytes
a key) and ``log/dedup.idx``, a disposable checkpoint of it: a header line (the seq it
covers, that record's fingerprint, the xxh3-64 of the body) and the index's file form.
On open the checkpoint is used when it matches the log (same fingerprint at its seq),
else rebuilt; then the records after it are scanned. It is saved at segment rolls
(at most every ``DEDUP_SAVE_INTERVAL``) and at close when it is far behind.

A writer loads the keys when it first needs them (``defer``): a lookup, an append that
carries a key, a save. Until then it keeps what it learns of the log (the active
segment's keys its recovery scan found, the keys of what other writers append) and
folds it in at the load. So a writer that never meets a key (the CLI's commands that
only write projection files, a reader of a 10M-event log: 240 MB of keys) never reads
the file. The load then uses the checkpoint the log matches *then* (another writer may
have saved a newer one), so it never scans more than an eager load would have.
"""

from __future__ import annotations

import os
import threading
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
DEFERRED_KEYS_MAX = 100_000  # keys others appended that a deferred index holds before it loads anyway


class _Deferred(msgspec.Struct):
    """What a writer learnt of the log before loading its keys (see ``DedupIndex.defer``)."""

    next_seq: int  # the writer's next seq when it deferred
    active_base: int  # the active segment then; its keys below were scanned by recovery
    active_keys: list[tuple[str, int]]
    later: list[tuple[int, int]] = []  # (hashed key, seq) of records appended by others since


class DedupIndex:
    """Dedup keys (hashed, ``codec.hash_key``) to the seq that first carried them, with their checkpoint."""

    def __init__(self, reader: LogReader, fs: FileSystem, next_seq: Callable[[], int] | None = None) -> None:
        self.reader = reader
        self.fs = fs
        self.path = os.path.join(reader.dir, DEDUP_FILE)
        self.saved_at = 0.0  # monotonic time of the last checkpoint this writer wrote
        self.file_seq = -1  # the seq the checkpoint on disk covers, as far as we know (-1: none)
        self.next_seq = next_seq  # the writer's next seq now (a deferred load needs it)
        self.deferred: _Deferred | None = None
        self._loading = threading.Lock()  # one deferred load at a time (a lookup may come from another thread)
        self.keys = HashIndex()
        self.get: Callable[[int], int | None] = self.keys.get  # bound once: the append path calls it
        self.add: Callable[[int, int], int | None] = self.keys.add

    def reset(self, keys: HashIndex | None = None) -> None:
        """Forget every key (or start from ``keys``): the log is being loaded again."""
        self.deferred = None
        self.keys = keys if keys is not None else HashIndex()
        self.get = self.keys.get
        self.add = self.keys.add

    def defer(self, next_seq: int, active_base: int, active_keys: list[tuple[str, int]]) -> None:
        """``load`` when the keys are first needed; until then remember the keys others append (``add``)."""
        if self.next_seq is None:
            raise ValueError("a deferred dedup index needs the writer's next_seq")
        self.reset()
        self.deferred = _Deferred(next_seq, active_base, list(active_keys))
        self.get = self._get_loading
        self.add = self._add_deferred

    def _get_loading(self, key: int) -> int | None:
        self.ensure_loaded()
        return self.keys.get(key)

    def _add_deferred(self, key: int, seq: int) -> int | None:
        d = self.deferred
        if d is None:
            return self.keys.add(key, seq)
        d.later.append((key, seq))
        if len(d.later) > DEFERRED_KEYS_MAX:
            self.ensure_loaded()  # bounded: a long-lived writer that never needs a key still holds few
        return None

    def ensure_loaded(self) -> None:
        """Load the keys now if ``defer`` put that off (a no-op otherwise).

        The keys are built aside and swapped in whole, so a failure (a damaged sealed segment:
        ``CorruptionError``) leaves the index deferred, and the next lookup tries again."""
        with self._loading:
            d = self.deferred
            if d is None:
                return
            assert self.next_seq is not None  # defer checked it
            keys, start, file_seq = self._keys_of_log(self.next_seq(), d.next_seq, d.active_base, d.active_keys)
            for key, seq in d.later:
                if seq >= start:
                    keys.add(key, seq)
            self.reset(keys)
            self.file_seq = file_seq

    def add_key(self, key: str, seq: int) -> None:
        """Remember that ``seq`` carries dedup key ``key``."""
        self.keys.add(hash_key(key), seq)

    def load(self, next_seq: int, active_base: int, active_keys: list[tuple[str, int]]) -> None:
        """Load the checkpoint if it matches the log, else start empty; then read the keys of the records after it.

        ``active_keys`` are the active segment's keys, which recovery just scanned.
        """
        self.reset()
        keys, _start, file_seq = self._keys_of_log(next_seq, next_seq, active_base, active_keys)
        self.reset(keys)
        if file_seq >= 0:
            self.file_seq = file_seq

    def _keys_of_log(self, end_seq: int, next_seq: int, active_base: int,
                     active_keys: list[tuple[str, int]]) -> tuple[HashIndex, int, int]:
        """(keys, the first seq not in the checkpoint, the checkpoint's seq or -1): the checkpoint if it matches
        the log before ``end_seq``, then the records from it to ``next_seq - 1`` (sealed segments read, the
        active one's keys given)."""
        keys = HashIndex()
        start, file_seq = self.reader.log_start, -1
        checkpoint = self._read_checkpoint(end_seq)
        if checkpoint is not None:
            file_seq, keys = checkpoint
            start = file_seq + 1
        for base, pos in self._positions_from(start, next_seq):
            if base == active_base:  # recovery just scanned it: use what it found
                for key, seq in active_keys:
                    if seq >= start:
                        keys.add(hash_key(key), seq)
                continue
            if base > active_base:
                break  # rolled to after ``next_seq`` was taken: their keys came through ``add``
            self._scan_sealed(base, pos, keys)
        return keys, start, file_seq

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

    def _scan_sealed(self, base: int, pos: int, keys: HashIndex) -> None:
        for p, line in iter_lines(self.reader.seg_path(base), pos):
            if not codec.checksum_ok(line):  # a sealed segment damaged since it was written
                seg = segment_name(base)
                raise CorruptionError(f"sealed segment {seg} is damaged at byte {p}; run 'evlog verify'",
                                      segment=seg, offset=p)
            fr = codec.FRAME_DECODER.decode(line)
            for key in fr.all_keys():
                keys.add(hash_key(key), fr.seq)

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
        """True when the last checkpoint this writer wrote is older than ``DEDUP_SAVE_INTERVAL``
        (never while the keys are deferred: the file on disk holds all this writer would add)."""
        return self.deferred is None and time.monotonic() - self.saved_at > DEDUP_SAVE_INTERVAL

    def stale(self, last_seq: int, stale_ok: int = DEDUP_STALE_OK) -> bool:
        """True when the checkpoint on disk is missing or more than ``stale_ok`` records behind.

        While the keys are deferred the file was not read: it is stale when the log grew by more
        than ``stale_ok`` records since (a save then loads the keys first)."""
        if self.deferred is not None:
            return last_seq - (self.deferred.next_seq - 1) > stale_ok
        return self.file_seq < 0 or last_seq - self.file_seq > stale_ok

    def save(self, last_seq: int) -> None:
        """Write the checkpoint covering the log up to ``last_seq`` (not synced: it is disposable)."""
        self.ensure_loaded()
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
