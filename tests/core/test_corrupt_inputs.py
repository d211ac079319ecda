"""Corrupt inputs: every kind of damage gives a clear error or a recorded recovery.

A clear error is an ``eventlog.errors`` exception whose message names the segment file,
the byte offset and/or the seq. A recorded recovery is a ``log.recovered`` event in the
log with the cut bytes saved under ``log/quarantine/``. Never a bare traceback
(KeyError, IndexError, UnicodeDecodeError, msgspec.DecodeError ...) and never silent loss.

INVARIANTS.md: I2 (exact, idempotent recovery), I5, I6 (sealed damage is loud), I7 (only
the last segment may be torn), I13 (no acknowledged unique append is suppressed), I17
(derived files are disposable).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog import codec
from eventlog.errors import CorruptionError, EvlogError, WorkspaceNotFound
from eventlog.events import LogRecovered, MessageAppended, SessionCreated
from eventlog.log import DEDUP_FILE, QUARANTINE_DIR, Log

SMALL = 1024  # the smallest segment size the log accepts: rolls every ~5 events here
_SEG_RE = re.compile(r"^\d{20}\.jsonl$")

FAST = settings(max_examples=60, deadline=None)


# --------------------------------------------------------------------------- helpers


def msg(i: int, *, dedup: str = "", content: str | None = None) -> MessageAppended:
    return MessageAppended(
        session_key=f"s{i % 3}",
        message_id=f"m{i}",
        role="user" if i % 2 else "assistant",
        content=f"message number {i}" if content is None else content,
        dedup=dedup,
    )


def build_log(path: str, n: int, *, segment_bytes: int = SMALL, start: int = 0) -> list:
    """A log of ``n`` single appends (each with a dedup key); returns what it reads back."""
    with Log.open(path, writable=True, create=True, segment_bytes=segment_bytes) as log:
        for i in range(start, start + n):
            log.append(msg(i, dedup=f"key-{i}"))
    return read_all(path)


def read_all(path: str, from_seq: int = 1) -> list:
    return list(Log.open(path).read(from_seq))


def seg_names(path: str) -> list[str]:
    return sorted(n for n in os.listdir(path) if _SEG_RE.match(n))


def seg_base(name: str) -> int:
    return int(name[:20])


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def write_bytes(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def snapshot(path: str) -> dict[str, bytes]:
    """Every file under a log directory (recursively) except the LOCK file."""
    out = {}
    for root, _dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if rel != "LOCK":
                out[rel] = read_bytes(full)
    return out


def segment_bytes_of(path: str) -> dict[str, bytes]:
    return {n: read_bytes(os.path.join(path, n)) for n in seg_names(path)}


def line_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each line, ``end`` just past its newline."""
    spans, start = [], 0
    while start < len(data):
        nl = data.find(b"\n", start)
        end = len(data) if nl < 0 else nl + 1
        spans.append((start, end))
        start = end
    return spans


def line_of(spans: list[tuple[int, int]], pos: int) -> int:
    return next(k for k, (s, e) in enumerate(spans) if s <= pos < e)


def record_ends(data: bytes) -> list[int]:
    """Byte positions where a whole record (a single event or a whole batch) ends, with 0."""
    ends = [0]
    for s, e in line_spans(data):
        if json.loads(data[s:e]).get("more", 0) == 0:
            ends.append(e)
    return ends


def any_pos(data: bytes, lo: int = 0, hi: int | None = None) -> st.SearchStrategy[int]:
    """A byte position in ``data[lo:hi]``, often one of the framing bytes of a line."""
    hi = len(data) if hi is None else hi
    framing = sorted(
        {p for s, e in line_spans(data) for p in (s, s + 1, e - 1, e - 2, e - 3, e - 19, e - 33) if lo <= p < hi and s <= p < e}
    )
    return st.one_of(st.integers(lo, hi - 1), st.sampled_from(framing))


def flip(path: str, pos: int, xor: int) -> bytes:
    data = bytearray(read_bytes(path))
    data[pos] ^= xor
    write_bytes(path, bytes(data))
    return bytes(data)


def quarantine_files(path: str) -> dict[str, bytes]:
    qdir = os.path.join(path, QUARANTINE_DIR)
    if not os.path.isdir(qdir):
        return {}
    return {n: read_bytes(os.path.join(qdir, n)) for n in sorted(os.listdir(qdir))}


def without_ts(ev):
    return msgspec.structs.replace(ev, ts="")


def assert_recorded_cut(log_dir: str, rec: LogRecovered | None, *, segment: str, offset: int, cut: bytes) -> None:
    """The open recorded a cut of ``cut`` at ``segment``:``offset`` and kept the bytes."""
    assert rec is not None, "damage was cut without a log.recovered event"
    assert rec.segment == segment
    assert rec.offset == offset
    assert rec.bytes_truncated == len(cut)
    assert rec.reason
    assert rec.quarantine.startswith(QUARANTINE_DIR + "/")
    assert read_bytes(os.path.join(log_dir, rec.quarantine)) == cut
    last = read_all(log_dir)[-1]
    assert isinstance(last, LogRecovered)
    assert without_ts(last) == without_ts(rec)


def assert_clear_error(err: BaseException, *names: str) -> None:
    assert isinstance(err, EvlogError), f"bare {type(err).__name__} escaped: {err}"
    for name in names:
        assert name in str(err), f"{name!r} not named in: {err}"


@contextlib.contextmanager
def copy_of(template: str):
    tmp = tempfile.mkdtemp(prefix="evlog-corrupt-")
    try:
        dst = os.path.join(tmp, "log")
        shutil.copytree(template, dst)
        yield dst
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- templates


@pytest.fixture(scope="module")
def sealed_template(tmp_path_factory):
    """Three sealed segments and an active one, single appends only."""
    path = str(tmp_path_factory.mktemp("sealed") / "log")
    events = build_log(path, 18)
    assert len(seg_names(path)) >= 4
    return path, events


@pytest.fixture(scope="module")
def active_template(tmp_path_factory):
    """A sealed segment and an active one of several single-event lines."""
    path = str(tmp_path_factory.mktemp("active") / "log")
    events = build_log(path, 30, segment_bytes=4096)
    names = seg_names(path)
    assert len(names) == 2
    assert read_bytes(os.path.join(path, names[-1])).count(b"\n") >= 5
    return path, events


@pytest.fixture(scope="module")
def mixed_template(tmp_path_factory):
    """Two sealed segments; the active one holds single events and an atomic batch."""
    path = str(tmp_path_factory.mktemp("mixed") / "log")
    with Log.open(path, writable=True, create=True, segment_bytes=SMALL) as log:
        for i in range(11):
            log.append(msg(i, dedup=f"key-{i}"))
        log.append_batch([msg(100 + i, dedup=f"batch-{i}") for i in range(2)])
        log.append(msg(200, dedup="key-200"))
    active = read_bytes(os.path.join(path, seg_names(path)[-1]))
    lines = [json.loads(ln) for ln in active.splitlines()]
    assert len(seg_names(path)) >= 3
    assert any(ln.get("more") for ln in lines), "the active segment should hold a batch"
    assert len(record_ends(active)) - 1 >= 3
    return path, read_all(path)


# --------------------------------------------------------------------------- byte flips


@FAST
@given(data=st.data())
def test_flip_in_a_sealed_segment_is_reported_by_verify_naming_segment_offset_and_seq(sealed_template, data):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        name = data.draw(st.sampled_from(seg_names(d)[:-1]), label="segment")
        original = read_bytes(os.path.join(d, name))
        pos = data.draw(any_pos(original), label="pos")
        xor = data.draw(st.integers(1, 255), label="xor")
        flip(os.path.join(d, name), pos, xor)
        spans = line_spans(original)
        k = line_of(spans, pos)
        expected_seq = seg_base(name) + k

        damaged = [p for p in Log.open(d).verify() if p.damaged]

        assert damaged, "a flipped byte in a sealed segment went unnoticed by verify"
        assert damaged[0].segment == name
        assert damaged[0].offset == spans[k][0]
        assert damaged[0].seq == expected_seq


@FAST
@given(data=st.data())
def test_flip_in_a_sealed_segment_makes_reading_raise_corruption_error(sealed_template, data):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        name = data.draw(st.sampled_from(seg_names(d)[:-1]), label="segment")
        original = read_bytes(os.path.join(d, name))
        pos = data.draw(any_pos(original), label="pos")
        xor = data.draw(st.integers(1, 255), label="xor")
        flip(os.path.join(d, name), pos, xor)
        spans = line_spans(original)
        k = line_of(spans, pos)

        got = []
        with pytest.raises(CorruptionError) as exc:
            for ev in Log.open(d).read():
                got.append(ev)

        assert_clear_error(exc.value, name)
        assert exc.value.segment == name
        assert exc.value.offset == spans[k][0]
        # what came out before the error is an exact prefix, never damaged data
        assert got == events[: len(got)]
        assert all(ev.seq < seg_base(name) + k for ev in got)


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_flip_in_a_sealed_segment_is_never_cut_or_hidden_by_opening_for_write(sealed_template, data):
    tpl, _events = sealed_template
    with copy_of(tpl) as d:
        sealed = seg_names(d)[:-1]
        name = data.draw(st.sampled_from(sealed), label="segment")
        flip(os.path.join(d, name), data.draw(any_pos(read_bytes(os.path.join(d, name)))), data.draw(st.integers(1, 255)))
        before = {n: read_bytes(os.path.join(d, n)) for n in sealed}
        try:
            log = Log.open(d, writable=True, segment_bytes=SMALL)
        except CorruptionError as e:
            assert_clear_error(e, name)
        else:
            with log:
                assert log.recovered is None, "opening for write 'recovered' damage in a sealed segment"
                log.append(msg(999))
        assert {n: read_bytes(os.path.join(d, n)) for n in sealed} == before
        assert quarantine_files(d) == {}
        assert any(p.damaged and p.segment == name for p in Log.open(d).verify())


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_flip_in_the_last_line_of_the_active_segment_is_cut_and_recorded_on_open(sealed_template, data):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        active = seg_names(d)[-1]
        path = os.path.join(d, active)
        original = read_bytes(path)
        start, end = line_spans(original)[-1]
        pos = data.draw(any_pos(original, start, end), label="pos")
        damaged = flip(path, pos, data.draw(st.integers(1, 255), label="xor"))

        with Log.open(d, writable=True, segment_bytes=SMALL) as log:
            rec = log.recovered

        assert_recorded_cut(d, rec, segment=active, offset=start, cut=damaged[start:])
        after = read_all(d)
        assert after[:-1] == events[:-1]
        assert after[-1].seq == events[-1].seq  # the cut seq is reused by the record of the cut
        assert read_bytes(path).startswith(original[:start])
        assert [p for p in Log.open(d).verify() if p.damaged] == []
        # a second open changes nothing (I2)
        snap = snapshot(d)
        Log.open(d, writable=True, segment_bytes=SMALL).close()
        assert snapshot(d) == snap


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_flip_in_the_middle_of_the_active_segment_refuses_open_and_repair_cuts_there(active_template, data):
    tpl, events = active_template
    with copy_of(tpl) as d:
        active = seg_names(d)[-1]
        path = os.path.join(d, active)
        original = read_bytes(path)
        spans = line_spans(original)
        # damage in a line with at least one intact line after it (a flipped newline
        # merges two lines, so leave two after the damaged one)
        pos = data.draw(any_pos(original, 0, spans[-3][1]), label="pos")
        damaged = flip(path, pos, data.draw(st.integers(1, 255), label="xor"))
        k = line_of(spans, pos)
        start = spans[k][0]
        seq = seg_base(active) + k
        merged = pos == spans[k][1] - 1  # the newline itself was flipped
        intact_after = len(spans) - k - 1 - (1 if merged else 0)
        before = snapshot(d)

        with pytest.raises(CorruptionError) as exc:
            Log.open(d, writable=True, segment_bytes=SMALL)

        assert_clear_error(exc.value, active, f"byte {start}", f"seq {seq}")
        assert (exc.value.segment, exc.value.offset, exc.value.seq) == (active, start, seq)
        assert snapshot(d) == before, "a refused open changed the log"

        with Log.open(d, writable=True, repair=True, segment_bytes=SMALL) as log:
            rec = log.recovered
        assert_recorded_cut(d, rec, segment=active, offset=start, cut=damaged[start:])
        assert rec.records_after_damage == intact_after
        after = read_all(d)
        assert after[:-1] == [e for e in events if e.seq < seq]
        assert [p for p in Log.open(d).verify() if p.damaged] == []


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_flip_in_an_index_or_dedup_file_changes_no_read_and_no_dedup_answer(sealed_template, data):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        derived = sorted(n for n in os.listdir(d) if n.endswith(".idx"))
        assert DEDUP_FILE in derived and len(derived) >= 4
        name = data.draw(st.sampled_from(derived), label="file")
        size = os.path.getsize(os.path.join(d, name))
        flip(os.path.join(d, name), data.draw(st.integers(0, size - 1)), data.draw(st.integers(1, 255)))
        from_seq = data.draw(st.integers(1, len(events) + 1), label="from_seq")

        assert read_all(d, from_seq) == events[from_seq - 1 :]
        assert [p for p in Log.open(d).verify() if p.damaged] == []
        with Log.open(d, writable=True, segment_bytes=SMALL) as log:
            for ev in events:
                assert log.lookup_dedup(ev.dedup) == ev.seq
            assert log.append(msg(0, dedup=events[0].dedup)) == events[0].seq
            assert log.last_seq == events[-1].seq


# --------------------------------------------------------------------------- truncation


def _check_truncation(tpl: str, events: list, cut_at: int) -> None:
    """Cut the active segment of a copy of ``tpl`` at ``cut_at``; check I2 on it."""
    active = seg_names(tpl)[-1]
    base = seg_base(active)
    data = read_bytes(os.path.join(tpl, active))
    with copy_of(tpl) as d:
        path = os.path.join(d, active)
        write_bytes(path, data[:cut_at])
        v = max(e for e in record_ends(data) if e <= cut_at)
        kept = [e for e in events if e.seq < base + data[:v].count(b"\n")]

        assert read_all(d) == kept, f"a reader saw a torn record or a partial batch (cut at {cut_at})"
        with Log.open(d, writable=True, segment_bytes=SMALL) as log:
            rec = log.recovered
        if v == cut_at:
            assert rec is None
            assert read_bytes(path) == data[:cut_at]
            assert read_all(d) == kept
        else:
            assert_recorded_cut(d, rec, segment=active, offset=v, cut=data[v:cut_at])
            assert read_bytes(path).startswith(data[:v])
            assert read_all(d)[:-1] == kept
        snap = snapshot(d)
        Log.open(d, writable=True, segment_bytes=SMALL).close()
        assert snapshot(d) == snap, f"a second open changed bytes (cut at {cut_at})"


def test_truncating_the_active_segment_at_every_line_boundary_keeps_exactly_the_whole_records_before(mixed_template):
    tpl, events = mixed_template
    data = read_bytes(os.path.join(tpl, seg_names(tpl)[-1]))
    cuts = sorted({p for _s, e in line_spans(data) for p in (e - 2, e - 1, e, e + 1) if 0 <= p < len(data)} | {0, 1})
    for cut_at in cuts:
        _check_truncation(tpl, events, cut_at)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_truncating_the_active_segment_anywhere_keeps_exactly_the_whole_records_before_the_cut(mixed_template, data):
    tpl, events = mixed_template
    active_bytes = read_bytes(os.path.join(tpl, seg_names(tpl)[-1]))
    _check_truncation(tpl, events, data.draw(any_pos(active_bytes), label="cut_at"))


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_recovery_of_valid_records_followed_by_garbage_truncates_to_exactly_the_valid_records(mixed_template, data):
    tpl, events = mixed_template
    with copy_of(tpl) as d:
        active = seg_names(d)[-1]
        path = os.path.join(d, active)
        original = read_bytes(path)
        ends = record_ends(original)
        i = data.draw(st.integers(0, len(ends) - 1), label="record boundary")
        v = ends[i]
        nxt = ends[i + 1] if i + 1 < len(ends) else v
        partial = original[v : v + data.draw(st.integers(0, max(nxt - v - 1, 0)), label="partial")]
        x = partial + data.draw(st.binary(min_size=0 if partial else 1, max_size=300), label="garbage")
        assert not (nxt > v and x.startswith(original[v:nxt])), "X must not start with a valid record"
        write_bytes(path, original[:v] + x)
        kept = [e for e in events if e.seq < seg_base(active) + original[:v].count(b"\n")]

        with Log.open(d, writable=True, segment_bytes=SMALL) as log:
            rec = log.recovered

        assert_recorded_cut(d, rec, segment=active, offset=v, cut=x)
        assert read_bytes(path).startswith(original[:v])
        assert read_all(d)[:-1] == kept
        snap = snapshot(d)
        Log.open(d, writable=True, segment_bytes=SMALL).close()
        assert snapshot(d) == snap


def test_a_duplicated_last_record_at_the_tail_is_cut_and_recorded_not_read_twice(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        active = seg_names(d)[-1]
        path = os.path.join(d, active)
        original = read_bytes(path)
        s, e = line_spans(original)[-1]
        write_bytes(path, original + original[s:e])  # a retried write of the same line

        with Log.open(d, writable=True, segment_bytes=SMALL) as log:
            rec = log.recovered

        assert_recorded_cut(d, rec, segment=active, offset=len(original), cut=original[s:e])
        assert read_all(d)[:-1] == events
        assert "seq" in rec.reason


# --------------------------------------------------------------------------- atomic batches


@pytest.fixture(scope="module")
def batch_template(tmp_path_factory):
    """A log whose newest record is an atomic batch of five events with dedup keys."""
    path = str(tmp_path_factory.mktemp("batch") / "log")
    with Log.open(path, writable=True, create=True, segment_bytes=4096) as log:
        for i in range(8):
            log.append(msg(i, dedup=f"key-{i}"))
        before = log.last_seq
        seqs = log.append_batch([msg(500 + j, dedup=f"batch-{j}") for j in range(5)])
    assert seqs == list(range(before + 1, before + 6))
    active = seg_names(path)[-1]
    data = read_bytes(os.path.join(path, active))
    batch_start = line_spans(data)[-5][0]
    return path, read_all(path), batch_start


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_an_atomic_batch_torn_in_the_middle_is_invisible_and_cut_whole(batch_template, data):
    tpl, events, batch_start = batch_template
    with copy_of(tpl) as d:
        active = seg_names(d)[-1]
        path = os.path.join(d, active)
        original = read_bytes(path)
        batch_len = len(original) - batch_start
        line_cuts = [len(original) - e for _s, e in line_spans(original)[-5:-1]]  # whole lines kept
        chop = data.draw(st.one_of(st.sampled_from(line_cuts), st.integers(1, batch_len - 1)), label="chop")
        write_bytes(path, original[:-chop])
        without_batch = events[:-5]

        assert read_all(d) == without_batch, "a reader saw part of an incomplete batch"
        with Log.open(d, writable=True, segment_bytes=4096) as log:
            rec = log.recovered
        assert_recorded_cut(d, rec, segment=active, offset=batch_start, cut=original[batch_start:-chop])
        assert read_all(d)[:-1] == without_batch
        # the cut batch's dedup keys are free again (I13): re-appending writes all of it
        with Log.open(d, writable=True, segment_bytes=4096) as log:
            assert log.recovered is None
            seqs = log.append_batch([msg(500 + j, dedup=f"batch-{j}") for j in range(5)])
        after = read_all(d)
        assert seqs == [rec.seq + 1 + j for j in range(5)]
        assert [ev.message_id for ev in after[-5:]] == [f"m{500 + j}" for j in range(5)]


def test_dedup_key_of_a_cut_record_is_not_suppressed_after_recovery(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        path = os.path.join(d, seg_names(d)[-1])
        original = read_bytes(path)
        write_bytes(path, original[:-7])  # tear the last record (its key is in dedup.idx)
        lost = events[-1]
        with Log.open(d, writable=True, segment_bytes=SMALL) as log:
            assert log.recovered is not None
            assert log.lookup_dedup(lost.dedup) is None
            new_seq = log.append(msg(17, dedup=lost.dedup))
        assert new_seq == lost.seq + 1  # after the log.recovered event that took the cut seq
        assert read_all(d)[-1].message_id == lost.message_id


# --------------------------------------------------------------------------- invalid UTF-8


def _rewrite_line(path: str, k: int, old: bytes, new: bytes, *, fix_checksum: bool) -> tuple[int, bytes]:
    """Replace ``old`` by ``new`` in line ``k``; re-checksum it if asked. Returns (start, new file)."""
    data = read_bytes(path)
    s, e = line_spans(data)[k]
    line = data[s:e]
    assert old in line
    line = line.replace(old, new, 1)
    if fix_checksum:
        head = line[: -codec.SUFFIX_LEN]
        line = head + codec.CHECKSUM_PREFIX + codec._xxh64_hex(head).encode() + b'"}\n'  # noqa: SLF001
        assert codec.checksum_ok(line)
    out = data[:s] + line + data[e:]
    write_bytes(path, out)
    return s, out


def test_invalid_utf8_with_a_valid_checksum_in_a_sealed_segment_is_reported_and_never_decoded(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        name = seg_names(d)[1]
        start, _ = _rewrite_line(os.path.join(d, name), 2, b"message number", b"message\xff\xfenumber", fix_checksum=True)
        seq = seg_base(name) + 2

        problems = [p for p in Log.open(d).verify() if p.damaged]
        assert [(p.segment, p.offset, p.seq) for p in problems] == [(name, start, seq)]

        got = []
        with pytest.raises(EvlogError) as exc:
            for ev in Log.open(d).read():
                got.append(ev)
        assert_clear_error(exc.value, name, f"byte {start}", f"seq {seq}")
        assert got == events[: len(got)] and all(ev.seq < seq for ev in got)


def test_invalid_utf8_in_the_last_line_of_the_active_segment_is_cut_and_recorded(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        active = seg_names(d)[-1]
        path = os.path.join(d, active)
        k = len(line_spans(read_bytes(path))) - 1
        start, damaged = _rewrite_line(path, k, b"message number", b"message\xff\xfenumber", fix_checksum=False)

        with Log.open(d, writable=True, segment_bytes=SMALL) as log:
            rec = log.recovered
        assert_recorded_cut(d, rec, segment=active, offset=start, cut=damaged[start:])
        assert read_all(d)[:-1] == events[:-1]


def test_invalid_utf8_with_a_valid_checksum_in_the_active_segment_gives_clear_errors_not_tracebacks(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        active = seg_names(d)[-1]
        path = os.path.join(d, active)
        start, _ = _rewrite_line(path, 0, b"message number", b"message\xc3\x28number", fix_checksum=True)
        seq = seg_base(active)

        problems = [p for p in Log.open(d).verify() if p.damaged]
        assert [(p.segment, p.offset, p.seq) for p in problems] == [(active, start, seq)]
        with pytest.raises(EvlogError) as exc:
            list(Log.open(d).read(seq))
        assert_clear_error(exc.value, active, f"seq {seq}")
        try:
            Log.open(d, writable=True, segment_bytes=SMALL).close()
        except EvlogError as e:
            assert_clear_error(e, active)


def test_repair_cuts_at_an_undecodable_record_that_verify_reports(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        name = seg_names(d)[1]
        start, _ = _rewrite_line(os.path.join(d, name), 2, b"message number", b"message\xff\xfenumber", fix_checksum=True)
        seq = seg_base(name) + 2
        assert [p.seq for p in Log.open(d).verify() if p.damaged] == [seq]

        with Log.open(d, writable=True, repair=True, segment_bytes=SMALL) as log:
            rec = log.recovered
        assert rec is not None, "repair did nothing although verify reports damage"
        assert (rec.segment, rec.offset) == (name, start)
        assert [p for p in Log.open(d).verify() if p.damaged] == []
        assert read_all(d)[:-1] == [e for e in events if e.seq < seq]


# --------------------------------------------------------------------------- a huge event


def test_a_10_mb_event_appends_reads_back_verifies_and_gets_a_segment_of_its_own(tmp_path):
    d = str(tmp_path / "log")
    big = "0123456789abcdé\u4e2d\U0001f600" * (10 * 1024 * 1024 // 20)  # ~10 MB of UTF-8
    with Log.open(d, writable=True, create=True, segment_bytes=SMALL) as log:
        for i in range(3):
            log.append(msg(i))
        big_seq = log.append(msg(3, content=big, dedup="big"))
        for i in range(4, 6):
            log.append(msg(i))
    assert len(big.encode()) >= 10 * 1024 * 1024

    evs = read_all(d)
    assert [e.seq for e in evs] == list(range(1, 7))
    assert evs[big_seq - 1].content == big
    assert Log.open(d).find(big_seq).event.content == big
    assert [e.seq for e in read_all(d, big_seq + 1)] == [big_seq + 1, big_seq + 2]
    assert Log.open(d).verify() == []
    # I5: a sealed segment over segment_bytes holds exactly one record
    names = seg_names(d)
    own = os.path.join(d, f"{big_seq:020d}.jsonl")
    assert f"{big_seq:020d}.jsonl" in names
    assert read_bytes(own).count(b"\n") == 1
    for name in names[:-1]:
        data = read_bytes(os.path.join(d, name))
        assert len(data) <= SMALL or data.count(b"\n") == 1
    # reopening (recovery scans the big segment) and dedup work
    with Log.open(d, writable=True, segment_bytes=SMALL) as log:
        assert log.recovered is None
        assert log.append(msg(3, content="again", dedup="big")) == big_seq
        assert log.last_seq == 6


# --------------------------------------------------------------------------- empty and zero-length


def test_an_empty_log_dir_reads_nothing_verifies_clean_and_opens_for_write_at_seq_1(tmp_path):
    d = str(tmp_path / "log")
    os.makedirs(d)
    log = Log.open(d)
    assert list(log.read()) == []
    assert log.verify() == []
    assert log.last_seq == 0
    assert log.stats().events == 0
    with Log.open(d, writable=True, segment_bytes=SMALL) as w:
        assert w.recovered is None
        assert w.append(msg(0)) == 1
    assert [e.seq for e in read_all(d)] == [1]


def test_a_missing_log_dir_is_a_clear_error_for_readers_and_is_never_created_by_them(tmp_path):
    d = str(tmp_path / "nolog")
    with pytest.raises(WorkspaceNotFound) as exc:
        Log.open(d)
    assert_clear_error(exc.value, d)
    with pytest.raises(WorkspaceNotFound):
        Log.open(d, writable=True)
    assert not os.path.exists(d)


def test_a_zero_length_last_segment_is_fine_and_the_next_append_goes_into_it(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        nxt = f"{events[-1].seq + 1:020d}.jsonl"
        write_bytes(os.path.join(d, nxt), b"")  # a crash right after a roll created the file

        assert read_all(d) == events
        assert [p for p in Log.open(d).verify() if p.damaged] == []
        assert Log.open(d).last_seq == events[-1].seq
        with Log.open(d, writable=True, segment_bytes=SMALL) as log:
            assert log.recovered is None
            assert log.append(msg(99)) == events[-1].seq + 1
        assert read_bytes(os.path.join(d, nxt)).count(b"\n") == 1
        assert read_all(d)[:-1] == events


def test_a_zero_length_segment_in_the_middle_is_a_gap_reported_on_open_read_and_verify(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        names = seg_names(d)
        empty, after = names[1], names[2]
        write_bytes(os.path.join(d, empty), b"")
        missing = seg_base(empty)
        before = snapshot(d)

        with pytest.raises(CorruptionError) as exc:
            Log.open(d, writable=True, segment_bytes=SMALL)
        assert_clear_error(exc.value, empty)
        assert snapshot(d) == before

        with pytest.raises(CorruptionError) as exc:
            read_all(d)
        assert_clear_error(exc.value, after, f"seq {missing}")

        gaps = [p for p in Log.open(d).verify() if p.damaged]
        assert gaps and gaps[0].kind == "gap" and gaps[0].seq == missing


# --------------------------------------------------------------------------- stray, missing, torn sealed


def test_stray_tmp_files_are_reported_as_harmless_by_verify_and_removed_on_open_for_write(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        strays = [f"{1:020d}.idx.tmp", "dedup.idx.tmp", f"{events[-1].seq + 1:020d}.jsonl.tmp"]
        for name in strays:
            write_bytes(os.path.join(d, name), b"half-written \x00\xff garbage")

        problems = Log.open(d).verify()
        assert sorted(p.segment for p in problems) == sorted(strays)
        assert all(p.kind == "stray-file" and not p.damaged for p in problems)
        assert read_all(d) == events

        with Log.open(d, writable=True, segment_bytes=SMALL) as log:
            assert log.recovered is None
        assert not [n for n in os.listdir(d) if n.endswith(".tmp")]
        assert Log.open(d).verify() == []
        assert read_all(d) == events


def test_a_missing_segment_in_the_middle_is_a_clear_error_on_open_and_read_and_a_gap_in_verify(sealed_template):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        names = seg_names(d)
        gone = names[1]
        os.unlink(os.path.join(d, gone))
        os.unlink(os.path.join(d, gone[:20] + ".idx"))
        missing_from, missing_to = seg_base(gone), seg_base(names[2]) - 1
        before = snapshot(d)

        with pytest.raises(CorruptionError) as exc:
            Log.open(d, writable=True, segment_bytes=SMALL)
        assert_clear_error(exc.value, names[0], names[2])
        assert snapshot(d) == before

        got = []
        with pytest.raises(CorruptionError) as exc:
            for ev in Log.open(d).read():
                got.append(ev)
        assert_clear_error(exc.value, names[2], f"seq {missing_from}")
        assert got == [e for e in events if e.seq < missing_from]

        gaps = [p for p in Log.open(d).verify() if p.damaged]
        assert [(p.kind, p.segment, p.seq) for p in gaps] == [("gap", names[2], missing_from)]
        assert f"{missing_from}..{missing_to}" in gaps[0].message


@pytest.mark.parametrize("chop", [1, 10], ids=["newline-only", "torn-record"])
def test_a_sealed_segment_without_a_trailing_newline_is_corruption_not_recovery(sealed_template, chop):
    tpl, events = sealed_template
    with copy_of(tpl) as d:
        name = seg_names(d)[1]
        path = os.path.join(d, name)
        original = read_bytes(path)
        write_bytes(path, original[:-chop])
        last_start = line_spans(original)[-1][0]
        before = snapshot(d)

        with pytest.raises(CorruptionError) as exc:
            Log.open(d, writable=True, segment_bytes=SMALL)
        assert_clear_error(exc.value, name)
        assert snapshot(d) == before, "a torn sealed segment was cut like a torn tail"
        assert quarantine_files(d) == {}

        with pytest.raises(CorruptionError) as exc:
            read_all(d)
        assert_clear_error(exc.value, name, f"byte {last_start}")

        damaged = [p for p in Log.open(d).verify() if p.damaged]
        assert damaged and (damaged[0].segment, damaged[0].offset) == (name, last_start)


# --------------------------------------------------------------------------- derived files (I17)


@pytest.mark.parametrize("how", ["deleted", "garbage", "emptied", "swapped"])
def test_lost_or_damaged_index_and_dedup_files_give_identical_reads_and_dedup_still_works(tmp_path, how):
    d = str(tmp_path / "log")
    events = build_log(d, 40)
    with Log.open(d, writable=True, segment_bytes=SMALL) as log:
        log.append(SessionCreated(session_key="s-extra", dedup="session-extra"))
    events = read_all(d)
    reads = {s: read_all(d, s) for s in range(1, len(events) + 2)}
    records = list(Log.open(d).records())
    segs = segment_bytes_of(d)
    derived = sorted(n for n in os.listdir(d) if n.endswith(".idx"))
    assert DEDUP_FILE in derived and len(derived) >= 5

    if how == "deleted":
        for n in derived:
            os.unlink(os.path.join(d, n))
    elif how == "garbage":
        for n in derived:
            write_bytes(os.path.join(d, n), b"\x00garbage\xff" * 7)
    elif how == "emptied":
        for n in derived:
            write_bytes(os.path.join(d, n), b"")
    else:  # each index holds another segment's entries; dedup.idx claims a later seq
        contents = [read_bytes(os.path.join(d, n)) for n in derived if n != DEDUP_FILE]
        for n, data in zip([n for n in derived if n != DEDUP_FILE], contents[1:] + contents[:1], strict=True):
            write_bytes(os.path.join(d, n), data)
        write_bytes(os.path.join(d, DEDUP_FILE), b'{"seq":9999,"fingerprint":"xxh3-64:0000000000000000"}\n')

    assert {s: read_all(d, s) for s in range(1, len(events) + 2)} == reads
    assert list(Log.open(d).records()) == records
    assert [p for p in Log.open(d).verify() if p.damaged] == []
    with Log.open(d, writable=True, segment_bytes=SMALL) as log:
        assert log.recovered is None
        for ev in events:
            assert log.lookup_dedup(ev.dedup) == ev.seq
        assert log.append(msg(5, dedup="key-5")) == 6
        assert log.append(SessionCreated(session_key="s-extra", dedup="session-extra")) == events[-1].seq
        assert log.last_seq == events[-1].seq
    assert segment_bytes_of(d) == segs, "a duplicate append wrote bytes"
    assert {s: read_all(d, s) for s in range(1, len(events) + 2)} == reads


# --------------------------------------------------------------------------- other read APIs


def test_stats_of_a_log_with_a_damaged_line_gives_a_clear_error_or_counts(sealed_template):
    tpl, _events = sealed_template
    with copy_of(tpl) as d:
        name = seg_names(d)[1]
        flip(os.path.join(d, name), 0, 0x10)  # '{' -> 'k': the line is no longer JSON
        try:
            st_ = Log.open(d).stats()
        except Exception as e:  # noqa: BLE001 - the point is which kind escapes
            assert_clear_error(e, name)
        else:
            assert st_.segments == len(seg_names(d))
