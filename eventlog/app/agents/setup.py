"""``evlog setup claude-code``: put evlog's hooks and MCP server into Claude Code's settings.

``plan_claude_code(...)`` reads the settings files and computes what they should hold;
``apply(plan)`` writes the files that change. The files (``scope``):

* ``user`` (default): the hooks in ``~/.claude/settings.json`` and the MCP server in
  ``~/.claude.json`` (``mcpServers``; both under ``$CLAUDE_CONFIG_DIR`` when it is set),
  as ``claude mcp add --scope user`` does;
* ``project``: the hooks in ``<project>/.claude/settings.json`` and the MCP server in
  ``<project>/.mcp.json``, files a team can commit.

**What is merged.** One command hook per event (``SessionStart``, ``Stop``,
``SubagentStop``, ``PreCompact``, ``SessionEnd``; ``UserPromptSubmit`` with
``prompt_context``) running ``<evlog> [--home H] hook claude-code``, and ``mcpServers.evlog``
= ``{"type": "stdio", "command": "<evlog>", "args": [..., "mcp"]}``. Every other key,
hook, matcher group and MCP server is kept as it is, in its order. evlog's own hook is
recognised by its command (an ``evlog`` program running ``hook claude-code``), so a
second run finds it and changes nothing (idempotent), a changed evlog path is updated in
place (keeping a ``timeout`` you edited), and ``uninstall`` removes exactly what setup
added (a group or event left empty by that goes too).

**How files are written.** Nothing is written unless the content changes. A file that is
not valid JSON (comments, trailing commas), whose top level or ``hooks``/``mcpServers``
has the wrong shape, that is read-only, or whose folder cannot be written is reported
with its path (and line and column) before anything is written, and nothing changes.
Each changed file is replaced atomically (temp file, fsync, rename) after its old bytes
are saved beside it as ``<name>.evlog.bak``; the indentation of the existing file is
kept. If writing the second file fails, the first is put back. A file that another
program changed between reading and writing (Claude Code rewrites ``~/.claude.json``
often) is read and merged again.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eventlog.app.agents.hooks import CAPTURE_EVENTS, claude_dir
from eventlog.errors import ConfigError

SERVER_NAME = "evlog"
DEFAULT_EVENTS = ("SessionStart", *CAPTURE_EVENTS)
MANAGED_EVENTS = (*DEFAULT_EVENTS, "UserPromptSubmit")
HOOK_TIMEOUTS = {"SessionStart": 10, "UserPromptSubmit": 10, "Stop": 30, "SubagentStop": 30, "PreCompact": 60,
                 "SessionEnd": 10}
BACKUP_SUFFIX = ".evlog.bak"
SCOPES = ("user", "project")


class SetupError(ConfigError):
    """A settings file cannot be merged (invalid JSON, wrong shape, read-only): nothing was written."""


@dataclass
class FileChange:
    """One settings file: its text before (None: it does not exist) and after."""

    path: str
    before: str | None
    after: str | None
    what: str  # "hooks" or "MCP server"
    summary: list[str] = field(default_factory=list)  # what changes, in words
    backup: str = ""  # where the old bytes were saved (after apply)
    redo: Callable[[], FileChange] | None = None  # computes the change again from the file as it is now

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change ('' when nothing changes)."""
        if not self.changed:
            return ""
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        label = self.path if self.before is not None else "/dev/null"
        return "".join(difflib.unified_diff(old, new, fromfile=label, tofile=self.path))


@dataclass
class SetupPlan:
    """The files setup would change (``changes``), and how evlog is started from them."""

    scope: str
    command: str  # the hook command
    server: dict[str, Any]  # the mcpServers entry
    changes: list[FileChange] = field(default_factory=list)
    uninstall: bool = False
    events: tuple[str, ...] = ()  # the events evlog's hook is on after setup

    @property
    def changed(self) -> list[FileChange]:
        return [c for c in self.changes if c.changed]


def evlog_executable() -> str:
    """The evlog program to run from Claude Code: this environment's, by absolute path, else ``evlog``."""
    here = os.path.join(os.path.dirname(sys.executable), "evlog")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    found = shutil.which("evlog")
    return os.path.abspath(found) if found else "evlog"


def evlog_argv(program: str | None, home: str | None) -> list[str]:
    """``[program, "--home", home]`` (``--home`` only for a workspace other than the default one)."""
    argv = shlex.split(program) if program else [evlog_executable()]
    default = os.path.join(os.path.expanduser("~"), ".evlog")
    if home and os.path.abspath(home) != default:
        argv += ["--home", os.path.abspath(home)]
    return argv


def runs_evlog_hook(handler: Any, agent: str) -> bool:
    """Whether a hook handler is evlog's for ``agent`` (an ``evlog`` program running ``hook AGENT``)."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    for i in range(1, len(words) - 1):
        if words[i] == "hook" and words[i + 1] == agent:
            return any(os.path.basename(w).startswith("evlog") for w in words[:i])
    return False


def is_evlog_hook(handler: Any) -> bool:
    """Whether a hook handler is evlog's (an ``evlog`` program running ``hook claude-code``)."""
    return runs_evlog_hook(handler, "claude-code")


def is_evlog_server(entry: Any) -> bool:
    """Whether an ``mcpServers`` entry runs ``evlog ... mcp``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args")
    return os.path.basename(entry["command"]).startswith("evlog") and isinstance(args, list) and "mcp" in args


def user_settings_path() -> str:
    """Claude Code's user settings (hooks): ``~/.claude/settings.json``."""
    return os.path.join(claude_dir(), "settings.json")


def user_mcp_path() -> str:
    """Where Claude Code keeps user-scope MCP servers: ``~/.claude.json`` (in ``$CLAUDE_CONFIG_DIR`` if set)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~")
    return os.path.join(base, ".claude.json")


def target_paths(scope: str, project_dir: str | None = None) -> tuple[str, str]:
    """(hooks settings file, MCP servers file) of a scope."""
    if scope == "user":
        return user_settings_path(), user_mcp_path()
    if scope == "project":
        root = os.path.abspath(project_dir or os.getcwd())
        return os.path.join(root, ".claude", "settings.json"), os.path.join(root, ".mcp.json")
    raise SetupError(f"unknown scope {scope!r}; choose user or project")


# --- reading and writing JSON files --------------------------------------------------------------


def read_json_file(path: str) -> tuple[str | None, dict[str, Any]]:
    """(text or None if missing, the top-level object); ``SetupError`` names path, line and column."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None, {}
    except UnicodeDecodeError as e:
        raise SetupError(f"{path}: not UTF-8 text (byte {e.start}); nothing was changed") from None
    except IsADirectoryError:
        raise SetupError(f"{path} is a directory, not a settings file; nothing was changed") from None
    except OSError as e:
        raise SetupError(f"{path}: cannot read: {e.strerror or e}; nothing was changed") from None
    if not text.strip():
        return text, {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise SetupError(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg}); comments and trailing commas are "
                         "not JSON. nothing was changed: fix the file, or add evlog by hand (see --dry-run)") from None
    except RecursionError:
        raise SetupError(f"{path}: nested too deeply to read; nothing was changed") from None
    if not isinstance(value, dict):
        raise SetupError(f"{path}: the top level must be a JSON object, found {_json_type(value)}; nothing was changed")
    return text, value


def _json_type(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(v), "null" if v is None else "a number")


def _indent_of(text: str | None) -> str | int:
    """The indentation unit of an existing JSON file (2 spaces for a new or one-line file)."""
    if text:
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and stripped != line:
                return line[: len(line) - len(stripped)]
    return 2


def render_json(value: dict[str, Any], like: str | None) -> str:
    """``value`` as JSON text, indented like the file it replaces, with a final newline."""
    indent = _indent_of(like)
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return text + "\n"


def _atomic_write_text(path: str, text: str, mode: int | None) -> None:
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.evlog-tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _check_writable(path: str) -> None:
    if os.path.exists(path):
        if not os.access(path, os.W_OK) or not os.stat(path).st_mode & 0o222:  # marked read-only (even for root)
            raise SetupError(f"{path} is read-only; nothing was changed. Make it writable, or add evlog by hand "
                             "(--dry-run shows what to add)")
        directory = os.path.dirname(path) or "."
    else:
        directory = os.path.dirname(path) or "."
        while not os.path.exists(directory):
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    if not os.access(directory, os.W_OK):
        raise SetupError(f"cannot write in {directory} (for {path}); nothing was changed")


# --- merging -------------------------------------------------------------------------------------


def merge_hooks(settings: dict[str, Any], command: str, events: tuple[str, ...], *, path: str = "settings",
                managed: tuple[str, ...] = MANAGED_EVENTS, ours: Callable[[Any], bool] = is_evlog_hook,
                timeouts: dict[str, int] = HOOK_TIMEOUTS) -> tuple[dict[str, Any], list[str]]:
    """``settings`` with evlog's hook on exactly ``events`` (others untouched); and what changed, in words.

    ``managed`` are the events evlog may have a hook on, ``ours`` recognises evlog's handler
    and ``timeouts`` gives a new handler's timeout: Claude Code's by default, Codex's from
    ``codex_setup`` (its hooks.json has the same shape).
    """
    out = copy.deepcopy(settings)
    said: list[str] = []
    hooks = out.get("hooks")
    if hooks is None:
        hooks = {}
    elif not isinstance(hooks, dict):
        raise SetupError(f"{path}: 'hooks' must be an object, found {_json_type(hooks)}; nothing was changed")
    had_hooks = "hooks" in out
    emptied = False
    for event in managed:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise SetupError(f"{path}: hooks.{event} must be a list, found {_json_type(groups)}; nothing was changed")
        new_groups = _merge_event(groups, event, event in events, command, ours, timeouts, said)
        if new_groups:
            hooks[event] = new_groups
        elif event in hooks:
            del hooks[event]
            emptied = True
    if hooks or (had_hooks and not emptied):
        out["hooks"] = hooks
    else:
        out.pop("hooks", None)
    return out, said


def _merge_event(groups: list[Any], event: str, want: bool, command: str, ours: Callable[[Any], bool],
                 timeouts: dict[str, int], said: list[str]) -> list[Any]:
    """The hook groups of ``event`` with evlog's handler exactly once (``want``) or not at all; what changed
    is appended to ``said``. The first evlog handler is kept (updated); others go, and a group they
    leave empty goes with them (a group that was already empty stays)."""
    placed = False
    removed = False
    new_groups: list[Any] = []
    for g in groups:
        if not isinstance(g, dict) or not isinstance(g.get("hooks"), list):
            new_groups.append(g)
            continue
        kept: list[Any] = []
        for h in g["hooks"]:
            if not ours(h):
                kept.append(h)
            elif want and not placed:
                new = {**h, "type": "command", "command": command}
                new.setdefault("timeout", timeouts[event])
                if new != h:
                    said.append(f"update the evlog hook on {event}")
                kept.append(new)
                placed = True
            else:
                removed = True
                said.append(f"remove the evlog hook on {event}" if not want else f"remove a second evlog hook on {event}")
        if kept or not removed or len(g["hooks"]) == 0:
            new_groups.append({**g, "hooks": kept} if kept != g["hooks"] else g)
    if want and not placed:
        new_groups.append({"hooks": [{"type": "command", "command": command, "timeout": timeouts[event]}]})
        said.append(f"add the evlog hook on {event}")
    return new_groups


def merge_server(config: dict[str, Any], server: dict[str, Any] | None, *, path: str = "config"
                 ) -> tuple[dict[str, Any], list[str]]:
    """``config`` with ``mcpServers.evlog`` set to ``server`` (None: removed if it is evlog's)."""
    out = copy.deepcopy(config)
    servers = out.get("mcpServers")
    if servers is None:
        servers = {}
    elif not isinstance(servers, dict):
        raise SetupError(f"{path}: 'mcpServers' must be an object, found {_json_type(servers)}; nothing was changed")
    said: list[str] = []
    current = servers.get(SERVER_NAME)
    if server is None:
        if current is not None and is_evlog_server(current):
            del servers[SERVER_NAME]
            said.append(f"remove the MCP server {SERVER_NAME!r}")
            if not servers:
                out.pop("mcpServers", None)
                return out, said
        elif current is not None:
            said.append(f"leave the MCP server {SERVER_NAME!r}: it does not run evlog")
        if "mcpServers" in out:
            out["mcpServers"] = servers
        return out, said
    if isinstance(current, dict):
        new = {**current, **server}  # keeps e.g. an "env" the user added
    else:
        new = dict(server)
    if new != current:
        said.append(("update" if current is not None else "add") + f" the MCP server {SERVER_NAME!r}")
    servers[SERVER_NAME] = new
    out["mcpServers"] = servers
    return out, said


def plan_claude_code(*, scope: str = "user", project_dir: str | None = None, program: str | None = None,
                     home: str | None = None, uninstall: bool = False, prompt_context: bool = False) -> SetupPlan:
    """What ``evlog setup claude-code`` would write (see the module docstring); reads, never writes."""
    if scope not in SCOPES:
        raise SetupError(f"unknown scope {scope!r}; choose one of {', '.join(SCOPES)}")
    argv = evlog_argv(program, home)
    command = shlex.join([*argv, "hook", "claude-code"])
    server = {"type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp"]}
    events = () if uninstall else DEFAULT_EVENTS + (("UserPromptSubmit",) if prompt_context else ())
    plan = SetupPlan(scope=scope, command=command, server=server, uninstall=uninstall, events=events)
    settings_path, mcp_path = target_paths(scope, project_dir)
    text, value = read_json_file(settings_path)
    merged, said = merge_hooks(value, command, events, path=settings_path)
    plan.changes.append(_change(settings_path, text, value, merged, "hooks", said))
    text, value = read_json_file(mcp_path)
    merged, said = merge_server(value, None if uninstall else server, path=mcp_path)
    plan.changes.append(_change(mcp_path, text, value, merged, "MCP server", said))
    return plan


def _change(path: str, text: str | None, before: dict[str, Any], after: dict[str, Any], what: str,
            said: list[str]) -> FileChange:
    if after == before and (text is not None or not after):
        return FileChange(path, text, text, what, said)
    return FileChange(path, text, render_json(after, text), what, said)


def apply(plan: SetupPlan) -> list[FileChange]:
    """Write the plan's changed files (see the module docstring); returns them, with their backups."""
    todo = plan.changed
    for c in todo:
        _check_writable(c.path)
    done: list[tuple[FileChange, int | None]] = []
    try:
        for c in todo:
            mode = _mode(c.path)
            if read_text(c.path) != c.before:  # another program changed it since it was read: merge again
                fresh = remerge(plan, c)
                c.before, c.after, c.summary = fresh.before, fresh.after, fresh.summary
                if not c.changed:
                    continue
            if c.before is not None:
                c.backup = c.path + BACKUP_SUFFIX
                _atomic_write_text(c.backup, c.before, mode)
            _atomic_write_text(c.path, c.after or "", mode)
            done.append((c, mode))
    except OSError as e:
        for c, mode in reversed(done):  # put back what was written
            try:
                if c.before is None:
                    os.unlink(c.path)
                else:
                    _atomic_write_text(c.path, c.before, mode)
            except OSError:
                pass
        raise SetupError(f"cannot write {getattr(e, 'filename', '') or 'a settings file'}: {e.strerror or e}; "
                         "nothing was changed") from e
    return [c for c, _mode in done]


def remerge(plan: SetupPlan, change: FileChange) -> FileChange:
    """``change`` computed again from the file as it is now."""
    if change.redo is not None:
        return change.redo()
    text, value = read_json_file(change.path)
    if change.what == "hooks":
        merged, said = merge_hooks(value, plan.command, plan.events, path=change.path)
    else:
        merged, said = merge_server(value, None if plan.uninstall else plan.server, path=change.path)
    return _change(change.path, text, value, merged, change.what, said)


def read_text(path: str) -> str | None:
    """A settings file's text, None when it does not exist; unreadable: ``SetupError`` (nothing changed)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise SetupError(f"{path}: cannot read ({e}); nothing was changed") from None




def _mode(path: str) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return None
