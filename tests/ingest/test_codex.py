"""Codex (issue 24): ``evlog setup codex`` round-trips a real-looking ~/.codex, ``evlog hook codex`` handles
Codex's payloads, and Codex's injected turns are stored as harness text."""

from __future__ import annotations

import json
import os
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from eventlog.ingest import parse_file
from processors.dream import Entry
from processors.extract.text import skip_reason
from tests.conftest import real_data

CODEX_REAL = ("agent-history-real-sessions", "codex-session-01.jsonl")


# --------------------------------------------------------------------------- harness text


def _entry(m) -> Entry:  # noqa: ANN001
    return Entry(ref="m", seq=1, session_key="codex:x", message_id=m.message_id, project="", speaker="user",
                 role=m.role, time=m.timestamp, text=m.content, meta=m.extra)


def test_codex_developer_prompt_and_environment_context_are_harness_text():
    parsed = parse_file(real_data(*CODEX_REAL))
    (session,) = parsed.sessions
    by_text = {m.content.split("\n")[0]: m for m in session.messages}
    env = by_text["<environment_context>"]
    dev = by_text["[REDACTED_DEVELOPER_CONTEXT]"]
    prompt = by_text["[REDACTED_PROMPT]"]
    assert env.role == "user" and env.extra.get("isMeta") is True and env.extra.get("harness") == "environment_context"
    assert dev.role == "system" and dev.extra.get("isMeta") is True and dev.extra.get("harness") == "developer"
    assert "isMeta" not in prompt.extra and "harness" not in prompt.extra
    assert skip_reason(_entry(env)) is not None
    assert skip_reason(_entry(prompt)) is None


@pytest.mark.parametrize("text,name", [
    ("<user_instructions>\nAlways answer in French.\n</user_instructions>", "user_instructions"),
    ("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nuse ruff\n</INSTRUCTIONS>", "agents_md"),
    ("<turn_aborted>\nThe user interrupted the turn.\n</turn_aborted>", "turn_aborted"),
])
def test_codex_other_injected_user_turns_are_harness_text(tmp_path, text, name):
    rollout = tmp_path / "rollout-2026-06-05T04-58-20-0000.jsonl"
    lines = [{"timestamp": "2026-06-05T04:58:20Z", "type": "session_meta", "payload": {"id": "s1", "cwd": "/repo"}},
             {"timestamp": "2026-06-05T04:58:21Z", "type": "response_item",
              "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}},
             {"timestamp": "2026-06-05T04:58:22Z", "type": "response_item",
              "payload": {"type": "message", "role": "user",
                          "content": [{"type": "input_text", "text": "<b>bold</b> is what I want"}]}}]
    rollout.write_text("".join(json.dumps(x) + "\n" for x in lines))
    first, second = parse_file(str(rollout)).sessions[0].messages
    assert first.extra.get("isMeta") is True and first.extra.get("harness") == name
    assert "isMeta" not in second.extra  # a user's own text that happens to start with a tag


# --------------------------------------------------------------------------- evlog setup codex

CONFIG_TOML = '''# Codex settings, written by hand
model = "gpt-5.5"
model_reasoning_effort = "high"   # keep this comment

[features]
web_search_request = true  # and this one

[mcp_servers.docs]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
env = { "DOCS_TOKEN" = "not-a-secret" }

[profiles.fast]
model = "gpt-5.5-mini"

[projects."/home/dev/shop"]
trust_level = "trusted"'''  # no final newline, as editors leave it

HOOKS_JSON = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send 'codex is done'",
                                             "timeout": 5}]}]}}


@pytest.fixture
def codex_dir(tmp_path, monkeypatch):
    """A real-looking ~/.codex: a hand-written config.toml, a hooks.json with the user's own hook, sessions/."""
    root = tmp_path / "user" / ".codex"
    (root / "sessions" / "2026" / "06" / "05").mkdir(parents=True)
    (root / "config.toml").write_text(CONFIG_TOML)
    (root / "hooks.json").write_text(json.dumps(HOOKS_JSON, indent=2) + "\n")
    (root / "auth.json").write_text('{"OPENAI_API_KEY": null}\n')
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("CODEX_HOME", str(root))
    return root


def _setup(home, *args):  # noqa: ANN001, ANN002, ANN202
    from click.testing import CliRunner

    from eventlog.cli import cli

    return CliRunner().invoke(cli, ["--home", str(home), "setup", "codex", "--command", "/opt/evlog/bin/evlog", *args])


def _subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(line in it for line in small)


def test_setup_codex_adds_hooks_flag_and_server_and_keeps_every_other_key_and_comment(codex_dir, evlog_home):
    r = _setup(evlog_home)
    assert r.exit_code == 0, r.stderr
    text = (codex_dir / "config.toml").read_text()
    doc = tomllib.loads(text)
    old = tomllib.loads(CONFIG_TOML)
    assert doc["features"] == {**old["features"], "codex_hooks": True}
    assert doc["mcp_servers"]["evlog"] == {"command": "/opt/evlog/bin/evlog",
                                           "args": ["--home", str(evlog_home), "mcp"]}
    del doc["features"]["codex_hooks"], doc["mcp_servers"]["evlog"]
    old["features"].pop("codex_hooks", None)
    assert doc == old  # every other key, as it was
    assert _subsequence(CONFIG_TOML.splitlines(), text.splitlines())  # every line and comment, in order
    hooks = json.loads((codex_dir / "hooks.json").read_text())["hooks"]
    assert hooks["Stop"][0] == HOOKS_JSON["hooks"]["Stop"][0]  # the user's own hook first, untouched
    for event in ("SessionStart", "Stop", "PreCompact"):
        cmds = [h["command"] for g in hooks[event] for h in g["hooks"]]
        assert f"/opt/evlog/bin/evlog --home {evlog_home} hook codex" in cmds
    assert "UserPromptSubmit" not in hooks
    assert (codex_dir / "config.toml.evlog.bak").read_text() == CONFIG_TOML
    assert (codex_dir / "auth.json").read_text() == '{"OPENAI_API_KEY": null}\n'


def test_setup_codex_twice_changes_nothing_and_uninstall_restores_the_files(codex_dir, evlog_home):
    hooks_before = (codex_dir / "hooks.json").read_text()
    assert _setup(evlog_home).exit_code == 0
    after = {p: (codex_dir / p).read_bytes() for p in ("config.toml", "hooks.json")}
    again = _setup(evlog_home)
    assert again.exit_code == 0 and "already set up for Codex" in again.stderr
    assert {p: (codex_dir / p).read_bytes() for p in after} == after
    r = _setup(evlog_home, "--uninstall")
    assert r.exit_code == 0, r.stderr
    assert (codex_dir / "config.toml").read_text() == CONFIG_TOML  # byte for byte
    assert json.loads((codex_dir / "hooks.json").read_text()) == json.loads(hooks_before)
    assert "nothing to remove" in _setup(evlog_home, "--uninstall").stderr


def test_setup_codex_dry_run_shows_the_diff_and_writes_nothing(codex_dir, evlog_home):
    before = {p.name: p.read_bytes() for p in codex_dir.iterdir() if p.is_file()}
    r = _setup(evlog_home, "--dry-run")
    assert r.exit_code == 0
    assert "+[mcp_servers.evlog]" in r.stdout and "+codex_hooks = true" in r.stdout and "hook codex" in r.stdout
    assert {p.name: p.read_bytes() for p in codex_dir.iterdir() if p.is_file()} == before
    assert not os.path.exists(evlog_home)


def test_setup_codex_on_a_fresh_machine_creates_both_files(tmp_path, monkeypatch, evlog_home):
    root = tmp_path / "fresh" / ".codex"
    monkeypatch.setenv("CODEX_HOME", str(root))
    assert _setup(evlog_home, "--prompt-context").exit_code == 0
    doc = tomllib.loads((root / "config.toml").read_text())
    assert doc["features"] == {"codex_hooks": True} and doc["mcp_servers"]["evlog"]["args"][-1] == "mcp"
    hooks = json.loads((root / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "Stop", "PreCompact", "UserPromptSubmit"}
    assert _setup(evlog_home, "--uninstall").exit_code == 0
    assert tomllib.loads((root / "config.toml").read_text()) == {}


def test_invalid_toml_is_reported_with_its_line_and_nothing_changes(codex_dir, evlog_home):
    (codex_dir / "config.toml").write_text(CONFIG_TOML + "\n[broken\n")
    before = {p.name: p.read_bytes() for p in codex_dir.iterdir() if p.is_file()}
    r = _setup(evlog_home)
    assert r.exit_code == 3
    assert "config.toml" in r.stderr and "line 18" in r.stderr and "nothing was changed" in r.stderr
    assert {p.name: p.read_bytes() for p in codex_dir.iterdir() if p.is_file()} == before


def test_an_mcp_server_named_evlog_written_by_hand_is_left_alone(codex_dir, evlog_home):
    own = CONFIG_TOML + '\n\n[mcp_servers.evlog]\ncommand = "/home/dev/bin/evlog-dev"\nargs = ["mcp"]\n'
    (codex_dir / "config.toml").write_text(own)
    r = _setup(evlog_home)
    assert r.exit_code == 0 and "written by hand" in r.stderr
    doc = tomllib.loads((codex_dir / "config.toml").read_text())
    assert doc["mcp_servers"]["evlog"]["command"] == "/home/dev/bin/evlog-dev"
    assert doc["features"]["codex_hooks"] is True


def test_a_features_flag_turned_off_by_the_user_is_kept_and_said(codex_dir, evlog_home):
    (codex_dir / "config.toml").write_text(CONFIG_TOML.replace("web_search_request = true", "codex_hooks = false"))
    r = _setup(evlog_home)
    assert r.exit_code == 0 and "codex_hooks is False" in r.stderr
    assert tomllib.loads((codex_dir / "config.toml").read_text())["features"]["codex_hooks"] is False


# --------------------------------------------------------------------------- evlog hook codex


def _codex_payload(event: str, **fields):  # noqa: ANN003, ANN202
    base = {"session_id": "019e9625-802f-7e91-840a-cfe88d14117a", "transcript_path": None, "cwd": "/tmp",
            "hook_event_name": event, "model": "gpt-5.5"}
    return {**base, **fields}


@pytest.mark.parametrize("event", ["Stop", "PreCompact"])
def test_stop_and_precompact_capture_the_rollout(workspace, event):
    from eventlog.app.agents.codex_hooks import handle_codex
    from eventlog.app.workspace import Workspace

    path = real_data(*CODEX_REAL)
    extra = {"stop_hook_active": False, "last_assistant_message": "done", "turn_id": "t1"} if event == "Stop" else {
        "trigger": "auto", "turn_id": "t1"}
    res = handle_codex(_codex_payload(event, transcript_path=path, **extra), home=workspace)
    assert res.stdout == "" and not res.notes, res.notes
    with Workspace.open(workspace) as ws:
        keys = {e.session_key for e in ws.log.read() if e.type == "message.appended"}
    assert keys == {"codex:019e9625-802f-7e91-840a-cfe88d14117a"}


def test_a_null_transcript_path_finds_the_sessions_rollout_file(workspace, codex_dir):
    from eventlog.app.agents.codex_hooks import handle_codex

    sid = "019e0000-aaaa-7000-8000-000000000001"
    rollout = codex_dir / "sessions" / "2026" / "06" / "05" / f"rollout-2026-06-05T04-58-20-{sid}.jsonl"
    rollout.write_text(json.dumps({"timestamp": "2026-06-05T04:58:20Z", "type": "session_meta",
                                   "payload": {"id": sid, "cwd": "/repo"}}) + "\n" + json.dumps(
        {"timestamp": "2026-06-05T04:58:21Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}}) + "\n")
    res = handle_codex(_codex_payload("Stop", session_id=sid), home=workspace)
    assert not res.notes and res.ingested and res.ingested[0].file.messages == 1
    res = handle_codex(_codex_payload("Stop", session_id="no-such-session"), home=workspace)
    assert "no rollout file" in res.notes[0] and not res.ingested


def test_session_start_gives_the_memory_in_codexs_output_shape(workspace, tmp_path):
    from eventlog.app import memory
    from eventlog.app.agents.codex_hooks import handle_codex
    from eventlog.app.workspace import Workspace

    with Workspace.open(workspace, writable=True) as ws:
        memory.add(ws, "The project runs its tests with pytest -x", section="Project Context", project=str(tmp_path))
    res = handle_codex(_codex_payload("SessionStart", source="startup", cwd=str(tmp_path)), home=workspace)
    out = json.loads(res.stdout)
    # Codex's session-start.command.output schema: hookSpecificOutput {hookEventName, additionalContext}, nothing else
    assert list(out) == ["hookSpecificOutput"]
    assert set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "pytest -x" in out["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("raw", [b"", b"not json", b"[]", b'{"hook_event_name": 3}',
                                 b'{"hook_event_name": "Stop", "transcript_path": "/nonexistent/rollout.jsonl"}'])
def test_the_codex_hook_exits_0_with_a_note_on_odd_input(workspace, raw):
    from click.testing import CliRunner

    from eventlog.cli import cli

    r = CliRunner().invoke(cli, ["--home", workspace, "hook", "codex"], input=raw)
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr.startswith("evlog hook: ")


@pytest.mark.parametrize("original", ["", "\n\n", "# only a comment", "model = \"o3\"\n\n\n", "[features]\nx = 1",
                                      "a = 1\r\nb = 2\r\n"])
def test_edit_and_strip_give_back_any_file_byte_for_byte(original):
    from eventlog.app.agents.codex_setup import edit_config, strip_evlog

    server = {"command": "/opt/evlog", "args": ["mcp"]}
    added, _ = edit_config(original, server=server, feature=True)
    assert tomllib.loads(added)["mcp_servers"]["evlog"] == server and tomllib.loads(added)["features"]["codex_hooks"]
    assert strip_evlog(added) == original
    assert edit_config(added, server=server, feature=True)[0] == added  # idempotent
    assert edit_config(added, server=None, feature=False)[0] == original


_LINES = ["", "# a comment", 'model = "gpt-5.5"', "approval_policy = \"never\"  # why", "[features]", "web_search = true",
          "codex_hooks = false", "[mcp_servers.docs]", 'command = "npx"', 'args = ["-y", "docs"]', "[profiles.fast]",
          "[mcp_servers.evlog]", 'command = "/home/me/evlog"', "   ", "\t# indented comment"]


@settings(max_examples=150, deadline=None)
@given(st_lines=hst.lists(hst.sampled_from(_LINES), max_size=12), eol=hst.sampled_from(["\n", "\r\n"]),
       final=hst.booleans())
def test_any_valid_config_round_trips_and_keeps_every_key(st_lines, eol, final):
    from eventlog.app.agents.codex_setup import edit_config
    from eventlog.app.agents.setup import SetupError

    text = eol.join(st_lines) + (eol if final and st_lines else "")
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return  # not a config Codex would read either
    server = {"command": "/opt/evlog", "args": ["mcp"]}
    try:
        added, _said = edit_config(text, server=server, feature=True)
    except SetupError as e:
        assert "by hand" in str(e)  # refused, never half-done
        return
    after = tomllib.loads(added)
    for key, value in before.items():  # every key the user had is there, with its value
        if isinstance(value, dict):
            ours = {("features", "codex_hooks"), ("mcp_servers", "evlog")}
            assert {k: v for k, v in after[key].items() if (key, k) not in ours or k in value} == value
        else:
            assert after[key] == value
    assert edit_config(added, server=None, feature=False)[0] == text
