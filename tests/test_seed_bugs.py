"""The seed pipeline's production bugs, replayed against evlog as the scenarios that caused them.

1. Dedup by "is this line already in the file" broke once the file was trimmed: one daily
   diary reached 2.6 MB with 114 repeated snapshots of the same conversation.
2. Trimming by line count did not bound bytes (800 lines can be far over 200 KB).
3. The digest's byte offset pointed past the end after a trim, so it re-read or skipped.
4. A trim could drop conversation the digest had not read yet, silently.
"""

from __future__ import annotations

import os

import processors
from eventlog.events import DiaryDigested, DiaryTrimmed, MessageAppended
from eventlog.app.workspace import Workspace, init_workspace
from projections.diary import diary_file

DAY = "2026-11-20"


def _conversation(n: int, prefix: str, size: int = 120) -> list[MessageAppended]:
    return [MessageAppended(session_key="qq:friend", message_id=f"{prefix}{i}", role="user" if i % 2 else "assistant",
                            content=f"turn {i} " + "x" * size, timestamp=f"{DAY}T10:{i // 60:02d}:{i % 60:02d}Z")
            for i in range(n)]


def _diary(ws: Workspace) -> bytes:
    ws.flush()
    with open(os.path.join(ws.home, diary_file(DAY)), "rb") as f:
        return f.read()


def test_114_repeated_snapshots_of_a_trimmed_diary_add_no_duplicate_lines(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home, diary_budget_bytes=4_000)
    with Workspace.open(home, writable=True) as ws:
        ws.append(_conversation(60, "first-"))
        processors.run(ws, "snapshot")  # the diary is over budget: trimmed in the same step
        size = len(_diary(ws))
        for round_ in range(114):  # the harness re-imports the same conversation under new ids
            ws.append(_conversation(60, f"reimport{round_}-"))
            report = processors.run(ws, "snapshot")
            assert report.entries_written == 0 and report.duplicates_skipped == 60
        data = _diary(ws)
    assert len(data) == size <= 4_000
    lines = data.splitlines()
    assert len(lines) == len(set(lines)), "a line appears twice in the diary"


def test_trimming_bounds_bytes_not_lines(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home)  # default budget 200 000 bytes
    with Workspace.open(home, writable=True) as ws:
        ws.append(_conversation(800, "m", size=1_000))  # 800 lines of ~1 KB: ~800 KB by line count
        processors.run(ws, "snapshot")
        data = _diary(ws)
    assert len(data) <= 200_000
    assert data.endswith(b"\n") and data.splitlines()[-1].startswith(b"10:13:19")  # the newest line is kept


def test_the_digest_neither_rereads_nor_skips_after_a_trim(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home, diary_budget_bytes=6_000, digest_batch_bytes=1_000)
    with Workspace.open(home, writable=True) as ws:
        ws.append(_conversation(30, "a"))
        processors.run(ws, "snapshot")
        processors.run(ws, "digest")
        read_to = ws.offsets.s.digest[DAY]
        ws.append([MessageAppended(session_key="qq:friend", message_id=f"b{i}", role="user",
                                   content=f"later {i} " + "y" * 150, timestamp=f"{DAY}T11:00:{i:02d}Z")
                   for i in range(30)])
        processors.run(ws, "snapshot")  # trims the front: in the seed, the digest offset now pointed past the end
        assert ws.diary.days[DAY].start > 0
        processors.run(ws, "digest")
        ranges = sorted((e.start, e.end) for e in ws.log.read() if isinstance(e, DiaryDigested))
        day = ws.diary.days[DAY]
    assert ranges[0][0] == 0 and ranges[-1][1] == day.end
    for (_a, b), (c, _d) in zip(ranges, ranges[1:], strict=False):
        assert b == c, "the digest re-read or skipped bytes"
    assert any(s == read_to for s, _e in ranges), "the digest continued exactly where it stopped"


def test_a_trim_of_undigested_conversation_is_recorded_as_lost_not_silent(tmp_path, cli_runner):
    from eventlog.cli import cli

    home = str(tmp_path / "ws")
    init_workspace(home, diary_budget_bytes=3_000)
    with Workspace.open(home, writable=True) as ws:
        ws.append(_conversation(60, "m"))
        processors.run(ws, "snapshot")  # no digest ran yet: the trim drops unread bytes
        trims = [e for e in ws.log.read() if isinstance(e, DiaryTrimmed)]
        assert trims and trims[0].undigested_bytes == trims[0].dropped_bytes > 0
        report = processors.run(ws, "digest")
        assert report.resets and "trimmed before the digest read them" in report.resets[0]
    out = cli_runner.invoke(cli, ["--home", home, "offsets"])
    assert out.exit_code == 0
    digest = next(ln for ln in out.stdout.splitlines() if ln.startswith("digest"))
    assert f"lost {trims[0].undigested_bytes} bytes" in digest
