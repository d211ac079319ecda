"""The end of the log as one writer sees it: the active segment, the next seq, dedup keys, the newest ts.

``WriterState`` brings that view up to the disk. ``load`` takes the log up on open (or
when it changed in a way appends cannot explain): it plans with ``writer_recovery``
(repair first if asked), applies the plan and loads the dedup keys. ``catch_up`` runs at
the start of every turn: nothing when the active segment is unchanged (one ``fstat``),
else it applies ``writer_catchup.plan_catch_up``, cutting a torn tail another writer left.
Both return True when a ``log.recovered`` event is pending (``recovered``): the writer
appends it in the same turn.
"""

from __future__ import annotations

from collections.abc import Callable

from eventlog.codec import hash_key
from eventlog.events import LogRecovered
from eventlog.fsio import FileSystem
from eventlog.lock import FileLock
from eventlog.reader import LogReader
from eventlog.timeutil import LogStamp
from eventlog.writer_catchup import plan_catch_up
from eventlog.writer_dedup import DEDUP_STALE_OK, DedupIndex
from eventlog.writer_recovery import Recovery, plan_open, plan_repair, tail_cut
from eventlog.writer_segment import ActiveSegment


class WriterState:
    """The writer's view of the log's end (see the module docstring)."""

    def __init__(self, reader: LogReader, fs: FileSystem, clock: Callable[[], float], *, segment_bytes: int) -> None:
        self.reader = reader
        self.fs = fs
        self.seg = ActiveSegment(reader, fs, limit=segment_bytes)
        self.dedup = DedupIndex(reader, fs, next_seq=lambda: self.next_seq)
        self.stamp = LogStamp()
        self.recovery = Recovery(reader, fs, clock)
        self.next_seq = 1  # the seq the next appended event gets
        self.recovered: LogRecovered | None = None  # the recovery this writer found (pending until appended)
        self.closed = False  # the writer was closed: no more appends

    def load(self, repair: bool) -> bool:
        """Take the log up from disk (plan, then apply); True when a recovery is pending."""
        self.dedup.reset()
        self.recovered = None
        if repair:
            fix = plan_repair(self.reader)
            if fix is not None:
                self.recovered = self.recovery.repair(fix)
        plan = plan_open(self.reader, repair=repair)
        seg = self.seg
        if plan.scan is None:  # an empty log
            seg.create(1)
            self.next_seq = 1
            self.dedup.load(1, 1, [])
            return False
        if plan.unseal:
            self.fs.unseal(self.reader.seg_path(plan.base))  # sealed by a roll that died before the next segment existed
        res = plan.scan
        seg.reset(plan.base, res.valid_end, res.index)
        self.next_seq = res.next_seq
        if plan.last_ts:
            self.stamp.see(plan.last_ts)
        if plan.cut is not None:  # cut first: reads (the dedup checkpoint's check) must not meet the damage
            seg.close()
            self.recovered = self.recovery.cut(plan.cut)
        if seg.fd < 0:
            seg.open()
        self.dedup.defer(self.next_seq, seg.base, res.dedup)  # loaded when first needed (a roll may save it)
        return self.recovered is not None  # a cut tail, or sealed segments a repair quarantined

    def catch_up(self) -> bool:
        """Bring the view up to the log on disk (the start of every turn); True when a recovery is pending."""
        if self.seg.fd < 0:
            return self.load(False)
        if self.seg.unchanged():
            return False  # nobody appended or rolled since our last turn
        return self.follow_others()

    def follow_others(self) -> bool:
        """Apply what other writers appended since our last turn: seqs, dedup keys, index, ts."""
        seg = self.seg
        plan = plan_catch_up(self.reader, base=seg.base, size=seg.size, next_seq=self.next_seq,
                             next_mark=seg.next_mark, replaced=seg.replaced())
        if plan.reload:
            seg.close()
            return self.load(False)  # the log changed in a way appends cannot explain (a repair, a restore, an erasure)
        for res in plan.scans:
            if res.base == seg.base:
                seg.index.extend(res.index)
                seg.reset(res.base, res.valid_end, seg.index)
            else:
                seg.close()
                seg.reset(res.base, res.valid_end, res.index)
            for key, seq in res.dedup:
                self.dedup.add(hash_key(key), seq)
            self.next_seq = res.next_seq
            if res.last_ts:
                self.stamp.see(res.last_ts)
        last = plan.scans[-1]
        pending = False
        if last.damage is not None:  # a writer died during its turn: cut its torn tail
            seg.close()
            self.recovered = self.recovery.cut(tail_cut(last))
            pending = True
        if seg.fd < 0:
            seg.open()
        return pending

    def roll(self) -> None:
        """Seal the active segment and start the next one; save the dedup checkpoint now and then."""
        self.seg.roll(self.next_seq)
        if self.dedup.due():
            self.dedup.save_quietly(self.next_seq - 1)

    def save_checkpoints(self, lock: FileLock, timeout: float, record: Callable[[], None], *,
                         stale_ok: int = DEDUP_STALE_OK) -> None:
        """Dedup keys and the active index, written in a turn of our own (``record``: append a recovery
        the catch-up made); skipped if others keep the lock busy. Never raises: checkpoints are disposable.
        The dedup checkpoint is rewritten only when more than ``stale_ok`` records behind."""
        try:
            lock.acquire(timeout)
        except Exception:  # noqa: BLE001 - LockedError or an unreadable lock file
            return
        try:
            if self.catch_up():
                record()
            last = self.next_seq - 1
            if self.dedup.stale(last, stale_ok):  # rewriting every key on every close costs a short-lived writer more
                self.dedup.save_quietly(last)
            try:
                self.seg.save_index()
            except OSError:
                pass  # disposable: rebuilt from the log on next open
        except Exception:  # noqa: BLE001 - a checkpoint must never turn a clean close into an error
            pass
        finally:
            lock.release()
