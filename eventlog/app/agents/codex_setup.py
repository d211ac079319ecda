"""``evlog setup codex``: evlog's hooks and MCP server in Codex's ``~/.codex`` (``$CODEX_HOME``).

Two files change, planned like ``evlog setup claude-code`` (``eventlog.app.agents.setup``:
the same ``SetupPlan``, diff, backup ``<file>.evlog.bak``, atomic replace, merge again when
another program changed a file in between, nothing written when nothing changes):

* ``hooks.json``: one command hook ``<evlog> [--home H] hook codex`` on ``SessionStart``
  (memory as context), ``Stop`` and ``PreCompact`` (capture the rollout file), and
  ``UserPromptSubmit`` with ``prompt_context``. Codex's hooks.json has Claude Code's shape
  (event -> matcher groups -> handlers), so the merge is the same function; every other
  hook stays.
* ``config.toml``: the feature flag hooks need (``[features] codex_hooks = true``: newer
  Codex turns hooks on by default and still reads this key) and the MCP server
  ``[mcp_servers.evlog]`` (``command``, ``args``). The file is edited as text, never
  re-serialised: evlog's lines are a block between ``BEGIN``/``END`` marker comments at the
  end (or one marked line under an existing ``[features]`` table), so every other key,
  comment, blank line and order is kept byte for byte. The result is parsed with tomllib
  and must equal the old document plus exactly evlog's keys, or nothing is written. A file
  that is not valid TOML is reported with its line and column, and nothing changes. An
  ``mcp_servers.evlog`` that the user wrote (outside evlog's block) is left alone.

``--uninstall`` removes exactly what setup added, so the file is byte for byte what it was
(if other hooks in hooks.json need the feature flag, it says so). ``installed()`` tells
``evlog status`` what is there.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from typing import Any

from eventlog.app.agents import setup as st

CODEX_EVENTS = ("SessionStart", "Stop", "PreCompact")
MANAGED_EVENTS = (*CODEX_EVENTS, "UserPromptSubmit")
HOOK_TIMEOUTS = {"SessionStart": 10, "UserPromptSubmit": 10, "Stop": 30, "PreCompact": 60}
FEATURE = "codex_hooks"
BEGIN = "# BEGIN evlog (written by 'evlog setup codex'; 'evlog setup codex --uninstall' removes it)"
END = "# END evlog"
LINE_MARK = "# added by 'evlog setup codex'"
NO_EOL = "# (evlog ended the line above this block: the file had no final newline)"


def codex_home() -> str:
    """Codex's folder: ``$CODEX_HOME``, else ``~/.codex``."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def is_codex_hook(handler: Any) -> bool:
    """Whether a hooks.json handler is evlog's (an ``evlog`` program running ``hook codex``)."""
    return st.runs_evlog_hook(handler, "codex")


# --- config.toml as text ---------------------------------------------------------------------------


def parse_toml(path: str, text: str) -> dict[str, Any]:
    """The TOML document, or ``SetupError`` naming the file, line and column."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise st.SetupError(f"{path}: not valid TOML ({e}); nothing was changed: fix the file, or add evlog by "
                            "hand (see --dry-run)") from None


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def strip_evlog(text: str) -> str:
    """``text`` without evlog's block and marked lines: byte for byte the text before setup added them."""
    out: list[str] = []
    inside = unterminated = False
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if bare == BEGIN:
            inside = True
            if out and out[-1] in ("\n", "\r\n"):
                out.pop()  # the blank line setup put before its block
            continue
        if inside:
            unterminated = unterminated or bare == NO_EOL
            inside = bare != END
            continue
        if bare.endswith(LINE_MARK):
            continue
        out.append(line)
    if unterminated and out and out[-1].endswith("\n"):
        out[-1] = out[-1][:-1]  # setup ended the file's last line: the file had no final newline
    return "".join(out)


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    """``doc[key]`` when it is a table, else an empty one."""
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _features_header(lines: list[str]) -> int | None:
    """The index of the ``[features]`` table header, if the file has one."""
    for i, line in enumerate(lines):
        if re.match(r"^\s*\[\s*features\s*\]\s*(#.*)?$", line):
            return i
    return None


def edit_config(text: str, *, server: dict[str, Any] | None, feature: bool, path: str = "config.toml"
                ) -> tuple[str, list[str]]:
    """config.toml's new text with evlog's server and feature flag (None / False: without them)."""
    base = strip_evlog(text)
    doc = parse_toml(path, base)
    said: list[str] = []
    feats = _table(doc, "features")
    lines = base.splitlines(keepends=True)
    block: list[str] = []
    if feature and "features" in doc and not isinstance(doc["features"], dict):
        raise st.SetupError(f"{path}: 'features' is not a table; nothing was changed")
    if feature and FEATURE not in feats:
        at = _features_header(lines)
        if at is not None:
            lines.insert(at + 1, f"{FEATURE} = true  {LINE_MARK}\n")
        elif "features" in doc:  # dotted keys (features.x = ...): a table header would be a duplicate
            raise st.SetupError(f"{path}: [features] is written as dotted keys; add '{FEATURE} = true' by hand")
        else:
            block += ["[features]\n", f"{FEATURE} = true\n"]
    elif feature and feats.get(FEATURE) is not True:
        said.append(f"[features] {FEATURE} is {feats.get(FEATURE)!r} in {path}: Codex will not run hooks until it is "
                    "true (left as you set it)")
    servers = _table(doc, "mcp_servers")
    if server is not None and st.SERVER_NAME in servers:
        said.append(f"leave [mcp_servers.{st.SERVER_NAME}] of {path}: it was written by hand")
    elif server is not None:
        if block:
            block.append("\n")
        block += [f"[mcp_servers.{st.SERVER_NAME}]\n", f"command = {_toml_str(server['command'])}\n",
                  "args = [" + ", ".join(_toml_str(a) for a in server["args"]) + "]\n"]
    body = "".join(lines)
    if block:
        if body and not body.endswith("\n"):
            body += "\n"
            block.insert(0, NO_EOL + "\n")
        sep = "\n" if body else ""  # the blank line strip_evlog takes away again
        body += sep + BEGIN + "\n" + "".join(block) + END + "\n"
    _check_only_ours(path, doc, parse_toml(path, body))
    return body, said


def _check_only_ours(path: str, before: dict[str, Any], after: dict[str, Any]) -> None:
    """The new document must be the old one plus evlog's keys: anything else means the edit went wrong."""
    def without(d: dict[str, Any], keep: dict[str, Any]) -> dict[str, Any]:
        out = dict(d)
        feats = dict(out.get("features") or {}) if isinstance(out.get("features"), dict) else None
        if feats is not None and FEATURE not in (keep.get("features") or {}):
            feats.pop(FEATURE, None)
            out["features"] = feats
            if not feats and "features" not in keep:
                out.pop("features")
        servers = out.get("mcp_servers")
        if isinstance(servers, dict) and st.SERVER_NAME not in (keep.get("mcp_servers") or {}):
            servers = {k: v for k, v in servers.items() if k != st.SERVER_NAME}
            out["mcp_servers"] = servers
            if not servers and "mcp_servers" not in keep:
                out.pop("mcp_servers")
        return out

    if without(after, before) != before:
        raise st.SetupError(f"{path}: cannot add evlog's lines without changing other settings; nothing was changed "
                            "(add them by hand: see --dry-run)")


# --- the plan ---------------------------------------------------------------------------------------


def plan_codex(*, program: str | None = None, home: str | None = None, uninstall: bool = False,
               prompt_context: bool = False, codex_dir: str | None = None) -> st.SetupPlan:
    """What ``evlog setup codex`` would write (see the module docstring); reads, never writes."""
    root = codex_dir or codex_home()
    argv = st.evlog_argv(program, home)
    command = shlex.join([*argv, "hook", "codex"])
    server = {"command": argv[0], "args": [*argv[1:], "mcp"]}
    events = () if uninstall else CODEX_EVENTS + (("UserPromptSubmit",) if prompt_context else ())
    plan = st.SetupPlan(scope="user", command=command, server=server, uninstall=uninstall, events=events)
    hooks_path = os.path.join(root, "hooks.json")
    config_path = os.path.join(root, "config.toml")

    def hooks_change() -> st.FileChange:
        text, value = st.read_json_file(hooks_path)
        merged, said = st.merge_hooks(value, command, events, path=hooks_path, managed=MANAGED_EVENTS,
                                      ours=is_codex_hook, timeouts=HOOK_TIMEOUTS)
        c = st._change(hooks_path, text, value, merged, "hooks", said)
        c.redo = hooks_change
        return c

    def config_change() -> st.FileChange:
        text = st.read_text(config_path)
        new, said = edit_config(text or "", server=None if uninstall else server, feature=not uninstall,
                                path=config_path)
        if (text or "") == new:
            pass  # unchanged: nothing to say (and nothing to write where there was no file, below)
        elif uninstall:
            said.append("remove evlog's MCP server and the hooks feature flag evlog added")
            if _other_hooks(hooks_path):
                said.append("your other Codex hooks need hooks turned on: newer Codex has them on by default, older "
                            "needs [features] codex_hooks = true")
        else:
            said.append("add evlog's MCP server and the hooks feature flag")
        after = new if (new or text is not None) else None  # nothing to write where there was no file
        return st.FileChange(config_path, text, after, "MCP server", said, redo=config_change)

    plan.changes.append(hooks_change())
    plan.changes.append(config_change())
    return plan


def _other_hooks(hooks_path: str) -> bool:
    """Whether hooks.json holds hooks that are not evlog's (they need the feature flag too)."""
    try:
        _text, value = st.read_json_file(hooks_path)
    except st.SetupError:
        return True
    hooks = value.get("hooks")
    if not isinstance(hooks, dict):
        return False
    return any(not is_codex_hook(h) for groups in hooks.values() if isinstance(groups, list)
               for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list) for h in g["hooks"])


@dataclass
class CodexInstalled:
    """What of evlog is in Codex's folder."""

    hooks: bool = False
    mcp: bool = False
    where: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def installed(codex_dir: str | None = None) -> CodexInstalled:
    """evlog's hooks (hooks.json) and MCP server (config.toml) in Codex's folder, and the feature flag."""
    root = codex_dir or codex_home()
    out = CodexInstalled()
    hooks_path, config_path = os.path.join(root, "hooks.json"), os.path.join(root, "config.toml")
    try:
        _text, value = st.read_json_file(hooks_path)
    except st.SetupError as e:
        out.notes.append(str(e))
        value = {}
    hooks = value.get("hooks")
    if isinstance(hooks, dict) and any(is_codex_hook(h) for groups in hooks.values() if isinstance(groups, list)
                                       for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                                       for h in g["hooks"]):
        out.hooks = True
        out.where.append(hooks_path)
    try:
        doc = tomllib.loads(st.read_text(config_path) or "")
    except (tomllib.TOMLDecodeError, st.SetupError) as e:
        out.notes.append(f"{config_path}: {e}")
        doc = {}
    server = _table(doc, "mcp_servers").get(st.SERVER_NAME)
    if st.is_evlog_server(server):
        out.mcp = True
        out.where.append(config_path)
    feats = _table(doc, "features")
    if out.hooks and (feats.get(FEATURE) is False or feats.get("hooks") is False):
        out.notes.append(f"hooks are turned off in {config_path} ([features]): evlog's hooks do not run")
    return out
