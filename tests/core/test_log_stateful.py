"""Stateful property test of the log: INVARIANTS I1-I5, I14, I15, I17, I19, I20.

A Hypothesis state machine appends single events and atomic batches (some with dedup
keys), re-appends duplicates, uses expected versions, rolls segments (tiny segment
size), crashes the writer (SimFS keeps, drops, garbles or cuts every un-synced byte and
may undo un-synced creates/renames), injects an I/O error at the n-th call, deletes
derived files and reopens. The model is the list of log lines written so far; after
every step the log on disk must equal the model, byte for byte.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from eventlog import codec
from eventlog.errors import ConflictError, DuplicateInBatchError, LockedError, LogIOError, WriterClosedError
from eventlog.events import MessageAppended
from eventlog.log import Log
from eventlog.segments import segment_bases, segment_name
from tests.simfs import SimFS, abandon

pytestmark = pytest.mark.slow  # a Hypothesis state machine (tens of seconds)

SEGMENT_BYTES = 1024
texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120)


def segment_lines(log_dir: str) -> list[bytes]:
    """Every complete line of every segment, in order."""
    out = []
    for base in segment_bases(log_dir):
        with open(os.path.join(log_dir, segment_name(base)), "rb") as f:
            data = f.read()
        out.extend(line + b"\n" for line in data.split(b"\n")[:-1])
    return out


def segment_files(log_dir: str) -> dict[str, bytes]:
    """Name -> bytes of every segment file."""
    out = {}
    for base in segment_bases(log_dir):
        with open(os.path.join(log_dir, segment_name(base)), "rb") as f:
            out[segment_name(base)] = f.read()
    return out


def event_lines(log_dir: str, lines: list[bytes]) -> list[bytes]:
    """The log as a reader sees it, re-framed: equal to the segment bytes if I3 holds."""
    return [codec.frame(ev, codec.FRAME_DECODER.decode(ln).more) for ev, ln in zip(Log.open(log_dir).read(), lines, strict=False)]


def _ends_with_new_recovery(after: list[bytes], before: list[bytes]) -> bool:
    """True when reopening appended a log.recovered event (it is not one of the old lines)."""
    if not after or codec.decode(after[-1]).type != "log.recovered":
        return False
    return len(after) > len(before) or after[-1] != before[len(after) - 1]


class LogMachine(RuleBasedStateMachine):
    """Drives one log directory through appends, crashes, faults and reopens."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="evlog-sm-")
        self.dir = os.path.join(self.tmp, "log")
        self.counter = 0

    @initialize(durability=st.sampled_from(["fsync", "group", "none"]))
    def start(self, durability: str) -> None:
        self.durability = durability
        self.lines: list[bytes] = []  # the model: every line the log holds, in order
        self.synced_count = 0  # lines known durable (fsync policy: every acknowledged one)
        self.keys: dict[str, int] = {}  # dedup key -> seq of the first event with it
        self.sealed: dict[int, str] = {}  # sealed segment base -> sha256 of its bytes
        self._open()

    def _open(self) -> None:
        self.fs = SimFS()
        self.log = Log.open(
            self.dir, writable=True, create=True, durability=self.durability,
            segment_bytes=SEGMENT_BYTES, group_commit_interval=10.0, fs=self.fs,
        )
        self.fs.segment_writes.clear()  # a log.recovered event written while opening is in the lines below
        self.lines = segment_lines(self.dir)
        self.synced_count = len(self.lines)
        self.keys = {}
        for ev in Log.open(self.dir).read():
            if ev.dedup:
                self.keys.setdefault(ev.dedup, ev.seq)

    def teardown(self) -> None:
        if getattr(self, "log", None) is not None:
            abandon(self.log)
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers -----------------------------------------------------------------------

    def _event(self, text: str, key: bool) -> MessageAppended:
        self.counter += 1
        return MessageAppended(
            session_key=f"s{self.counter % 3}", message_id=str(self.counter), role="user",
            content=text, dedup=f"k{self.counter}" if key else "",
        )

    def _acknowledge(self, seqs: list[int], events: list) -> None:
        """After a successful append: the new lines are exactly what the writer wrote."""
        written = b"".join(data for _path, data in self.fs.segment_writes)
        self.fs.segment_writes.clear()
        new = [ln + b"\n" for ln in written.split(b"\n")[:-1]]
        assert [codec.decode(ln).seq for ln in new] == list(range(len(self.lines) + 1, len(self.lines) + 1 + len(new)))
        self.lines.extend(new)
        if self.durability == "fsync":
            self.synced_count = len(self.lines)
        for seq, ev in zip(seqs, events, strict=True):
            if ev.dedup:
                assert self.keys.setdefault(ev.dedup, seq) == seq

    # -- rules -------------------------------------------------------------------------

    @rule(text=texts, key=st.booleans())
    def append_one(self, text: str, key: bool) -> None:
        ev = self._event(text, key)
        seq = self.log.append(ev)
        assert seq == len(self.lines) + 1
        self._acknowledge([seq], [ev])

    @rule(texts_=st.lists(texts, min_size=1, max_size=8), key=st.booleans())
    def append_batch(self, texts_: list[str], key: bool) -> None:
        evs = [self._event(t, key) for t in texts_]
        seqs = self.log.append_batch(evs)
        assert seqs == list(range(len(self.lines) + 1, len(self.lines) + 1 + len(evs)))
        self._acknowledge(seqs, evs)

    @precondition(lambda self: self.keys)
    @rule(data=st.data())
    def append_duplicate(self, data: st.DataObject) -> None:
        """I14: a known dedup key returns the original seq and writes nothing."""
        key = data.draw(st.sampled_from(sorted(self.keys)))
        end = self.log.last_seq
        seq = self.log.append(MessageAppended(session_key="dup", message_id="d", role="user", content="again", dedup=key))
        assert seq == self.keys[key]
        assert self.log.last_seq == end
        assert not self.fs.segment_writes

    @rule(stale=st.integers(min_value=1, max_value=3))
    def append_with_expected_version(self, stale: int) -> None:
        """I15: a batch with the right expected seq is written; a wrong one writes nothing."""
        end = self.log.last_seq
        with pytest.raises(ConflictError):
            self.log.append_batch([self._event("x", False)], expected=end - stale)
        assert self.log.last_seq == end and not self.fs.segment_writes
        evs = [self._event("y", False), self._event("z", False)]
        seqs = self.log.append_batch(evs, expected=end)
        self._acknowledge(seqs, evs)

    @rule()
    def batch_with_internal_duplicate_writes_nothing(self) -> None:
        end = self.log.last_seq
        a = self._event("a", True)
        with pytest.raises(DuplicateInBatchError):
            self.log.append_batch([a, self._event("b", False), a])
        assert self.log.last_seq == end and not self.fs.segment_writes

    @rule(texts_=st.lists(texts, min_size=1, max_size=4), reuse=st.booleans(), batch=st.booleans())
    def another_writer_appends_in_turn(self, texts_: list[str], reuse: bool, batch: bool) -> None:
        """I19: a second writer appends between the first one's turns; seqs stay dense, dedup holds across both."""
        # it waits for the first writer's lease to end, if it holds one (group/none durability)
        other = Log.open(self.dir, writable=True, durability="fsync", segment_bytes=SEGMENT_BYTES, fs=self.fs,
                         lock_timeout=5)
        self.fs.segment_writes.clear()  # opening may have recorded nothing; the lines below are the other writer's
        evs = [self._event(t, True) for t in texts_]
        if reuse and self.keys:  # a key the first writer wrote: the other writer must know it
            key = sorted(self.keys)[0]
            assert other.append(MessageAppended(session_key="d", message_id="d", role="user", content="", dedup=key)) == self.keys[key]
        seqs = other.append_batch(evs) if batch else [other.append(ev) for ev in evs]
        self._acknowledge(seqs, evs)
        self.synced_count = len(self.lines)  # its fsync made the whole segment durable
        other.close()
        ev = self._event("after the other writer", True)
        seq = self.log.append(ev)  # the first writer catches up before writing
        assert seq == len(self.lines) + 1
        self._acknowledge([seq], [ev])
        key = evs[0].dedup
        assert self.log.append(MessageAppended(session_key="d", message_id="d", role="user", content="", dedup=key)) == seqs[0]

    @rule()
    def a_writer_holding_its_turn_makes_others_wait(self) -> None:
        """I19: while one writer holds its turn, another waits (here: not at all) and is told who holds it."""
        other = Log.open(self.dir, writable=True, segment_bytes=SEGMENT_BYTES, fs=self.fs, lock_timeout=5)
        other.writer.lock_timeout = 0  # opened once the first writer's lease (if any) ended; now: no waiting
        try:
            with self.log.turn(), pytest.raises(LockedError, match=f"pid {os.getpid()}"):
                other.append(self._event("waits", False))
            assert not self.fs.segment_writes
        finally:
            other.close()

    @rule()
    def group_commit_tick(self) -> None:
        self.log.sync()
        self.synced_count = len(self.lines)

    @rule()
    def reopen_cleanly(self) -> None:
        self.log.close()
        before = list(self.lines)
        self._open()
        assert self.lines == before  # a clean close loses nothing and cuts nothing

    @rule(seed=st.integers(0, 2**32 - 1))
    def crash_and_reopen(self, seed: int) -> None:
        """I1, I2: after any crash the log is a prefix of what was written, at least the durable part."""
        rng = random.Random(seed)
        before = list(self.lines)
        durable = self.synced_count
        abandon(self.log)
        self.fs.crash(rng)
        self._open()
        after = self.lines
        kept = after[:-1] if _ends_with_new_recovery(after, before) else after
        assert kept == before[: len(kept)], "recovery produced records that were never written"
        assert len(kept) >= durable, f"lost durable records: kept {len(kept)} of {durable} synced"
        # I2: opening again changes no byte
        self.log.close()
        snapshot = segment_files(self.dir)
        self._open()
        assert snapshot == segment_files(self.dir)
        self.sealed = {b: h for b, h in self.sealed.items() if b < segment_bases(self.dir)[-1]}

    @rule(n=st.integers(min_value=1, max_value=6), torn=st.booleans(), batch=st.booleans())
    def io_error_fails_closed(self, n: int, torn: bool, batch: bool) -> None:
        """I20: the failing append is not acknowledged, later appends are refused, reopen recovers."""
        self.fs.fail_at = self.fs.calls + n
        self.fs.torn = torn
        evs = [self._event("io", False) for _ in range(3 if batch else 1)]
        try:
            seqs = self.log.append_batch(evs) if batch else [self.log.append(evs[0])]
        except LogIOError:
            with pytest.raises(WriterClosedError):
                self.log.append(self._event("after", False))
            self.fs.fail_at = None
            written = [ln + b"\n" for ln in b"".join(d for _p, d in self.fs.segment_writes).split(b"\n")[:-1]]
            self.fs.segment_writes.clear()
            before = list(self.lines)
            abandon(self.log)
            self._open()
            after = self.lines
            extra = after[len(before) : len(after) - (1 if _ends_with_new_recovery(after, before) else 0)]
            assert after[: len(before)] == before
            assert extra in ([], written), "a failed batch must be all there or not there"
        else:
            self.fs.fail_at = None
            self._acknowledge(seqs, evs)

    @rule()
    def delete_derived_files_and_reopen(self) -> None:
        """I17: indexes and the dedup checkpoint are disposable."""
        self.log.close()
        for name in os.listdir(self.dir):
            if name.endswith(".idx"):
                os.unlink(os.path.join(self.dir, name))
        self._open()
        for key, seq in list(self.keys.items())[:5]:
            assert self.log.append(MessageAppended(session_key="d", message_id="d", role="user", content="", dedup=key)) == seq

    # -- invariants --------------------------------------------------------------------

    @invariant()
    def log_equals_model(self) -> None:
        """I3, I4: segments hold exactly the model's lines, names are base seqs, seqs dense."""
        if not hasattr(self, "log"):
            return
        on_disk = segment_lines(self.dir)
        assert on_disk == self.lines
        assert sum(1 for _ in Log.open(self.dir).read()) == len(self.lines)
        assert event_lines(self.dir, self.lines) == self.lines  # frame(decode(line)) == line, every line
        bases = segment_bases(self.dir)
        seq = 1
        for base in bases:
            assert base == seq, f"segment {segment_name(base)} should start at {seq}"
            with open(os.path.join(self.dir, segment_name(base)), "rb") as f:
                seq += f.read().count(b"\n")
        for line in self.lines:
            assert line.count(b"\n") == 1 and codec.checksum_ok(line)

    @invariant()
    def sealed_segments_never_change(self) -> None:
        """I5: only the highest segment changes; sealed ones exceed the size only with one append."""
        if not hasattr(self, "log"):
            return
        bases = segment_bases(self.dir)
        for base in bases[:-1]:
            with open(os.path.join(self.dir, segment_name(base)), "rb") as f:
                data = f.read()
            digest = hashlib.sha256(data).hexdigest()
            assert self.sealed.setdefault(base, digest) == digest, f"sealed {segment_name(base)} changed"
            if len(data) > SEGMENT_BYTES:
                lines = data.split(b"\n")[:-1]
                first_batch = 1 + codec.FRAME_DECODER.decode(lines[0]).more
                assert len(lines) == first_batch, "an oversized sealed segment holds more than one append"

    @invariant()
    def verify_is_clean(self) -> None:
        if hasattr(self, "log"):
            assert [p for p in self.log.verify() if p.damaged] == []


LogMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("EVLOG_STATEFUL_EXAMPLES", "60")),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestLogMachine = LogMachine.TestCase
