"""Input paths that are not what they seem: FIFOs, symlinks swapped to one, and a workspace's own files.

Every open of a transcript goes through ``eventlog.ingest.source.open_source``: it never
blocks (a FIFO opens non-blocking and the opened descriptor is checked, not the path) and
it refuses any file inside an evlog workspace (duplicated messages otherwise). Blocking
calls run in a thread with a deadline; a stuck one is released by opening the FIFO's
writing end, so a failing test fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest

from eventlog.app.agents.hooks import handle_claude_code
from eventlog.app.agents.watch import Watcher
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.errors import EvlogError, RefusedInput
from eventlog.events import MessageAppended
from eventlog.ingest import collect_files, parse_file
from eventlog.ingest.incremental import ingest_file
from tests.conftest import REPO, real_data

EVLOG = os.path.join(os.path.dirname(sys.executable), "evlog")
DEADLINE = 5.0


def within_deadline(fn: Callable[[], Any], fifo: str) -> Any:
    """``fn()``'s result or exception; fails the test if it is still blocked after DEADLINE seconds."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(DEADLINE)
    if t.is_alive():
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # releases the blocked open(), then EOF
        os.close(fd)
        t.join(DEADLINE)
        pytest.fail(f"blocked on the FIFO {fifo} for {DEADLINE} s")
    return box


def messages(home: str) -> list[MessageAppended]:
    with Workspace.open(home) as ws:
        return [e for e in ws.log.read() if isinstance(e, MessageAppended)]


@pytest.fixture
def fifo(tmp_path) -> str:
    path = str(tmp_path / "feed" / "t.jsonl")
    os.makedirs(os.path.dirname(path))
    os.mkfifo(path)
    return path


# --- FIFOs and symlink swaps -----------------------------------------------------------------------


def test_incremental_ingest_of_a_fifo_returns_at_once_with_a_clear_reason(workspace, fifo) -> None:
    with Workspace.open(workspace, writable=True) as ws:
        box = within_deadline(lambda: ingest_file(ws.log, fifo, state_dir=os.path.join(workspace, "state")), fifo)
    assert isinstance(box.get("error"), EvlogError)
    assert "FIFO" in str(box["error"]) and fifo in str(box["error"])


def test_a_full_parse_of_a_symlink_to_a_fifo_returns_at_once(tmp_path, fifo) -> None:
    link = str(tmp_path / "link.jsonl")
    os.symlink(fifo, link)
    box = within_deadline(lambda: parse_file(link), fifo)
    assert isinstance(box.get("error"), EvlogError) and "FIFO" in str(box["error"])


def test_a_transcript_swapped_for_a_fifo_after_the_hooks_checks_is_a_note_not_a_stall(workspace, tmp_path, fifo,
                                                                                       monkeypatch) -> None:
    import eventlog.ingest.incremental as incremental

    link = str(tmp_path / "t.jsonl")
    shutil.copy(real_data("claude-spotter", "short.jsonl"), str(tmp_path / "real.jsonl"))
    os.symlink(str(tmp_path / "real.jsonl"), link)
    real_needs = incremental.needs_ingest

    def swap_then_check(state_dir: str, path: str, **kw: Any) -> bool:
        answer = real_needs(state_dir, path, **kw)
        os.unlink(link)
        os.symlink(fifo, link)  # the race: a regular file when looked at, a FIFO when opened
        return answer

    monkeypatch.setattr(incremental, "needs_ingest", swap_then_check)
    payload = {"hook_event_name": "Stop", "session_id": "s", "transcript_path": link, "cwd": str(tmp_path)}
    box = within_deadline(lambda: handle_claude_code(payload, home=workspace), fifo)
    res = box["value"]
    assert res.stdout == "" and any("FIFO" in n for n in res.notes), res.notes
    assert messages(workspace) == []


def test_watch_skips_a_fifo_in_a_watched_folder_without_stalling(workspace, fifo) -> None:
    w = Watcher(workspace, [os.path.dirname(fifo)], debounce=0.0)
    with Workspace.open(workspace, writable=True) as ws:
        box = within_deadline(lambda: w.step(ws.log, debounce=0.0), fifo)
    results = box["value"]
    assert all("FIFO" in (r.error or "") for r in results)


# --- a workspace's own files -----------------------------------------------------------------------


def own_session_file(home: str) -> str:
    """A file where the workspace keeps its session projections (a real transcript's bytes)."""
    path = os.path.join(home, "sessions", "copy.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    shutil.copy(real_data("claude-spotter", "short.jsonl"), path)
    return path


def run(home: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EVLOG, "--home", home, *args], capture_output=True, text=True, timeout=60, cwd=REPO,
                          env={**os.environ, "EVLOG_HOME": home})


def test_ingest_of_the_workspaces_own_session_file_is_refused_with_exit_2(workspace) -> None:
    path = own_session_file(workspace)
    r = run(workspace, "ingest", path)
    assert r.returncode == 2, r.stderr
    assert "refused" in r.stderr and "workspace" in r.stderr and path in r.stderr
    assert messages(workspace) == []


def test_ingest_of_another_workspaces_folder_is_refused_with_exit_2(workspace, tmp_path) -> None:
    other = str(tmp_path / "other")
    init_workspace(other)
    own_session_file(other)
    r = run(workspace, "ingest", os.path.join(other, "sessions"))
    assert r.returncode == 2 and "refused" in r.stderr
    assert messages(workspace) == []


def test_a_folder_holding_a_workspace_is_ingested_without_the_workspace(workspace, tmp_path) -> None:
    top = tmp_path / "top"
    (top / "proj").mkdir(parents=True)
    shutil.copy(real_data("claude-spotter", "tool_heavy.jsonl"), str(top / "proj" / "a.jsonl"))
    init_workspace(str(top / "ws"))
    own_session_file(str(top / "ws"))
    r = run(workspace, "ingest", str(top))
    assert r.returncode == 0, r.stderr
    assert "ingested 1 of 1 file(s)" in r.stderr and "workspace" in r.stderr
    assert {m.session_key for m in messages(workspace)} and all("short" not in m.session_key
                                                                for m in messages(workspace))


def test_the_library_refuses_a_workspaces_file_too(workspace) -> None:
    path = own_session_file(workspace)
    with pytest.raises(RefusedInput, match="refused"):
        parse_file(path)
    with Workspace.open(workspace, writable=True) as ws, pytest.raises(RefusedInput):
        ingest_file(ws.log, path, state_dir=os.path.join(workspace, "state"))


def test_a_hook_naming_a_workspace_file_captures_nothing_and_says_why(workspace, tmp_path) -> None:
    path = own_session_file(workspace)
    res = handle_claude_code({"hook_event_name": "Stop", "session_id": "s", "transcript_path": path,
                              "cwd": str(tmp_path)}, home=workspace)
    assert any("refused" in n for n in res.notes), res.notes
    assert messages(workspace) == []


def test_watch_of_a_path_inside_a_workspace_is_refused_with_exit_2(workspace, tmp_path) -> None:
    other = str(tmp_path / "other")
    init_workspace(other)
    own_session_file(other)
    r = run(workspace, "watch", "--once", os.path.join(other, "sessions"))
    assert r.returncode == 2 and "refused" in r.stderr, r.stderr
    assert messages(workspace) == []


def test_watch_skips_any_workspace_under_a_watched_folder(workspace, tmp_path) -> None:
    top = tmp_path / "top"
    top.mkdir()
    init_workspace(str(top / "ws"))
    own_session_file(str(top / "ws"))
    w = Watcher(workspace, [str(top)], debounce=0.0)
    assert w.scan() == {}
    r = run(workspace, "watch", "--once", "--json", str(top))
    assert r.returncode == 0 and [json.loads(x) for x in r.stdout.splitlines()] == []


def test_a_hook_naming_a_fifo_says_what_it_is(workspace, tmp_path, fifo) -> None:
    payload = {"hook_event_name": "Stop", "session_id": "s", "transcript_path": fifo, "cwd": str(tmp_path)}
    res = within_deadline(lambda: handle_claude_code(payload, home=workspace), fifo)["value"]
    assert any("FIFO" in n and fifo in n for n in res.notes), res.notes


def test_a_users_own_files_beside_a_workspace_stay_readable(workspace, tmp_path) -> None:
    top = str(tmp_path / "project")  # a workspace made in a project folder (evlog --home .)
    init_workspace(top)
    own_session_file(top)
    mine = os.path.join(top, "transcripts", "t.jsonl")
    os.makedirs(os.path.dirname(mine))
    shutil.copy(real_data("claude-spotter", "tool_heavy.jsonl"), mine)
    assert parse_file(mine).sessions
    for refused in (top, os.path.join(top, "evlog.json"), os.path.join(top, "sessions", "copy.jsonl"),
                    os.path.join(top, "log")):
        with pytest.raises(RefusedInput):
            collect_files([refused])
    r = run(workspace, "ingest", top)
    assert r.returncode == 2  # the workspace folder itself is refused; its users' files are named one by one
    r = run(workspace, "ingest", os.path.join(top, "transcripts"))
    assert r.returncode == 0 and "ingested 1 of 1" in r.stderr, r.stderr
