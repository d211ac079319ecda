"""The snapshot's memory stays that of one step (issue 25): keys of earlier steps are the log's to hold."""

from __future__ import annotations

import pytest

from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import DiaryLines, MessageAppended
from processors.runner import run_log_processor
from processors.snapshot import Snapshot


def _messages(n: int) -> list[MessageAppended]:
    return [MessageAppended(session_key=f"s{i % 3}", message_id=f"m{i}", role="user", content=f"line {i} of the day",
                            timestamp=f"2026-11-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z") for i in range(n)]


@pytest.fixture
def home(tmp_path) -> str:
    path = str(tmp_path / "ws")
    init_workspace(path)
    return path


def test_a_long_run_holds_only_its_last_steps_keys_and_writes_no_line_twice(home):
    with Workspace.open(home, writable=True) as ws:
        ws.append(_messages(120))
        ws.append(_messages(120))  # the same messages again (an import run twice): the log refuses nothing,
        proc = Snapshot()  # the snapshot must skip them against the keys of steps already appended
        report = run_log_processor(ws, proc, step_records=25)
        assert len(proc.seen) <= 25, "keys of earlier steps were kept in memory"
        lines = [line for ev in ws.log.read() if isinstance(ev, DiaryLines) for line in ev.lines]
        assert len(lines) == 120 == len(set(lines))
        assert report.duplicates_skipped == 120
