"""``evlog setup claude-code``: merging evlog into Claude Code's settings files.

Every test works in a temporary HOME (and ``CLAUDE_CONFIG_DIR``): the real ``~/.claude``
is never touched.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from eventlog.app.agents import setup as st
from eventlog.cli import cli

HOOK_EVENTS = ["SessionStart", "Stop", "SubagentStop", "PreCompact", "SessionEnd"]

EXISTING_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run lint)", "Read(~/.zshrc)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bär"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "bash hooks/guard.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
        "SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": "cat notes.md"}]}],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}
EXISTING_CLAUDE_JSON = {
    "numStartups": 42,
    "projects": {"/home/me/repo": {"allowedTools": [], "mcpServers": {"local": {"command": "x"}}}},
    "mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                              "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}},
    "oauthAccount": {"emailAddress": "me@example.com"},
}


@pytest.fixture
def claude_home(tmp_path, monkeypatch):
    """A HOME with an empty ~/.claude, and CLAUDE_CONFIG_DIR unset (the default layout)."""
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


def write_json(path, value, **dump) -> str:  # noqa: ANN001, ANN003
    text = json.dumps(value, **({"indent": 2} | dump)) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def evlog_hooks(settings: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for event, groups in settings.get("hooks", {}).items():
        for g in groups:
            for h in g.get("hooks", []):
                if st.is_evlog_hook(h):
                    out.setdefault(event, []).append(h)
    return out


# --- a fresh machine --------------------------------------------------------------------------------


def test_a_fresh_setup_adds_five_hooks_and_the_mcp_server(claude_home) -> None:
    plan = st.plan_claude_code(home=str(claude_home / "ws"), program="/opt/venv/bin/evlog")
    written = st.apply(plan)
    assert [c.path for c in written] == [str(claude_home / ".claude" / "settings.json"),
                                         str(claude_home / ".claude.json")]
    settings = json.loads((claude_home / ".claude" / "settings.json").read_text())
    hooks = evlog_hooks(settings)
    assert sorted(hooks) == sorted(HOOK_EVENTS) and all(len(v) == 1 for v in hooks.values())
    cmd = hooks["Stop"][0]["command"]
    assert cmd == f"/opt/venv/bin/evlog --home {claude_home / 'ws'} hook claude-code"
    assert hooks["SessionEnd"][0]["timeout"] == 10 and hooks["Stop"][0]["type"] == "command"
    server = json.loads((claude_home / ".claude.json").read_text())["mcpServers"]["evlog"]
    assert server == {"type": "stdio", "command": "/opt/venv/bin/evlog", "args": ["--home", str(claude_home / "ws"), "mcp"]}
    assert not any(c.backup for c in written)  # nothing existed to back up


def test_the_default_workspace_is_not_spelled_out(claude_home) -> None:
    plan = st.plan_claude_code(home=str(claude_home / ".evlog"), program="evlog")
    assert plan.command == "evlog hook claude-code" and plan.server["args"] == ["mcp"]


def test_claude_config_dir_is_honoured(claude_home, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    plan = st.plan_claude_code(home=str(tmp_path / "ws"))
    assert [c.path for c in plan.changes] == [str(tmp_path / "cfg" / "settings.json"), str(tmp_path / "cfg" / ".claude.json")]


# --- existing settings ----------------------------------------------------------------------------------


def test_every_existing_key_hook_and_server_is_kept_in_order(claude_home) -> None:
    sp = claude_home / ".claude" / "settings.json"
    mp = claude_home / ".claude.json"
    old_settings = write_json(sp, EXISTING_SETTINGS)
    old_mcp = write_json(mp, EXISTING_CLAUDE_JSON, indent=4)
    written = st.apply(st.plan_claude_code(home=str(claude_home / "ws"), program="evlog"))
    new = json.loads(sp.read_text())
    assert list(new) == list(EXISTING_SETTINGS)  # same keys, same order
    for key in EXISTING_SETTINGS:
        if key != "hooks":
            assert new[key] == EXISTING_SETTINGS[key]
    for event, groups in EXISTING_SETTINGS["hooks"].items():  # other hooks untouched, ours after them
        assert new["hooks"][event][: len(groups)] == groups
    assert sorted(evlog_hooks(new)) == sorted(HOOK_EVENTS)
    mcp = json.loads(mp.read_text())
    assert list(mcp) == list(EXISTING_CLAUDE_JSON)
    assert mcp["mcpServers"]["github"] == EXISTING_CLAUDE_JSON["mcpServers"]["github"]
    assert list(mcp["mcpServers"]) == ["github", "evlog"] and mcp["projects"] == EXISTING_CLAUDE_JSON["projects"]
    assert mp.read_text().splitlines()[1].startswith("    \"")  # its 4-space indentation kept
    backups = {c.path: c.backup for c in written}
    with open(backups[str(sp)], encoding="utf-8") as f:
        assert f.read() == old_settings
    with open(backups[str(mp)], encoding="utf-8") as f:
        assert f.read() == old_mcp


def test_unusual_formatting_is_read_and_its_indentation_kept(claude_home) -> None:
    sp = claude_home / ".claude" / "settings.json"
    sp.write_bytes(b'{\r\n\t"env" :{"A":"\\u00e9",   "B" : "\\ud83d\\ude00"},\r\n\t"hooks":{ }  ,"n":1.0e2}\r\n')
    st.apply(st.plan_claude_code(home=str(claude_home / "ws"), program="evlog"))
    text = sp.read_text(encoding="utf-8")
    new = json.loads(text)
    assert new["env"] == {"A": "é", "B": "😀"} and new["n"] == 100.0
    assert text.splitlines()[1].startswith('\t"env"')
    assert sorted(evlog_hooks(new)) == sorted(HOOK_EVENTS)


def test_running_it_twice_changes_nothing(claude_home) -> None:
    sp = claude_home / ".claude" / "settings.json"
    mp = claude_home / ".claude.json"
    write_json(sp, EXISTING_SETTINGS)
    write_json(mp, EXISTING_CLAUDE_JSON)
    st.apply(st.plan_claude_code(home=str(claude_home / "ws"), program="evlog"))
    before = (sp.read_bytes(), mp.read_bytes(), os.stat(sp).st_mtime_ns, os.stat(mp).st_mtime_ns)
    backup = (sp.parent / "settings.json.evlog.bak").read_bytes()
    plan = st.plan_claude_code(home=str(claude_home / "ws"), program="evlog")
    assert plan.changed == [] and st.apply(plan) == []
    assert (sp.read_bytes(), mp.read_bytes(), os.stat(sp).st_mtime_ns, os.stat(mp).st_mtime_ns) == before
    assert (sp.parent / "settings.json.evlog.bak").read_bytes() == backup


def test_a_moved_evlog_is_updated_in_place_keeping_an_edited_timeout(claude_home) -> None:
    sp = claude_home / ".claude" / "settings.json"
    st.apply(st.plan_claude_code(home=str(claude_home / "ws"), program="/old/bin/evlog"))
    settings = json.loads(sp.read_text())
    settings["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 99
    write_json(sp, settings)
    st.apply(st.plan_claude_code(home=str(claude_home / "ws"), program="/new/bin/evlog"))
    hooks = evlog_hooks(json.loads(sp.read_text()))
    assert all(len(v) == 1 and v[0]["command"].startswith("/new/bin/evlog ") for v in hooks.values())
    assert hooks["Stop"][0]["timeout"] == 99
    server = json.loads((claude_home / ".claude.json").read_text())["mcpServers"]["evlog"]
    assert server["command"] == "/new/bin/evlog"


def test_uninstall_removes_exactly_what_setup_added(claude_home) -> None:
    sp = claude_home / ".claude" / "settings.json"
    mp = claude_home / ".claude.json"
    write_json(sp, EXISTING_SETTINGS)
    write_json(mp, EXISTING_CLAUDE_JSON)
    st.apply(st.plan_claude_code(home=str(claude_home / "ws"), program="evlog", prompt_context=True))
    assert "UserPromptSubmit" in evlog_hooks(json.loads(sp.read_text()))
    st.apply(st.plan_claude_code(home=str(claude_home / "ws"), program="evlog", uninstall=True))
    assert json.loads(sp.read_text()) == EXISTING_SETTINGS
    assert json.loads(mp.read_text()) == EXISTING_CLAUDE_JSON


def test_uninstall_after_a_fresh_setup_leaves_empty_objects(claude_home) -> None:
    st.apply(st.plan_claude_code(home=str(claude_home / "ws")))
    st.apply(st.plan_claude_code(home=str(claude_home / "ws"), uninstall=True))
    assert json.loads((claude_home / ".claude" / "settings.json").read_text()) == {}
    assert json.loads((claude_home / ".claude.json").read_text()) == {}
    assert st.plan_claude_code(home=str(claude_home / "ws"), uninstall=True).changed == []


def test_an_mcp_server_named_evlog_that_is_not_evlog_is_left_alone_on_uninstall(claude_home) -> None:
    mp = claude_home / ".claude.json"
    write_json(mp, {"mcpServers": {"evlog": {"command": "node", "args": ["other.js"]}}})
    plan = st.plan_claude_code(home=str(claude_home / "ws"), uninstall=True)
    assert not plan.changes[1].changed and "does not run evlog" in plan.changes[1].summary[0]


# --- refusing to break files ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "where"), [
    ('{\n  // a comment\n  "model": "opus"\n}\n', ":2:3:"),
    ('{\n  "model": "opus",\n}\n', ":3:1:"),
    ('["not", "an", "object"]', "top level must be a JSON object"),
    ('{"hooks": []}', "'hooks' must be an object"),
    ('{"hooks": {"Stop": {"command": "x"}}}', "hooks.Stop must be a list"),
])
def test_a_settings_file_that_cannot_be_merged_is_reported_and_nothing_changes(claude_home, text: str, where: str) -> None:
    sp = claude_home / ".claude" / "settings.json"
    sp.write_text(text, encoding="utf-8")
    with pytest.raises(st.SetupError, match="nothing was changed") as e:
        st.plan_claude_code(home=str(claude_home / "ws"))
    assert str(sp) in str(e.value) and where in str(e.value)
    assert sp.read_text(encoding="utf-8") == text and not (claude_home / ".claude.json").exists()


def test_a_bad_mcp_servers_value_is_reported(claude_home) -> None:
    write_json(claude_home / ".claude.json", {"mcpServers": "nope"})
    with pytest.raises(st.SetupError, match="'mcpServers' must be an object"):
        st.plan_claude_code(home=str(claude_home / "ws"))


def test_a_read_only_file_is_reported_and_neither_file_changes(claude_home) -> None:
    sp = claude_home / ".claude" / "settings.json"
    mp = claude_home / ".claude.json"
    write_json(sp, {"model": "opus"})
    write_json(mp, EXISTING_CLAUDE_JSON)
    os.chmod(mp, 0o444)
    before = (sp.read_bytes(), mp.read_bytes())
    plan = st.plan_claude_code(home=str(claude_home / "ws"))
    with pytest.raises(st.SetupError, match="read-only; nothing was changed"):
        st.apply(plan)
    assert (sp.read_bytes(), mp.read_bytes()) == before


def test_a_failed_second_write_puts_the_first_file_back(claude_home, monkeypatch) -> None:
    sp = claude_home / ".claude" / "settings.json"
    mp = claude_home / ".claude.json"
    old = write_json(sp, EXISTING_SETTINGS)
    write_json(mp, EXISTING_CLAUDE_JSON)
    real = st._atomic_write_text

    def failing(path: str, text: str, mode):  # noqa: ANN001
        if path == str(mp):
            raise OSError(28, "No space left on device", path)
        real(path, text, mode)

    monkeypatch.setattr(st, "_atomic_write_text", failing)
    with pytest.raises(st.SetupError, match="No space left on device"):
        st.apply(st.plan_claude_code(home=str(claude_home / "ws")))
    assert sp.read_text(encoding="utf-8") == old


def test_a_file_changed_between_reading_and_writing_is_merged_again(claude_home) -> None:
    mp = claude_home / ".claude.json"
    write_json(mp, EXISTING_CLAUDE_JSON)
    plan = st.plan_claude_code(home=str(claude_home / "ws"))
    changed = dict(EXISTING_CLAUDE_JSON, numStartups=43, tipsHistory={"x": 1})  # Claude Code wrote it meanwhile
    write_json(mp, changed)
    st.apply(plan)
    final = json.loads(mp.read_text())
    assert final["numStartups"] == 43 and final["tipsHistory"] == {"x": 1} and "evlog" in final["mcpServers"]


# --- scopes, dry run, the command line ------------------------------------------------------------------


def test_project_scope_writes_the_projects_files(claude_home, tmp_path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    write_json(project / ".mcp.json", {"mcpServers": {"db": {"command": "pg-mcp"}}})
    st.apply(st.plan_claude_code(scope="project", project_dir=str(project), home=str(tmp_path / "ws"), program="evlog"))
    assert sorted(evlog_hooks(json.loads((project / ".claude" / "settings.json").read_text()))) == sorted(HOOK_EVENTS)
    assert list(json.loads((project / ".mcp.json").read_text())["mcpServers"]) == ["db", "evlog"]
    assert not (claude_home / ".claude" / "settings.json").exists()


def test_dry_run_shows_the_diff_and_writes_nothing(cli_runner, claude_home, tmp_path) -> None:
    sp = claude_home / ".claude" / "settings.json"
    write_json(sp, EXISTING_SETTINGS)
    home = str(tmp_path / "ws")
    r = cli_runner.invoke(cli, ["--home", home, "setup", "claude-code", "--dry-run", "--command", "evlog"],
                          env={"HOME": str(claude_home)})
    assert r.exit_code == 0, r.output
    assert f"--- {sp}" in r.stdout and f"+++ {sp}" in r.stdout and "+++ " + str(claude_home / ".claude.json") in r.stdout
    added = [ln for ln in r.stdout.splitlines() if ln.startswith("+") and '"command": "evlog --home' in ln]
    assert len(added) == len(HOOK_EVENTS)
    assert json.loads(sp.read_text()) == EXISTING_SETTINGS and not (claude_home / ".claude.json").exists()
    assert not os.path.exists(home)  # a dry run does not even create the workspace


def test_the_command_line_sets_up_creates_the_workspace_and_is_idempotent(cli_runner, claude_home, tmp_path) -> None:
    home = str(tmp_path / "ws")
    env = {"HOME": str(claude_home)}
    r = cli_runner.invoke(cli, ["--home", home, "setup", "claude-code"], env=env)
    assert r.exit_code == 0, r.output
    assert "updated" in r.stderr and os.path.exists(os.path.join(home, "evlog.json"))
    r = cli_runner.invoke(cli, ["--home", home, "setup", "claude-code"], env=env)
    assert r.exit_code == 0 and "already set up" in r.stderr
    r = cli_runner.invoke(cli, ["--home", home, "setup", "claude-code"], env=env | {"HOME": str(tmp_path / "x")})
    assert r.exit_code == 0
    (claude_home / ".claude" / "settings.json").write_text("{,}")
    r = cli_runner.invoke(cli, ["--home", home, "setup", "claude-code"], env=env)
    assert r.exit_code == 3 and "not valid JSON" in r.stderr and "Traceback" not in r.output


def test_the_hook_command_written_to_the_settings_runs(claude_home, tmp_path) -> None:
    home = str(tmp_path / "ws")
    from eventlog.app.workspace import init_workspace

    init_workspace(home)
    st.apply(st.plan_claude_code(home=home))
    settings = json.loads((claude_home / ".claude" / "settings.json").read_text())
    cmd = evlog_hooks(settings)["SessionStart"][0]["command"]
    r = subprocess.run(cmd, shell=True, input=b'{"hook_event_name": "SessionStart", "cwd": "/tmp"}',
                       capture_output=True, timeout=60)
    assert r.returncode == 0 and r.stderr == b""
    server = json.loads((claude_home / ".claude.json").read_text())["mcpServers"]["evlog"]
    r = subprocess.run([server["command"], *server["args"][:-1], "mcp", "--help"], capture_output=True, timeout=60)
    assert r.returncode == 0 and b"MCP" in r.stdout


def test_evlog_hooks_are_recognised_by_their_command() -> None:
    ok = ["evlog hook claude-code", "/x/.venv/bin/evlog --home '/a b' hook claude-code",
          "EVLOG_HOME=/w evlog hook claude-code --budget 4000"]
    not_ok = ["bash guard.sh", "echo evlog", "python -m evlog_other hook x", "evlog hook codex", "hook claude-code",
              "'unbalanced"]
    assert all(st.is_evlog_hook({"type": "command", "command": c}) for c in ok)
    assert not any(st.is_evlog_hook({"type": "command", "command": c}) for c in not_ok)
    assert not st.is_evlog_hook({"type": "command"}) and not st.is_evlog_hook("evlog hook claude-code")
