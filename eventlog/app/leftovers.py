"""What an uninstall leaves behind, and how to remove it.

``evlog setup claude-code --uninstall``, ``evlog setup codex --uninstall`` and ``evlog daemon
uninstall`` take out only what they put in (hooks, MCP server, the service file). They never
delete memory: ``left_behind(home, ...)`` lists what stays, each with the command that removes
it, so a user who wants evlog gone entirely knows what to delete, and what to export first.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass
class Leftover:
    """One thing that stays on disk, and how to remove it."""

    what: str
    path: str
    remove: str  # a shell command


def left_behind(home: str, *, backups: Iterable[str] = (), env_file: str | None = None) -> list[Leftover]:
    """The workspace (its log and memory), the MEMORY.md files of its projects, and the backups that exist."""
    home = os.path.abspath(os.path.expanduser(home))
    out: list[Leftover] = []
    if os.path.isdir(home):
        out.append(Leftover("the workspace: the log (all captured sessions), evlog.json and the memory "
                            "(keep the facts first with 'evlog export -o facts.jsonl')", home,
                            f"rm -rf {shlex.quote(home)}"))
        for project in _projects(home):
            md = os.path.join(project, "memory", "MEMORY.md")
            if os.path.isfile(md):
                out.append(Leftover("a project's MEMORY.md evlog kept up to date", md, f"rm {shlex.quote(md)}"))
    for b in dict.fromkeys(backups):
        if os.path.isfile(b):
            out.append(Leftover("a backup evlog made of a settings file before changing it", b,
                                f"rm {shlex.quote(b)}"))
    if env_file and os.path.isfile(env_file):
        out.append(Leftover("the daemon's environment file (it may hold an API key)", env_file,
                            f"rm {shlex.quote(env_file)}"))
    return out


def _projects(home: str) -> list[str]:
    from eventlog.app.workspace import load_config
    from eventlog.errors import EvlogError

    try:
        return list(load_config(home).projects)
    except EvlogError:
        return []


def render_leftovers(items: list[Leftover]) -> list[str]:
    """Lines for stderr: what stays, then how to remove each."""
    if not items:
        return ["nothing of evlog is left here"]
    lines = ["left behind (remove them only if you want evlog's data gone too):"]
    for i in items:
        lines.append(f"  {i.path}: {i.what}")
        lines.append(f"    remove: {i.remove}")
    return lines
