"""The seed pipeline's production bugs, replayed against evlog as the scenarios that caused them.

1. Dedup by "is this line already in the file" broke once the file was trimmed: one daily
   diary reached 2.6 MB with 114 repeated snapshots of the same conversation.
2. Trimming by line count did not bound bytes (800 lines can be far over 200 KB).
3. The digest's byte offset pointed past the end after a trim, so it re-read or skipped.
4. A trim could drop conversation the digest had not read yet, silently.

(3 and 4 cannot happen by construction now: the digest follows ``diary.appended`` events
in the log, which a trim of the diary file never touches; the tests show it.)
"""

from __future__ import annotations

import os

import processors
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import DiaryTrimmed, MessageAppended, StmAdded
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
        ws.append(_conversation(60, "m"))
        processors.run(ws, "snapshot")  # the diary is over budget: trimmed in the same step
        size = len(_diary(ws))
        for _round in range(114):  # the harness appends the same conversation again (same messages, same ids)
            ws.append(_conversation(60, "m"))
            report = processors.run(ws, "snapshot")
            assert report.entries_written == 0 and report.duplicates_skipped == 60
        data = _diary(ws)
    assert len(data) == size <= 4_000
    lines = data.splitlines()
    assert len(lines) == len(set(lines)), "a line appears twice in the diary"


def test_distinct_messages_that_read_alike_each_keep_their_diary_line(tmp_path):
    """Parallel tool calls at the same second and identical tool results are different messages."""
    home = str(tmp_path / "ws")
    init_workspace(home)
    t = f"{DAY}T10:00:00Z"
    with Workspace.open(home, writable=True) as ws:
        ws.append([
            MessageAppended(session_key="s", message_id="c1", role="assistant", content="", timestamp=t,
                            tool_calls=[{"id": "a", "name": "Glob", "input": {"pattern": "*.py"}}]),
            MessageAppended(session_key="s", message_id="c2", role="assistant", content="", timestamp=t,
                            tool_calls=[{"id": "b", "name": "Glob", "input": {"pattern": "*.md"}}]),
            MessageAppended(session_key="s", message_id="r1", role="tool", content="No files found", timestamp=t),
            MessageAppended(session_key="s", message_id="r2", role="tool", content="No files found", timestamp=t),
        ])
        report = processors.run(ws, "snapshot")
        assert report.entries_written == 4 and report.duplicates_skipped == 0
        ws.append([MessageAppended(session_key="s", message_id="r2", role="tool", content="No files found",
                                   timestamp=t)])  # a true re-import of r2: no new line
        assert processors.run(ws, "snapshot").duplicates_skipped == 1
        assert len(_diary(ws).splitlines()) == 4


def test_an_old_log_resnapshotted_from_the_start_gains_no_duplicate_line(tmp_path):
    """Lines keyed the version 1 way (before message ids were part of the key) still dedup their messages."""
    from eventlog import codec
    from eventlog.events import DiaryAppended, OffsetReset
    from processors.snapshot import legacy_canonical_message

    home = str(tmp_path / "ws")
    init_workspace(home)
    msgs = _conversation(5, "m")
    with Workspace.open(home, writable=True) as ws:
        seqs = ws.append(msgs)
        ws.append([DiaryAppended(date=DAY, line=f"old line {i}", session_key=m.session_key, message_id=m.message_id,
                                 source_seq=s, dedup=codec.content_hash(legacy_canonical_message(m)))
                   for i, (m, s) in enumerate(zip(msgs, seqs, strict=True))])
        ws.append([OffsetReset(processor="snapshot", reason="test: read again from the start", policy="earliest")])
        report = processors.run(ws, "snapshot")
        assert report.entries_written == 0 and report.duplicates_skipped == 5
        ws.append(_conversation(7, "n"))  # new messages after the upgrade are keyed the new way
        assert processors.run(ws, "snapshot").entries_written == 7


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
        first = ws.append(_conversation(30, "a"))
        processors.run(ws, "snapshot")
        processors.run(ws, "digest")
        later = ws.append([MessageAppended(session_key="qq:friend", message_id=f"b{i}", role="user",
                                           content=f"later {i} " + "y" * 150, timestamp=f"{DAY}T11:00:{i:02d}Z")
                           for i in range(30)])
        processors.run(ws, "snapshot")  # trims the front: in the seed, the digest offset now pointed past the end
        assert ws.diary.days[DAY].start > 0
        report = processors.run(ws, "digest")
        assert report.resets == []
        covered = [s for e in ws.log.read() if isinstance(e, StmAdded) for s in e.message_seqs]
    assert covered == first + later, "every diary line reaches exactly one short-term entry, in order"


def test_a_trim_before_the_digest_ran_loses_nothing_the_digest_reads(tmp_path, cli_runner):
    from eventlog.cli import cli

    home = str(tmp_path / "ws")
    init_workspace(home, diary_budget_bytes=3_000)
    with Workspace.open(home, writable=True) as ws:
        seqs = ws.append(_conversation(60, "m"))
        processors.run(ws, "snapshot")  # no digest ran yet: the trim drops lines from the file only
        trims = [e for e in ws.log.read() if isinstance(e, DiaryTrimmed)]
        assert trims and trims[0].dropped_bytes > 0 and trims[0].undigested_bytes == 0
        report = processors.run(ws, "digest")
        assert report.resets == [] and report.lost_bytes == 0
        covered = [s for e in ws.log.read() if isinstance(e, StmAdded) for s in e.message_seqs]
        assert covered == seqs
    out = cli_runner.invoke(cli, ["--home", home, "offsets"])
    assert out.exit_code == 0
    digest = next(ln for ln in out.stdout.splitlines() if ln.startswith("digest"))
    assert "lost 0 bytes/0 records" in digest
