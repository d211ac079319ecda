"""The snapshot's per-message policy and the diary it feeds, held to their definitions (issue 25).

For any message, ``Snapshot.policy`` gives the row, dedup key, byte length and day that
``canonical_message``, ``source_time`` and ``diary_line`` define (a faster policy must keep
them), and no line for a message the step or the log already holds. The diary the lines fold
into holds, whatever the lines (ASCII or not) and wherever trims and flushes fall, exactly the
lines no trim dropped, ``size`` its byte length.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog import codec
from eventlog.events import DiaryLines, DiaryTrimmed, MessageAppended
from eventlog.fsio import OS_FS
from eventlog.timeutil import source_time
from processors.runner import RunReport
from processors.snapshot import LINE_CHARS, Snapshot, canonical_message, diary_line, plan_trim
from projections.diary import DiaryProjection, diary_file

TS = "2026-11-01T12:00:00.000Z"  # the events' own time
CHARS = st.sampled_from(list("ab Z.\t\n\r\x0b\x85\u2028\xa0é😀⏎") + ["x" * 700])
TEXTS = st.lists(CHARS, max_size=8).map("".join)  # up to ~5,600 characters: over LINE_CHARS too
TIMES = st.sampled_from(["", "2026-11-01T10:00:00Z", "2026-11-01T10:00:00.123Z", "2026-11-01 10:00:00",
                         "2026-11-01T10:00:00+02:00", "1700000000", "2026-13-01T10:00:00Z", "not a time",
                         "2026-11-02T10:00:00Z", "2030-01-01T00:00:00Z", "2026-02-29T10:00:00Z"])
NAMES = st.sampled_from(["s", "user", "k\r\nz", "a\nb", "ü"])
TOOLS = st.sampled_from([None, [], [{"name": "grep"}], [{"function": {"name": "ls\nx"}}], ["odd"]])


def _snapshot(lookup=lambda _k: None) -> Snapshot:
    ctx = SimpleNamespace(config=SimpleNamespace(diary_budget_bytes=200_000),
                          diary=SimpleNamespace(legacy_horizon=0, days={}), log=SimpleNamespace(lookup_dedup_int=lookup))
    snap = Snapshot()
    snap.begin(ctx, RunReport("snapshot"))  # type: ignore[arg-type]
    return snap


@settings(max_examples=200, deadline=None)
@given(content=TEXTS, timestamp=TIMES, key=NAMES, role=NAMES, tools=TOOLS, ts=st.sampled_from([TS, ""]))
def test_the_policy_gives_the_line_key_length_and_day_of_diary_line_and_canonical_message(content, timestamp, key,
                                                                                           role, tools, ts):
    ev = MessageAppended(session_key=key, message_id="m1", role=role, content=content, timestamp=timestamp,
                         tool_calls=tools, seq=7, ts=ts)
    snap = _snapshot()
    assert snap.policy(ev) == []
    ((date, day),) = snap.days.items()
    when = source_time(timestamp, ts)
    line = diary_line(ev, when)
    key_int = codec.hash_key(codec.content_hash(canonical_message(ev)))
    assert date == when[:10]
    assert day.rows == [(line, key, "m1", 7, role, codec.content_hash(canonical_message(ev)))]
    assert day.lengths == [len(line.encode()) + 1] and day.nbytes == len(line.encode()) + 1
    assert snap.seen == {key_int}
    assert len(line) <= LINE_CHARS + 40 + len(key) + len(role)
    assert snap.policy(ev) == [] and snap.report.duplicates_skipped == 1  # the same message again: no line


def test_a_message_the_log_holds_gives_no_line():
    ev = MessageAppended(session_key="s", message_id="m1", role="user", content="hi", timestamp=TS, seq=3, ts=TS)
    held = codec.hash_key(codec.content_hash(canonical_message(ev)))
    snap = _snapshot(lambda k: 1 if k == held else None)
    assert snap.policy(ev) == [] and not snap.days and snap.report.duplicates_skipped == 1


LINES = st.lists(st.sampled_from(["a", "plain ascii line", "é", "😀 x", "⏎ y" * 30, "z" * 300]), min_size=1, max_size=12)
STEPS = st.lists(st.tuples(LINES, st.booleans()), min_size=1, max_size=12)  # (lines, flush after) per step


@settings(max_examples=100, deadline=None)
@given(steps=STEPS, budget=st.sampled_from([1, 40, 400, 5000]))
def test_the_diary_file_holds_the_lines_no_trim_dropped_wherever_flushes_fall(tmp_path_factory, steps, budget):
    root = str(tmp_path_factory.mktemp("diary"))
    proj = DiaryProjection(root, OS_FS)
    date, kept, start = "2026-11-01", [], 0
    for lines, flush in steps:
        proj.apply(DiaryLines(date=date, lines=lines, source_seqs=list(range(len(lines)))))
        kept += lines
        drop, nbytes = plan_trim([len(line.encode()) + 1 for line in kept], budget)
        if drop:
            proj.apply(DiaryTrimmed(date=date, dropped_lines=drop, dropped_bytes=nbytes, start_before=start,
                                    start_after=start + nbytes, budget=budget))
            kept, start = kept[drop:], start + nbytes
        if flush:
            proj.flush()
    proj.flush()
    with open(os.path.join(root, diary_file(date)), "rb") as f:
        data = f.read()
    assert data == b"".join(line.encode() + b"\n" for line in kept)
    day = proj.days[date]
    assert day.size == len(data) and day.start == start and day.lengths == [len(line.encode()) + 1 for line in kept]
