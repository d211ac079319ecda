"""Processor offsets are validated before they are trusted (INVARIANTS I9, I10).

A committed offset names the last consumed record by segment, end position, seq and
checksum. These tests commit offsets that do not hold (past the end of the file, not on
a line boundary, pointing at a different record, a seq the log does not have) and check
that the processor never continues silently: it finds the record again by seq or
applies its policy, and records an ``offset.reset`` with the reason.
"""

from __future__ import annotations

import pytest

import processors
from eventlog.app.workspace import Workspace
from eventlog.errors import OffsetInvalidError
from eventlog.events import DiaryAppended, MessageAppended, OffsetCommitted, OffsetReset
from processors.runner import Processor, run_log_processor, validate_offset


def _messages(n: int, start: int = 0) -> list[MessageAppended]:
    return [MessageAppended(session_key="s", message_id=f"m{i}", role="user", content=f"message {i}",
                            timestamp="2026-11-01T10:00:00Z") for i in range(start, start + n)]


@pytest.fixture
def ws(workspace):
    w = Workspace.open(workspace, writable=True)
    w.append(_messages(5))
    processors.run(w, "snapshot")
    yield w
    w.close()


def _commit(ws: Workspace, **changes) -> OffsetCommitted:
    pos = ws.offsets.position("snapshot")
    fields = {"processor": "snapshot", "record_seq": pos.seq, "segment": pos.segment, "position": pos.position,
              "fingerprint": pos.fingerprint, **changes}
    ev = OffsetCommitted(**fields)
    ws.append([ev])
    return ev


def _resets(ws: Workspace) -> list[OffsetReset]:
    return [e for e in ws.log.read() if isinstance(e, OffsetReset)]


def test_a_valid_offset_resumes_right_after_the_committed_record(ws):
    pos = ws.offsets.position("snapshot")
    assert validate_offset(ws, "snapshot", "earliest") == (pos.seq + 1, None)
    assert ws.log.log_start <= pos.seq + 1 <= ws.log.last_seq + 1


@pytest.mark.parametrize("change,why", [
    ({"position": 10**9}, "past the end"),
    ({"position": 7}, "not at a line boundary"),
    ({"segment": "00000000000000000099.jsonl"}, "does not exist"),
])
def test_a_moved_position_is_found_again_by_seq_and_the_reset_recorded(ws, change, why):
    _commit(ws, **change)
    start, reset = validate_offset(ws, "snapshot", "earliest")
    pos = ws.offsets.position("snapshot")
    assert start == pos.seq + 1 and reset is not None
    assert why in reset.reason and reset.policy == "by-seq"
    report = run_log_processor(ws, processors_snapshot())
    assert report.resets and why in _resets(ws)[-1].reason


def test_an_offset_naming_a_different_record_applies_the_policy_and_records_it(ws):
    _commit(ws, fingerprint="xxh3-64:0000000000000000")
    start, reset = validate_offset(ws, "snapshot", "earliest")
    assert start == ws.log.log_start and reset.policy == "earliest" and "different record" in reset.reason
    start, reset = validate_offset(ws, "snapshot", "latest")
    assert start == ws.log.last_seq + 1 and reset.policy == "latest"
    with pytest.raises(OffsetInvalidError, match="does not hold"):
        validate_offset(ws, "snapshot", "error")


def test_re_reading_from_the_start_after_a_reset_duplicates_nothing(ws):
    before = [e.dedup for e in ws.log.read() if isinstance(e, DiaryAppended)]
    _commit(ws, fingerprint="xxh3-64:0000000000000000")
    report = processors.run(ws, "snapshot")
    assert report.resets and report.duplicates_skipped == 5
    assert [e.dedup for e in ws.log.read() if isinstance(e, DiaryAppended)] == before


def test_an_offset_beyond_the_log_end_is_reset_not_trusted(ws):
    _commit(ws, record_seq=10**6)
    start, reset = validate_offset(ws, "snapshot", "earliest")
    assert reset is not None and start == ws.log.log_start


def test_offsets_command_shows_positions_lag_and_recorded_losses(ws, cli_runner):
    from eventlog.cli import cli

    _commit(ws, fingerprint="xxh3-64:0000000000000000")
    processors.run(ws, "snapshot")
    home = ws.home
    ws.close()
    out = cli_runner.invoke(cli, ["--home", home, "offsets", "--json"])
    assert out.exit_code == 0, out.stderr
    import json

    rows = {r["processor"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert rows["snapshot"]["resets"] == 1 and rows["snapshot"]["seq"] > 0


def processors_snapshot() -> Processor:
    from processors.snapshot import Snapshot

    return Snapshot()
