"""Golden files: session files for each input format, and old log segments that must keep reading.

Regenerate after an intended format change with ``EVLOG_REGENERATE_GOLDEN=1 bash
tools/test.sh tests/projections/test_golden.py`` and review the diff like code.
"""

from __future__ import annotations

import os
import shutil

import pytest

from eventlog.app import replay
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.ingest import ingest_paths
from eventlog.log import Log
from tests.conftest import REPO

GOLDEN = os.path.join(REPO, "tests", "golden")
EXAMPLES = os.path.join(REPO, "examples", "transcripts")
REGENERATE = os.environ.get("EVLOG_REGENERATE_GOLDEN") == "1"
FIXED_CLOCK = 1_796_100_000.0  # 2026-12-01T...: every event gets the same ts (after the examples were written), so files are reproducible

FORMATS = {
    "catbuddy": "cli-dana.jsonl",
    "nanobot": "nanobot-qq-demo.jsonl",
    "claude-code": "claude-code",
    "codex": "codex-rollout-demo.jsonl",
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_ingested_session_files_match_the_golden_files(tmp_path, fmt):
    home = str(tmp_path / "ws")
    init_workspace(home)
    with Workspace.open(home, writable=True, clock=lambda: FIXED_CLOCK) as ws:
        report = ingest_paths(ws.log, [os.path.join(EXAMPLES, FORMATS[fmt])], project="/projects/shop")
        assert report.ok
    got_dir = os.path.join(home, "sessions")
    want_dir = os.path.join(GOLDEN, "sessions", fmt)
    if REGENERATE:
        shutil.rmtree(want_dir, ignore_errors=True)
        shutil.copytree(got_dir, want_dir)
    assert sorted(os.listdir(got_dir)) == sorted(os.listdir(want_dir))
    for name in os.listdir(want_dir):
        with open(os.path.join(got_dir, name), "rb") as a, open(os.path.join(want_dir, name), "rb") as b:
            assert a.read() == b.read(), f"{fmt}/{name} differs from the golden file"


def _golden_log() -> str:
    """The newest golden log: one event of every type this version writes (tests/golden/segments/v<N>)."""
    versions = sorted(os.listdir(os.path.join(GOLDEN, "segments")), key=lambda v: int(v[1:]))
    return os.path.join(GOLDEN, "segments", versions[-1])


def test_golden_segments_of_older_versions_still_decode_verify_and_replay(tmp_path):
    from eventlog.events import TYPES_BY_TAG

    for version in sorted(os.listdir(os.path.join(GOLDEN, "segments"))):
        src = os.path.join(GOLDEN, "segments", version)
        log = Log.open(src)
        events = list(log.read())
        assert events, f"golden log {version} is empty"
        assert [p for p in log.verify() if p.damaged] == []
        assert {e.type for e in events} <= set(TYPES_BY_TAG)
        home = str(tmp_path / version)
        init_workspace(home)
        shutil.rmtree(os.path.join(home, "log"))
        shutil.copytree(src, os.path.join(home, "log"))
        with Workspace.open(home, writable=True) as ws:
            replay.rebuild(ws)
            assert replay.check(ws).clean


def test_the_current_golden_log_covers_every_event_type():
    from eventlog.events import TYPES_BY_TAG

    seen = {e.type for e in Log.open(_golden_log()).read()}
    missing = set(TYPES_BY_TAG) - seen
    assert not missing, f"add these event types to tools/make_golden_log.py and regenerate: {sorted(missing)}"
