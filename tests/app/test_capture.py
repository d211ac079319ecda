"""Pausing capture and excluding projects or transcripts (``eventlog.app.capture``, ``evlog capture``).

Every capture path is played with a real transcript: the Claude Code and Codex hooks, ``evlog
watch`` (a Watcher stepped by hand) and the daemon's watch job (``run_once``), ``evlog ingest``,
and ``evlog status`` shows the state.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from eventlog.app import capture, memory
from eventlog.app.agents.codex_hooks import handle_codex
from eventlog.app.agents.hooks import handle_claude_code, project_folder_name
from eventlog.app.agents.watch import Watcher, run_once
from eventlog.app.status import workspace_status
from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.errors import ConfigError
from tests.conftest import real_data

CLAUDE_REAL = ("claude-spotter", "tool_heavy.jsonl")
CODEX_REAL = ("agent-history-real-sessions", "codex-session-01.jsonl")


def n_messages(home: str) -> int:
    with Workspace.open(home) as ws:
        return sum(1 for e in ws.log.read() if e.type == "message.appended")


def claude_transcript(tmp_path, project: str) -> str:  # noqa: ANN001
    folder = tmp_path / "claude" / "projects" / project_folder_name(project)
    folder.mkdir(parents=True)
    dest = folder / "s.jsonl"
    shutil.copyfile(real_data(*CLAUDE_REAL), dest)
    os.utime(dest, (1, 1))  # long quiet: the watcher reads it at once
    return str(dest)


def stop(path: str, cwd: str) -> dict:
    return {"hook_event_name": "Stop", "session_id": "s1", "transcript_path": path, "cwd": cwd}


# --- the library --------------------------------------------------------------------------------


def test_pause_for_a_while_then_it_ends_by_itself(workspace) -> None:
    assert not capture.load_state(workspace).paused()
    state = capture.pause(workspace, capture.parse_duration("2h"), now=1000.0)
    assert state.paused_until == 1000.0 + 7200
    assert capture.load_state(workspace).paused(now=1000.0 + 7199)
    assert not capture.load_state(workspace).paused(now=1000.0 + 7201)
    capture.pause(workspace)
    assert capture.load_state(workspace).paused(now=1e12)  # until resumed
    capture.resume(workspace)
    assert not capture.load_state(workspace).paused()


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("30s", 30), ("15m", 900), ("2h", 7200), ("1d", 86400)])
def test_durations(text: str, seconds: float) -> None:
    assert capture.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "-2h", "0", "2 weeks", "2x"])
def test_bad_durations_are_refused_by_name(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        capture.parse_duration(text)


def test_exclude_a_project_a_file_or_a_glob(workspace, tmp_path) -> None:
    project = str(tmp_path / "secret")
    state, new = capture.exclude(workspace, project)
    assert new and state.excluded == [project]
    assert capture.exclude(workspace, project + "/")[1] is False  # the same directory
    assert capture.matching_rule(state, os.path.join(project, "src")) == project
    assert capture.matching_rule(state, project + "-other") == ""
    transcript = os.path.join("/x/.claude/projects", project_folder_name(project), "abc.jsonl")
    subagent = os.path.join("/x/.claude/projects", project_folder_name(project), "abc", "subagents", "a.jsonl")
    assert capture.matching_rule(state, transcript) == project == capture.matching_rule(state, subagent)
    state, _ = capture.exclude(workspace, "*/scratch/*.jsonl")
    assert capture.matching_rule(state, "/a/scratch/t.jsonl") == "*/scratch/*.jsonl"
    assert capture.matching_rule(state, "/a/scratch/t.txt") == ""
    state, was = capture.include(workspace, project)
    assert was and capture.matching_rule(state, transcript) == ""
    assert capture.include(workspace, project)[1] is False


def test_a_damaged_state_file_is_named(workspace) -> None:
    with open(capture.capture_file(workspace), "w") as f:
        f.write('{"excluded": "not a list"}')
    with pytest.raises(ConfigError, match="capture.json: field 'excluded'"):
        capture.load_state(workspace)


# --- the hooks --------------------------------------------------------------------------------------


def test_a_paused_claude_code_hook_captures_nothing_and_resume_catches_up(workspace, tmp_path) -> None:
    path = claude_transcript(tmp_path, "/home/me/repo")
    capture.pause(workspace)
    res = handle_claude_code(stop(path, "/home/me/repo"), home=workspace)
    assert res.stdout == "" and not res.ingested
    assert any("capture is paused" in n and "nothing captured" in n for n in res.notes)
    assert n_messages(workspace) == 0
    capture.resume(workspace)
    res = handle_claude_code(stop(path, "/home/me/repo"), home=workspace)
    assert res.ingested and n_messages(workspace) > 0


def test_an_excluded_project_is_not_captured_and_gets_no_memory(workspace, tmp_path) -> None:
    project = str(tmp_path / "secret")
    os.makedirs(project)
    with Workspace.open(workspace, writable=True) as ws:
        memory.add(ws, "The secret project deploys on Fridays", section="Project Context", project=project)
    start = {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": project, "source": "startup"}
    assert "Fridays" in handle_claude_code(start, home=workspace).stdout
    capture.exclude(workspace, project)
    path = claude_transcript(tmp_path, "/elsewhere")  # the transcript is elsewhere: the cwd decides
    res = handle_claude_code(stop(path, project), home=workspace)
    assert not res.ingested and any("excluded from capture" in n for n in res.notes)
    assert n_messages(workspace) == 0
    res = handle_claude_code(start, home=workspace)
    assert res.stdout == "" and any("no memory given" in n for n in res.notes)
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": project, "prompt": "when deploy?"}
    assert handle_claude_code(prompt, home=workspace).stdout == ""


def test_a_pause_does_not_stop_the_memory_context(workspace, tmp_path) -> None:
    with Workspace.open(workspace, writable=True) as ws:
        memory.add(ws, "User prefers tabs", section="Preferences")
    capture.pause(workspace)
    start = {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(tmp_path), "source": "startup"}
    assert "tabs" in handle_claude_code(start, home=workspace).stdout


def test_the_codex_hook_honours_pause_and_exclusion(workspace, tmp_path) -> None:
    path = real_data(*CODEX_REAL)
    data = {"hook_event_name": "Stop", "session_id": "x", "transcript_path": path, "cwd": "/tmp", "turn_id": "t"}
    capture.pause(workspace, 3600)
    res = handle_codex(data, home=workspace)
    assert not res.ingested and any("capture is paused" in n for n in res.notes)
    capture.resume(workspace)
    capture.exclude(workspace, os.path.dirname(path))
    res = handle_codex(data, home=workspace)
    assert not res.ingested and any("excluded from capture" in n for n in res.notes)
    assert n_messages(workspace) == 0
    capture.include(workspace, os.path.dirname(path))
    assert handle_codex(data, home=workspace).ingested and n_messages(workspace) > 0


def test_the_hook_command_exits_0_with_the_note_on_stderr(workspace, tmp_path, cli_runner) -> None:
    path = claude_transcript(tmp_path, "/home/me/repo")
    capture.pause(workspace)
    r = cli_runner.invoke(cli, ["--home", workspace, "hook", "claude-code"], input=json.dumps(stop(path, "/r")))
    assert r.exit_code == 0 and r.stdout == "" and "capture is paused" in r.stderr


# --- watch and the daemon's watch job ------------------------------------------------------------------


def test_watch_reads_nothing_while_paused_and_everything_after(workspace, tmp_path, capsys) -> None:
    claude_transcript(tmp_path, "/home/me/repo")
    w = Watcher(workspace, [str(tmp_path / "claude" / "projects")], debounce=0.0)
    capture.pause(workspace)
    with Workspace.open(workspace, writable=True) as ws:
        assert w.step(ws.log) == [] and w.step(ws.log) == []
        assert capsys.readouterr().err.count("capture is paused") == 1  # said once
        capture.resume(workspace)
        assert [r.ok for r in w.step(ws.log)] == [True]
    assert n_messages(workspace) > 0


def test_watch_skips_an_excluded_project_until_it_is_included(workspace, tmp_path, capsys) -> None:
    claude_transcript(tmp_path, "/home/me/secret")
    w = Watcher(workspace, [str(tmp_path / "claude" / "projects")], debounce=0.0)
    capture.exclude(workspace, "/home/me/secret")
    with Workspace.open(workspace, writable=True) as ws:
        assert w.step(ws.log) == []
        assert "excluded from capture (/home/me/secret)" in capsys.readouterr().err
        capture.include(workspace, "/home/me/secret")
        assert len(w.step(ws.log)) == 1


def test_the_daemons_watch_job_honours_the_pause(workspace, tmp_path) -> None:
    claude_transcript(tmp_path, "/home/me/repo")
    capture.pause(workspace)
    with Workspace.open(workspace, writable=True) as ws:
        assert run_once(ws, [str(tmp_path / "claude" / "projects")]) == []
        capture.resume(workspace)
        assert len(run_once(ws, [str(tmp_path / "claude" / "projects")])) == 1


# --- evlog ingest, evlog capture, evlog status ---------------------------------------------------------


def test_ingest_of_an_excluded_path_says_so_and_skips_it(workspace, tmp_path, cli_runner) -> None:
    path = claude_transcript(tmp_path, "/home/me/secret")
    capture.exclude(workspace, "/home/me/secret")
    r = cli_runner.invoke(cli, ["--home", workspace, "ingest", path])
    assert r.exit_code == 0 and "excluded from capture" in r.stderr and "--include-excluded" in r.stderr
    assert n_messages(workspace) == 0
    capture.pause(workspace)  # an explicit ingest is not stopped by a pause
    r = cli_runner.invoke(cli, ["--home", workspace, "ingest", "--include-excluded", path])
    assert r.exit_code == 0, r.stderr
    assert n_messages(workspace) > 0


def test_the_capture_commands(workspace, tmp_path, cli_runner) -> None:
    def run(*args: str):  # noqa: ANN202
        return cli_runner.invoke(cli, ["--home", workspace, "capture", *args])

    assert run("status").stdout == "capture     on\n"
    r = run("pause", "--for", "2h", "--json")
    out = json.loads(r.stdout)
    assert r.exit_code == 0 and out["paused"] is True and out["excluded"] == []
    assert run("pause", "--for", "soon").exit_code == 2
    assert "paused until" in run("status").stdout
    r = run("exclude", str(tmp_path / "p"))
    assert r.exit_code == 0 and f"excluded    {tmp_path / 'p'}" in r.stdout
    assert "already excluded" in run("exclude", str(tmp_path / "p")).stderr
    assert json.loads(run("resume", "--json").stdout)["paused"] is False
    assert json.loads(run("include", str(tmp_path / "p"), "--json").stdout)["excluded"] == []
    r = cli_runner.invoke(cli, ["--home", str(tmp_path / "none"), "capture", "status"])
    assert r.exit_code == 3 and "no workspace" in r.stderr


def test_status_shows_paused_and_excluded(workspace, tmp_path, cli_runner) -> None:
    assert workspace_status(workspace).capture.paused is False
    capture.pause(workspace)
    capture.exclude(workspace, str(tmp_path / "p"))
    report = workspace_status(workspace)
    assert report.capture.paused and report.capture.excluded == [str(tmp_path / "p")]
    assert any(p.fix == "evlog capture resume" for p in report.problems)
    r = cli_runner.invoke(cli, ["--home", workspace, "status"])
    assert "capture     paused until 'evlog capture resume'; excluded: " + str(tmp_path / "p") in r.stdout
    assert json.loads(cli_runner.invoke(cli, ["--home", workspace, "status", "--json"]).stdout)["capture"]["paused"]
