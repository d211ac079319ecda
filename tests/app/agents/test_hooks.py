"""``evlog hook claude-code``: the contract with Claude Code.

Payloads are shaped like Claude Code's (``hook_event_name``, ``session_id``,
``transcript_path``, ``cwd``, ``source``/``reason``/``trigger``/``agent_transcript_path``...).
Whatever happens the hook exits 0 (it must never break a session), prints either nothing
or one hook-output JSON object, and says what went wrong on stderr; nothing is lost (the
next hook catches up). Real transcripts from ../shared/data/real are grown in temporary
folders to play a session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from eventlog.app import memory
from eventlog.app.agents.context import CLOSE_TAG, OPEN_TAG, memory_context
from eventlog.app.agents.hooks import handle_claude_code, project_folder_name
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from eventlog.events import MessageAppended
from eventlog.ingest import ingest_paths
from eventlog.lock import FileLock
from tests.conftest import REPO, real_data

EVLOG = os.path.join(os.path.dirname(sys.executable), "evlog")
SESSION = "4d5611e5-241a-462a-8d15-5122611a9569"


def payload(event: str, **fields) -> dict:  # noqa: ANN003
    base = {"session_id": SESSION, "transcript_path": "/nonexistent/t.jsonl", "cwd": "/tmp",
            "permission_mode": "default", "hook_event_name": event}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def run_hook(home: str, data, *args: str, timeout: float = 60, env: dict | None = None  # noqa: ANN001
             ) -> subprocess.CompletedProcess:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return subprocess.run([EVLOG, "--home", home, "hook", "claude-code", *args], input=raw, capture_output=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd=REPO)


def messages(home: str) -> list[MessageAppended]:
    ws = Workspace.open(home)
    try:
        return [e for e in ws.log.read() if isinstance(e, MessageAppended)]
    finally:
        ws.close()


def add_facts(home: str, project: str, n_project: int = 2, n_user: int = 2) -> None:
    with Workspace.open(home, writable=True) as ws:
        for i in range(n_project):
            memory.add(ws, f"Project fact {i}: tests run with pytest -x", section="Project Context", project=project)
        for i in range(n_user):
            memory.add(ws, f"User fact {i}: prefers short answers", section="Preferences")


# --- SessionStart: memory as context ---------------------------------------------------------------


def test_session_start_prints_project_then_user_facts_as_additional_context(workspace, tmp_path) -> None:
    project = str(tmp_path / "repo")
    os.makedirs(os.path.join(project, "src"))
    add_facts(workspace, project)
    r = run_hook(workspace, payload("SessionStart", source="startup", cwd=os.path.join(project, "src")))
    assert r.returncode == 0 and r.stderr == b""
    out = json.loads(r.stdout)
    assert list(out) == ["hookSpecificOutput"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert ctx.startswith(OPEN_TAG) and ctx.endswith(CLOSE_TAG)
    assert ctx.index("Project fact 0") < ctx.index("Project fact 1") < ctx.index("User fact 0")
    assert project in ctx


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_every_session_start_source_gets_the_memory(workspace, tmp_path, source: str) -> None:
    add_facts(workspace, str(tmp_path), n_project=0, n_user=1)
    res = handle_claude_code(payload("SessionStart", source=source, cwd=str(tmp_path)), home=workspace)
    assert "User fact 0" in json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]


def test_session_start_with_no_memory_prints_nothing(workspace, tmp_path) -> None:
    r = run_hook(workspace, payload("SessionStart", source="startup", cwd=str(tmp_path)))
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_the_context_stays_within_the_byte_budget_and_says_what_it_left_out(workspace, tmp_path) -> None:
    add_facts(workspace, str(tmp_path), n_project=60, n_user=60)
    for budget in (600, 1000, 4000):
        ctx = memory_context(workspace, str(tmp_path), budget=budget)
        assert len(ctx.text.encode()) <= budget
        assert ctx.facts > 0 and ctx.omitted == 120 - ctx.facts
        assert f"{ctx.omitted} more facts not shown" in ctx.text
    r = run_hook(workspace, payload("SessionStart", cwd=str(tmp_path)), "--budget", "800")
    assert r.returncode == 0 and len(json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"].encode()) <= 800


def test_session_start_on_a_big_workspace_reads_only_the_memory_files(workspace, tmp_path, monkeypatch) -> None:
    add_facts(workspace, str(tmp_path), n_project=1, n_user=1)
    import eventlog.log

    def no_log(*a, **k):  # noqa: ANN002, ANN003
        raise AssertionError("SessionStart opened the log")

    monkeypatch.setattr(eventlog.log.Log, "open", no_log)
    res = handle_claude_code(payload("SessionStart", cwd=str(tmp_path)), home=workspace)
    assert "Project fact 0" in res.stdout


def test_injected_context_is_never_learned_again(workspace, tmp_path) -> None:
    from processors.extract.text import own_text

    add_facts(workspace, str(tmp_path))
    ctx = memory_context(workspace, str(tmp_path)).text
    assert own_text(ctx) == ""


def test_user_prompt_submit_adds_the_matching_facts(workspace, tmp_path) -> None:
    from eventlog.app import recall

    add_facts(workspace, str(tmp_path), n_project=1, n_user=1)
    with Workspace.open(workspace, writable=True) as ws:
        memory.add(ws, "The staging database is called orca", section="Project Context", project=str(tmp_path))
        recall.rebuild(ws)
    res = handle_claude_code(payload("UserPromptSubmit", prompt="what is the staging database called?",
                                     cwd=str(tmp_path)), home=workspace)
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit" and "orca" in out["additionalContext"]
    nothing = handle_claude_code(payload("UserPromptSubmit", prompt="zebra quantum", cwd=str(tmp_path)),
                                 home=workspace)
    assert nothing.stdout == "" and nothing.notes == []


# --- capture: Stop, SubagentStop, PreCompact, SessionEnd ---------------------------------------------


@pytest.mark.parametrize("event", ["Stop", "SubagentStop", "PreCompact", "SessionEnd"])
def test_each_capture_event_ingests_the_transcript_and_prints_nothing(workspace, tmp_path, event: str) -> None:
    t = tmp_path / "t.jsonl"
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as f:
        t.write_bytes(f.read())
    extra = {"trigger": "auto"} if event == "PreCompact" else {"reason": "prompt_input_exit"} if event == "SessionEnd" else {}
    r = run_hook(workspace, payload(event, transcript_path=str(t), stop_hook_active=False, **extra))
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert len(messages(workspace)) > 3


def test_a_session_played_with_stop_hooks_equals_one_full_ingest(workspace, tmp_path) -> None:
    src = real_data("claude-spotter", f"{SESSION}.jsonl")
    with open(src, "rb") as f:
        data = f.read()
    t = tmp_path / "projects" / "-home-USER-spotter" / f"{SESSION}.jsonl"
    t.parent.mkdir(parents=True)
    t.write_bytes(b"")
    # a turn ends at each line that ends a Claude response (here: every 150th line); a last partial line stays
    cuts = [i + 1 for i, b in enumerate(data) if b == 0x0A][::150] + [len(data) - 7, len(data)]
    prev = 0
    for cut in cuts:
        with open(t, "ab") as f:
            f.write(data[prev:cut])
        prev = cut
        res = handle_claude_code(payload("Stop", transcript_path=str(t)), home=workspace)
        assert res.notes == [] and res.stdout == ""
    res = handle_claude_code(payload("SessionEnd", transcript_path=str(t), reason="other"), home=workspace)
    assert res.notes == []
    full = str(tmp_path / "full")
    init_workspace(full)
    ws = Workspace.open(full, writable=True)
    try:
        ingest_paths(ws.log, [src])
    finally:
        ws.close()
    assert [(m.message_id, m.content) for m in messages(workspace)] != []
    mine = {(m.session_key, m.message_id) for m in messages(workspace)}
    theirs = {(m.session_key, m.message_id) for m in messages(full)}
    assert mine == theirs and len(messages(workspace)) == len(mine)


def test_subagent_stop_also_ingests_the_agent_transcript(workspace, tmp_path) -> None:
    main = tmp_path / "main.jsonl"
    agent = tmp_path / SESSION / "subagents" / "agent-a2898e3.jsonl"
    agent.parent.mkdir(parents=True)
    with open(real_data("claude-spotter", f"{SESSION}.jsonl"), "rb") as f:
        main.write_bytes(f.read()[:20000].rsplit(b"\n", 1)[0] + b"\n")
    with open(real_data("claude-spotter", SESSION, "subagents", "agent-a2898e3.jsonl"), "rb") as f:
        agent.write_bytes(f.read())
    res = handle_claude_code(payload("SubagentStop", transcript_path=str(main), agent_id="a2898e3",
                                     agent_type="Explore", agent_transcript_path=str(agent)), home=workspace)
    assert res.notes == [] and len(res.ingested) == 2
    keys = {m.session_key for m in messages(workspace)}
    assert f"claude-code:{SESSION}" in keys and f"claude-code:{SESSION}/agent-a2898e3" in keys


def test_session_end_takes_an_unterminated_last_line(workspace, tmp_path) -> None:
    t = tmp_path / "t.jsonl"
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as f:
        t.write_bytes(f.read().rstrip(b"\n"))
    stop = handle_claude_code(payload("Stop", transcript_path=str(t)), home=workspace)
    assert stop.ingested[0].pending_bytes > 0
    end = handle_claude_code(payload("SessionEnd", transcript_path=str(t), reason="exit"), home=workspace)
    assert end.ingested[0].pending_bytes == 0


def test_a_missing_transcript_path_falls_back_to_claude_codes_layout(workspace, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    cwd = "/home/me/my.repo"
    t = tmp_path / "claude" / "projects" / project_folder_name(cwd) / f"{SESSION}.jsonl"
    t.parent.mkdir(parents=True)
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as f:
        t.write_bytes(f.read())
    res = handle_claude_code(payload("Stop", transcript_path=..., cwd=cwd), home=workspace)
    assert project_folder_name(cwd) == "-home-me-my-repo"
    assert res.notes == [] and res.ingested and res.ingested[0].file.messages > 0
    bad = handle_claude_code(payload("Stop", transcript_path=..., session_id="../../etc/x", cwd=cwd), home=workspace)
    assert bad.ingested == [] and "no transcript_path" in bad.notes[0]


def test_a_transcript_rewritten_shorter_is_read_again(workspace, tmp_path) -> None:
    t = tmp_path / "t.jsonl"
    with open(real_data("claude-spotter", "tool_heavy.jsonl"), "rb") as f:
        t.write_bytes(f.read())
    handle_claude_code(payload("Stop", transcript_path=str(t)), home=workspace)
    before = len(messages(workspace))
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as f:
        t.write_bytes(f.read())  # same path, shorter, other content
    res = handle_claude_code(payload("Stop", transcript_path=str(t)), home=workspace)
    assert res.notes == [] and "shrank" in res.ingested[0].reset
    assert len(messages(workspace)) > before


# --- never breaking Claude Code ---------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "note"), [
    (b"", "empty"),
    (b"not json", "not JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b'{"session_id": "x"}', "no 'hook_event_name'"),
    (b'{"hook_event_name": 7}', "must be a string"),
    (b'{"hook_event_name": "Stop", "transcript_path": 12}', "must be a string"),
    (b'{"hook_event_name": "Stop", "transcript_path": "/nonexistent/x.jsonl"}', "does not exist"),
    (b'{"hook_event_name": "SessionStart", "cwd": ["/tmp"]}', "must be a string"),
    (b'{"hook_event_name": "UserPromptSubmit", "prompt": null}', ""),
    (b'{"hook_event_name": "PreToolUse", "tool_name": "Bash"}', ""),
    (b'{"hook_event_name": "Stop", "transcript_path": "/"}', "is a directory"),  # what it is, not "does not exist" (issue 19)
])
def test_odd_input_exits_0_with_a_note_and_no_output(workspace, raw: bytes, note: str) -> None:
    r = run_hook(workspace, raw)
    assert r.returncode == 0
    assert r.stdout == b"" or json.loads(r.stdout)["hookSpecificOutput"]
    if note:
        assert note in r.stderr.decode() and r.stderr.decode().startswith("evlog hook: ")
    else:
        assert r.stderr == b""
    assert b"Traceback" not in r.stderr


def test_a_workspace_that_does_not_exist_is_a_note(tmp_path) -> None:
    t = tmp_path / "t.jsonl"
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as f:
        t.write_bytes(f.read())
    home = str(tmp_path / "nowhere")
    for event in ("Stop", "SessionStart"):
        r = run_hook(home, payload(event, transcript_path=str(t), cwd=str(tmp_path)))
        assert r.returncode == 0 and r.stdout == b"" and b"evlog init" in r.stderr
    assert not os.path.exists(home)


def test_a_damaged_workspace_is_a_note_and_the_transcript_is_read_after_repair(workspace, tmp_path) -> None:
    t = tmp_path / "t.jsonl"
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as f:
        t.write_bytes(f.read())
    with Workspace.open(workspace, writable=True) as ws:
        for i in range(20):
            ws.append([MessageAppended(session_key="k", message_id=str(i), role="user", content="x" * 60)])
    (seg,) = [n for n in os.listdir(os.path.join(workspace, "log")) if n.endswith(".jsonl")]
    path = os.path.join(workspace, "log", seg)
    with open(path, "r+b") as f:  # damage in the middle: intact records follow, so opening refuses to cut it
        f.seek(os.path.getsize(path) // 2)
        f.write(b"#####")
    r = run_hook(workspace, payload("Stop", transcript_path=str(t)))
    assert r.returncode == 0 and r.stdout == b"" and b"Traceback" not in r.stderr
    assert r.stderr.startswith(b"evlog hook: Stop: ") and b"evlog verify" in r.stderr
    repaired = subprocess.run([EVLOG, "--home", workspace, "repair", "--yes"], capture_output=True, timeout=60)
    assert repaired.returncode == 0, repaired.stderr
    r = run_hook(workspace, payload("Stop", transcript_path=str(t)))  # nothing was lost: read now
    assert (r.returncode, r.stderr) == (0, b"")
    assert any(m.session_key.startswith("claude-code:") for m in messages(workspace))


def test_a_locked_workspace_is_a_note_within_the_timeout_and_nothing_is_lost(workspace, tmp_path) -> None:
    t = tmp_path / "t.jsonl"
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as f:
        t.write_bytes(f.read())
    lock = FileLock(os.path.join(workspace, "log", "LOCK"))
    lock.acquire(1)
    try:
        started = time.monotonic()
        r = run_hook(workspace, payload("Stop", transcript_path=str(t)), env={"EVLOG_LOCK_TIMEOUT": "0.5"})
        took = time.monotonic() - started
    finally:
        lock.close()
    assert r.returncode == 0 and r.stdout == b"" and b"busy" in r.stderr and b"Traceback" not in r.stderr
    assert took < 10
    assert messages(workspace) == []
    r = run_hook(workspace, payload("Stop", transcript_path=str(t)))  # the next hook catches up
    assert r.returncode == 0 and r.stderr == b"" and len(messages(workspace)) > 3


def test_the_hook_gives_up_at_its_deadline_with_exit_0(workspace, tmp_path) -> None:
    t = tmp_path / "t.jsonl"
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as f:
        t.write_bytes(f.read())
    lock = FileLock(os.path.join(workspace, "log", "LOCK"))
    lock.acquire(1)
    try:
        started = time.monotonic()
        r = run_hook(workspace, payload("Stop", transcript_path=str(t)), "--timeout", "0.5",
                     env={"EVLOG_LOCK_TIMEOUT": "30"})
        took = time.monotonic() - started
    finally:
        lock.close()
    assert r.returncode == 0 and b"gave up after 0.5s" in r.stderr
    assert took < 5


def test_capture_reads_at_most_max_bytes_and_says_the_rest_comes_later(workspace, tmp_path) -> None:
    t = tmp_path / "t.jsonl"
    with open(real_data("claude-spotter", f"{SESSION}.jsonl"), "rb") as f:
        t.write_bytes(f.read())
    res = handle_claude_code(payload("Stop", transcript_path=str(t)), home=workspace, max_bytes=100_000)
    r = res.ingested[0]
    assert r.bytes_read <= 170_000 and r.pending_bytes > 0 and "the next hook" in res.notes[0]
    while res.ingested and res.ingested[0].pending_bytes:
        res = handle_claude_code(payload("Stop", transcript_path=str(t)), home=workspace, max_bytes=1_000_000)
    assert {m.session_key for m in messages(workspace)} == {f"claude-code:{SESSION}"}


def test_the_cli_path_never_raises(cli_runner, workspace, tmp_path) -> None:
    r = cli_runner.invoke(cli, ["--home", workspace, "hook", "claude-code"], input="{broken")
    assert r.exit_code == 0 and r.stdout == "" and "not JSON" in r.stderr
    t = tmp_path / "t.jsonl"
    t.write_bytes(b'{"type": "user", "uuid": 5}\n')  # a transcript line of the wrong shape
    r = cli_runner.invoke(cli, ["--home", workspace, "hook", "claude-code"],
                          input=json.dumps(payload("Stop", transcript_path=str(t))))
    assert r.exit_code == 0 and f"{t}:1:" in r.stderr and "'uuid' must be a string" in r.stderr


#: What a capture hook with nothing new to read does not import (the ingest code, msgspec, the log, the CLI).
NOT_ON_A_QUIET_CAPTURE = ("eventlog.ingest", "eventlog.log", "eventlog.app.workspace", "msgspec", "click")


@pytest.mark.parametrize("event", ["Stop", "PreCompact", "SessionEnd"])
def test_a_capture_hook_with_nothing_new_to_read_imports_no_ingest_or_log_code(workspace, tmp_path, event) -> None:  # noqa: ANN001
    transcript = str(tmp_path / "t.jsonl")
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as src, open(transcript, "wb") as dst:
        dst.write(src.read())
    probe = ("import sys, atexit\n"
             f"atexit.register(lambda: sys.stderr.write('HEAVY=%s\\n' % sorted(m for m in {NOT_ON_A_QUIET_CAPTURE!r} "
             "if m in sys.modules)))\n"
             "from eventlog.entry import main\n"
             f"sys.argv = ['evlog', '--home', {workspace!r}, 'hook', 'claude-code']\n"
             "main()\n")
    env = {**os.environ, "PYTHONPATH": REPO}
    env.pop("EVLOG_HEADLESS", None)

    def hook() -> subprocess.CompletedProcess:
        raw = json.dumps(payload(event, transcript_path=transcript, cwd=str(tmp_path))).encode()
        return subprocess.run([sys.executable, "-c", probe], input=raw, capture_output=True, timeout=60, env=env)

    first, again = hook(), hook()
    stored = messages(workspace)
    assert first.returncode == again.returncode == 0 and first.stdout == again.stdout == b""
    assert stored and first.stderr.decode().startswith("HEAVY=[")  # the first read the transcript, no note
    assert "'eventlog.log'" in first.stderr.decode()
    assert again.stderr == b"HEAVY=[]\n"  # nothing new: answered from the source's state alone, no note
    with open(transcript, "ab") as f:  # it grows: the next hook reads the new line
        f.write(json.dumps({"type": "user", "sessionId": "55604662-cf2a-4331-851a-ec234028f8ca", "uuid": "u-new",
                            "parentUuid": None, "cwd": "/home/marco/projects/spotter", "timestamp": "2026-02-10T22:00:00Z",
                            "message": {"role": "user", "content": "one more line"}}).encode() + b"\n")
    grown = hook()
    assert grown.returncode == 0 and "'eventlog.log'" in grown.stderr.decode()
    assert len(messages(workspace)) == len(stored) + 1
