"""``evlog watch``: following transcript folders and ingesting what grows.

The watcher is driven step by step with a clock the test controls (``clock``), so
debounce and "quiet for a while" are exact; one test runs the real command in a
subprocess and stops it with SIGTERM.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

from eventlog.app.agents.watch import Watcher, default_paths, run_once, watch_settings
from eventlog.app.workspace import Workspace, init_workspace, load_config
from eventlog.cli import cli
from eventlog.events import MessageAppended
from eventlog.ingest import ingest_paths
from tests.conftest import REPO, real_data

EVLOG = os.path.join(os.path.dirname(sys.executable), "evlog")


class Clock:
    """Wall time the test moves by hand (files' mtimes are real: the clock starts far after them)."""

    def __init__(self) -> None:
        self.now = time.time() + 1000

    def __call__(self) -> float:
        return self.now


def messages(home: str) -> list[MessageAppended]:
    ws = Workspace.open(home)
    try:
        return [e for e in ws.log.read() if isinstance(e, MessageAppended)]
    finally:
        ws.close()


def read(*parts: str) -> bytes:
    with open(real_data(*parts), "rb") as f:
        return f.read()


def test_files_appended_while_watched_are_read_as_they_grow(workspace, tmp_path) -> None:
    folder = tmp_path / "projects" / "-home-me-repo"
    folder.mkdir(parents=True)
    data = read("claude-spotter", "tool_heavy.jsonl")
    lines = data.splitlines(keepends=True)
    t = folder / "s.jsonl"
    t.write_bytes(b"")
    clock = Clock()
    w = Watcher(workspace, [str(tmp_path / "projects")], debounce=2.0, clock=clock)
    counts = []
    with Workspace.open(workspace, writable=True) as ws:
        for i in range(0, len(lines), 7):
            with open(t, "ab") as f:
                f.write(b"".join(lines[i : i + 7]))
            clock.now = time.time() + 0.5  # written just now: not quiet yet
            assert w.step(ws.log) == []
            clock.now = time.time() + 3  # quiet for the debounce
            results = w.step(ws.log)
            assert [r.ok for r in results] == [True]
            assert w.step(ws.log) == []  # nothing new: not read again
            counts.append(len(messages(workspace)))
    assert counts == sorted(counts) and counts[0] < counts[-1]
    full = str(tmp_path / "full")
    init_workspace(full)
    with Workspace.open(full, writable=True) as ws:
        ingest_paths(ws.log, [str(t)])
    assert sorted((m.session_key, m.message_id) for m in messages(workspace)) == sorted(
        (m.session_key, m.message_id) for m in messages(full))


def test_a_file_replaced_by_a_shorter_one_is_read_from_its_start(workspace, tmp_path) -> None:
    t = tmp_path / "s.jsonl"
    t.write_bytes(read("claude-spotter", "tool_heavy.jsonl"))
    clock = Clock()
    w = Watcher(workspace, [str(tmp_path)], debounce=0.0, clock=clock)
    with Workspace.open(workspace, writable=True) as ws:
        assert w.step(ws.log)[0].file.messages > 0
        before = len(messages(workspace))
        replacement = tmp_path / ".incoming"
        replacement.write_bytes(read("claude-spotter", "short.jsonl"))
        os.replace(replacement, t)  # rotation: a new, shorter file under the same name
        (r,) = w.step(ws.log)
        assert r.ok and r.reset and r.mode == "full" and r.file.messages > 0
    assert len(messages(workspace)) > before


def test_a_folder_created_later_is_watched_from_then_on(workspace, tmp_path) -> None:
    later = tmp_path / "codex" / "sessions"
    w = Watcher(workspace, [str(later)], debounce=0.0, clock=Clock())
    with Workspace.open(workspace, writable=True) as ws:
        assert w.step(ws.log) == []
        (later / "2026" / "03" / "01").mkdir(parents=True)
        (later / "2026" / "03" / "01" / "rollout-x.jsonl").write_bytes(
            read("agent-history-real-sessions", "codex-session-01.jsonl"))
        (later / ".hidden.jsonl").write_bytes(b"garbage\n")
        (later / "notes.txt").write_bytes(b"not a transcript")
        (r,) = w.step(ws.log)
        assert r.ok and r.file.format == "codex" and r.file.messages > 0


def test_deleted_files_are_forgotten_and_come_back_when_recreated(workspace, tmp_path) -> None:
    t = tmp_path / "s.jsonl"
    data = read("nanobot-sessions", "cli_direct.jsonl")
    t.write_bytes(data)
    w = Watcher(workspace, [str(tmp_path)], debounce=0.0, clock=Clock())
    with Workspace.open(workspace, writable=True) as ws:
        assert len(w.step(ws.log)) == 1
        t.unlink()
        assert w.step(ws.log) == [] and w.done == {}
        t.write_bytes(data)
        (r,) = w.step(ws.log)
        assert r.ok and r.file.messages == 0  # the log already has them


def test_a_line_still_being_written_is_read_when_complete(workspace, tmp_path) -> None:
    lines = read("claude-spotter", "short.jsonl").splitlines(keepends=True)
    t = tmp_path / "s.jsonl"
    t.write_bytes(b"".join(lines[:5]) + lines[5][:40])
    clock = Clock()
    w = Watcher(workspace, [str(tmp_path)], debounce=0.0, final_after=60.0, clock=clock)
    with Workspace.open(workspace, writable=True) as ws:
        (r,) = w.step(ws.log)
        assert r.pending_bytes == 40
        with open(t, "ab") as f:
            f.write(lines[5][40:])
        (r,) = w.step(ws.log)
        assert r.pending_bytes == 0 and r.mode == "incremental"
        # a last line that never gets its newline is taken once the file has been quiet long enough
        with open(t, "ab") as f:
            f.write(lines[6].rstrip(b"\n"))
        clock.now = time.time() + 10
        (r,) = w.step(ws.log)
        assert r.pending_bytes > 0
        clock.now = time.time() + 61
        (r,) = w.step(ws.log)
        assert r.pending_bytes == 0 and w.step(ws.log) == []


def test_a_malformed_file_is_reported_once_per_version(workspace, tmp_path) -> None:
    t = tmp_path / "bad.jsonl"
    t.write_bytes(b'{"not": "a transcript"}\n')
    seen = []
    w = Watcher(workspace, [str(tmp_path)], debounce=0.0, clock=Clock(), on_result=seen.append)
    with Workspace.open(workspace, writable=True) as ws:
        (r,) = w.step(ws.log)
        assert not r.ok and f"{t}:1: not a transcript" in r.error
        assert w.step(ws.log) == []
        t.write_bytes(read("claude-spotter", "short.jsonl"))
        (r,) = w.step(ws.log)
        assert r.ok and r.file.messages > 0
    assert len(seen) == 2


def test_several_formats_in_one_tree(workspace, tmp_path) -> None:
    for name, parts in {"a/claude.jsonl": ("claude-spotter", "short.jsonl"),
                        "b/codex.jsonl": ("agent-history-real-sessions", "codex-session-01.jsonl"),
                        "c/nanobot.jsonl": ("nanobot-sessions", "cron_ee40e6bb.jsonl")}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(read(*parts))
    w = Watcher(workspace, [str(tmp_path)], debounce=0.0, clock=Clock())
    with Workspace.open(workspace, writable=True) as ws:
        results = w.step(ws.log)
    assert sorted(r.file.format for r in results) == ["claude-code", "codex", "nanobot"]
    assert all(r.ok and r.file.messages > 0 for r in results)


def test_settings_come_from_evlog_json(workspace, tmp_path, monkeypatch) -> None:
    path = os.path.join(workspace, "evlog.json")
    with open(path) as f:
        config = json.load(f)
    config["watch"] = {"paths": ["~/transcripts"], "debounce": 0.5}
    with open(path, "w") as f:
        json.dump(config, f)
    monkeypatch.setenv("HOME", str(tmp_path))
    s = watch_settings(workspace)
    assert s.paths == [str(tmp_path / "transcripts")] and s.debounce == 0.5 and s.interval == 1.0
    assert load_config(workspace).watch.debounce == 0.5  # a field of the configuration: 'evlog init' keeps it
    init_workspace(workspace, idle_minutes=45)
    with open(path) as f:
        assert json.load(f)["watch"] == {"paths": ["~/transcripts"], "debounce": 0.5, "interval": 1.0}
    (tmp_path / "transcripts").mkdir()
    (tmp_path / "transcripts" / "x.jsonl").write_bytes(read("claude-spotter", "short.jsonl"))
    with Workspace.open(workspace, writable=True) as ws:  # the daemon's job: one poll, no debounce
        (r,) = run_once(ws)
        assert r.ok and r.file.messages > 0 and run_once(ws) == []


def test_default_paths_are_the_harness_folders_that_exist(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert default_paths() == []
    (tmp_path / ".claude" / "projects").mkdir(parents=True)
    (tmp_path / ".nanobot" / "sessions").mkdir(parents=True)
    assert default_paths() == [str(tmp_path / ".claude" / "projects"), str(tmp_path / ".nanobot" / "sessions")]
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    (tmp_path / "cx" / "sessions").mkdir(parents=True)
    assert str(tmp_path / "cx" / "sessions") in default_paths()


def test_watch_once_on_the_command_line(cli_runner, workspace, tmp_path) -> None:
    (tmp_path / "t.jsonl").write_bytes(read("claude-spotter", "short.jsonl"))
    (tmp_path / "bad.jsonl").write_bytes(b"[1]\n")
    r = cli_runner.invoke(cli, ["--home", workspace, "watch", str(tmp_path), "--once", "--json"])
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == 1 and sorted(row["ok"] for row in rows) == [False, True]
    r = cli_runner.invoke(cli, ["--home", workspace, "watch", str(tmp_path / "nowhere"), "--once"])
    assert r.exit_code == 0 and "does not exist yet" in r.stderr


def test_the_watch_command_follows_a_growing_file_and_stops_on_sigterm(workspace, tmp_path) -> None:
    data = read("claude-code-viewer", "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
    folder = tmp_path / "projects"
    folder.mkdir()
    proc = subprocess.Popen([EVLOG, "--home", workspace, "watch", str(folder), "--debounce", "0.2", "--interval", "0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    try:
        t = folder / "s.jsonl"
        half = data.rfind(b"\n", 0, len(data) // 2) + 1
        t.write_bytes(data[:half])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not messages(workspace):
            time.sleep(0.1)
        first = len(messages(workspace))
        assert first > 0
        with open(t, "ab") as f:
            f.write(data[half:])
        while time.monotonic() < deadline and len(messages(workspace)) == first:
            time.sleep(0.1)
        if len(messages(workspace)) == first:
            proc.send_signal(signal.SIGTERM)
            raise AssertionError(f"the second half was not read: {proc.communicate(timeout=30)}")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert b"watch stopped" in err and b"Traceback" not in err
    sessions = os.listdir(os.path.join(workspace, "sessions"))  # the projection files were written
    assert any("1af7fc5e" in name for name in sessions)
    shutil.rmtree(folder)
