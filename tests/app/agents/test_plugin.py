"""The Claude Code plugin (.claude-plugin/, hooks/hooks.json) against Claude Code's documented manifest schema.

The schema checked here is the one Claude Code's plugins and marketplace references document:
plugin.json needs a kebab-case ``name``; ``version`` is semver; component paths are relative and
start with ``./``; ``hooks/hooks.json`` is loaded by default, so the manifest must not name it again
(Claude Code then reports "Duplicate hooks file detected"); marketplace.json needs ``name``,
``owner.name`` and ``plugins`` whose entries have ``name`` and ``source``. The hooks and the MCP
server are the ones ``evlog setup claude-code`` writes, with ``evlog`` taken from PATH.
"""

from __future__ import annotations

import json
import os
import re

from eventlog._version import __version__
from eventlog.app.agents import setup as st
from tests.conftest import REPO

KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
#: The hook events Claude Code's hooks reference documents.
CLAUDE_CODE_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "Notification",
                      "UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop", "PreCompact", "SessionStart",
                      "SessionEnd"}
PLUGIN_FIELDS = {"name": str, "version": str, "description": str, "author": dict, "homepage": str,
                 "repository": (str, dict), "license": str, "keywords": list, "commands": (str, list),
                 "agents": (str, list), "skills": (str, list), "hooks": (str, dict), "mcpServers": (str, dict),
                 "outputStyles": (str, list), "lspServers": (str, dict)}
PATH_FIELDS = ("commands", "agents", "skills", "hooks", "mcpServers", "outputStyles", "lspServers")


def _load(*parts: str) -> dict:
    with open(os.path.join(REPO, *parts), encoding="utf-8") as f:
        return json.load(f)


def _plugin_version(version: str) -> str:
    """PEP 440 0.3.0.dev0 as semver 0.3.0-dev.0 (Claude Code compares plugin versions as semver)."""
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:\.dev(\d+))?", version)
    assert m, version
    return m.group(1) + (f"-dev.{m.group(2)}" if m.group(2) is not None else "")


def _relative_paths(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def test_plugin_manifest_follows_the_documented_schema():
    manifest = _load(".claude-plugin", "plugin.json")
    assert KEBAB.match(manifest["name"]) and manifest["name"] == "evlog"
    for key, value in manifest.items():
        assert key in PLUGIN_FIELDS, f"plugin.json: unknown field {key!r}"
        assert isinstance(value, PLUGIN_FIELDS[key]), f"plugin.json: {key} has the wrong type"
    assert SEMVER.match(manifest["version"])
    assert manifest["version"] == _plugin_version(__version__), "plugin.json's version lags eventlog/_version.py"
    assert isinstance(manifest["author"].get("name"), str)
    assert all(isinstance(k, str) for k in manifest["keywords"])
    for key in PATH_FIELDS:
        for path in _relative_paths(manifest.get(key)):
            assert path.startswith("./") and ".." not in path.split("/") and "\\" not in path, f"{key}: {path}"
            assert os.path.exists(os.path.join(REPO, path)), f"{key}: {path} does not exist in the repository"
    # the default hooks file is loaded by itself: naming it again makes Claude Code refuse it as a duplicate
    assert os.path.normpath(str(manifest.get("hooks", ""))) != os.path.normpath("./hooks/hooks.json")


def test_plugin_mcp_server_is_the_one_setup_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    manifest = _load(".claude-plugin", "plugin.json")
    plan = st.plan_claude_code(program="evlog", home=None)
    assert manifest["mcpServers"] == {st.SERVER_NAME: plan.server}
    assert not os.path.exists(os.path.join(REPO, ".mcp.json")), "a root .mcp.json would add the server twice"


def test_plugin_hooks_are_the_ones_setup_writes(tmp_path, monkeypatch):
    doc = _load("hooks", "hooks.json")
    assert set(doc) <= {"description", "hooks"} and isinstance(doc.get("description", ""), str)
    hooks = doc["hooks"]
    assert set(hooks) <= CLAUDE_CODE_EVENTS, f"events Claude Code does not document: {set(hooks) - CLAUDE_CODE_EVENTS}"
    for event, groups in hooks.items():
        assert isinstance(groups, list) and groups, event
        for group in groups:
            assert set(group) <= {"matcher", "hooks"} and isinstance(group["hooks"], list)
            for handler in group["hooks"]:
                assert handler["type"] == "command" and isinstance(handler["command"], str)
                assert isinstance(handler.get("timeout", 1), int) and handler.get("timeout", 1) > 0
                assert st.is_evlog_hook(handler)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    plan = st.plan_claude_code(program="evlog", home=None)
    settings = json.loads(plan.changes[0].after or "{}")
    assert hooks == settings["hooks"], "hooks/hooks.json differs from what 'evlog setup claude-code' writes"


def test_marketplace_lists_the_plugin_at_the_repository_root():
    market = _load(".claude-plugin", "marketplace.json")
    assert KEBAB.match(market["name"])
    assert isinstance(market["owner"], dict) and isinstance(market["owner"]["name"], str)
    assert isinstance(market["plugins"], list) and market["plugins"]
    manifest = _load(".claude-plugin", "plugin.json")
    (entry,) = [p for p in market["plugins"] if p["name"] == manifest["name"]]
    source = entry["source"]
    assert isinstance(source, str) and source.startswith("./") and ".." not in source.split("/")
    assert os.path.isfile(os.path.join(REPO, source, ".claude-plugin", "plugin.json"))
    assert entry.get("version", manifest["version"]) == manifest["version"]
