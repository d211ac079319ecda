"""``replay --check`` compares each file of the replay's last flush as it is rendered (issue 25).

The last flush writes nothing into the temporary tree; files an earlier flush of a long replay
wrote there are compared from it. Every kind of drift is found either way.
"""

from __future__ import annotations

import os

import pytest

from eventlog.app import replay
from eventlog.app.workspace import Workspace
from eventlog.events import MessageAppended
from eventlog.fsio import ScratchFS


def msgs(session: str, n: int) -> list[MessageAppended]:
    return [MessageAppended(session_key=session, message_id=f"{session}-{i}", role="user" if i % 2 == 0 else "assistant",
                            content=f"message {i} of {session}", timestamp=f"2026-11-20T10:00:{i % 60:02d}Z")
            for i in range(n)]


def filled(home: str) -> None:
    with Workspace.open(home, writable=True) as ws:
        ws.append(msgs("a", 30))
        ws.append(msgs("b", 30))
        ws.append(msgs("a", 5))  # a, flushed in a step, changes again after it


def scratch_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the check's replay writes into its temporary tree."""
    written: list[str] = []
    real = ScratchFS.atomic_write

    def counting(self: ScratchFS, path: str, data: bytes, *, sync: bool = True) -> None:
        written.append(path)
        real(self, path, data, sync=sync)

    monkeypatch.setattr(ScratchFS, "atomic_write", counting)
    return written


def test_the_last_flush_of_a_check_writes_no_file_and_a_clean_workspace_checks_clean(workspace, monkeypatch):
    filled(workspace)
    written = scratch_writes(monkeypatch)
    with Workspace.open(workspace) as ws:
        result = replay.check(ws)
    assert result.clean, result.drifts
    assert result.files >= 2
    assert [p for p in written if os.sep + "sessions" + os.sep in p] == []


@pytest.mark.parametrize("steps", [0, 25])
@pytest.mark.parametrize("damage", ["differs", "missing", "extra", "same size"])
def test_every_kind_of_drift_is_found_whether_the_replay_flushed_in_steps_or_not(workspace, monkeypatch, steps, damage):
    filled(workspace)
    if steps:
        monkeypatch.setattr(replay, "REBUILD_FLUSH_EVENTS", steps)  # a's and b's files are written, then a's again
    sessions = os.path.join(workspace, "sessions")
    path = os.path.join(sessions, "b.jsonl")
    if damage == "differs":
        with open(path, "ab") as f:
            f.write(b"{}\n")
    elif damage == "same size":  # one byte changed in the last line: only the bytes tell
        with open(path, "r+b") as f:
            data = f.read()
            f.seek(len(data) - 3)
            f.write(b"X")
    elif damage == "missing":
        os.remove(path)
    else:
        with open(os.path.join(sessions, "stray.jsonl"), "wb") as f:
            f.write(b"{}\n")
    with Workspace.open(workspace) as ws:
        drifts = [(d.path, d.problem) for d in replay.check(ws).drifts]
    want = "sessions/stray.jsonl" if damage == "extra" else "sessions/b.jsonl"
    assert drifts == [(want, "differs" if damage == "same size" else damage)]


def test_a_session_file_an_earlier_step_wrote_is_compared_from_the_temporary_tree(workspace, monkeypatch):
    filled(workspace)
    with Workspace.open(workspace, writable=True) as ws:
        ws.append(msgs("c", 3))  # c only after the step
    monkeypatch.setattr(replay, "REBUILD_FLUSH_EVENTS", 60)  # a and b written at the step, then a and c at the end
    path = os.path.join(workspace, "sessions", "b.jsonl")
    with open(path, "ab") as f:
        f.write(b"{}\n")
    with Workspace.open(workspace) as ws:
        assert [(d.path, d.problem) for d in replay.check(ws).drifts] == [("sessions/b.jsonl", "differs")]
