"""Options and helpers every command shares: the workspace, ``--json``, output streams."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

from eventlog.cli.render import json_line

if TYPE_CHECKING:  # imported when a command opens a workspace: --help stays fast
    from eventlog import Workspace


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--json``: print one JSON object per line instead of text."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object per line.")(f)


def open_workspace(ctx: click.Context, *, writable: bool = False, repair: bool = False) -> Workspace:
    """The workspace named by ``--home``, opened read-only or as the writer."""
    import eventlog  # the front door (already loaded: it is this package's root); the workspace loads here

    return eventlog.open_workspace(ctx.obj["home"], writable=writable, lock_timeout=ctx.obj["lock_timeout"],
                                   repair=repair)


def emit(rows: Iterable[Any], as_json: bool, human: Callable[[Any], str]) -> int:
    """Stream rows to stdout as JSON lines or text (``human(row)``); returns how many."""
    n = 0
    out = sys.stdout
    for row in rows:
        out.write((json_line(row) if as_json else human(row)) + "\n")
        n += 1
    out.flush()
    return n


def note(message: str) -> None:
    """A diagnostic for the user: stderr, never mixed into data."""
    click.echo(message, err=True)


def reject_together(**given: Any) -> None:
    """Fail up front when flags that exclude each other are combined, naming them."""
    used = [name for name, value in given.items() if value not in (None, False, ())]
    if len(used) > 1:
        raise click.UsageError(f"{' and '.join(used)} cannot be used together")


def register_named_project(ws: Workspace, project: str) -> None:
    """Register a ``--project`` the user named (its MEMORY.md is mirrored there), or say why not.

    A directory that does not exist here is not created: the project's facts stay in the
    workspace copy (``memory/projects/``) until 'evlog project add' names it.
    """
    if os.path.isdir(project):
        ws.register_project(project)
    else:
        note(f"{project} is not a directory here: its MEMORY.md stays in the workspace "
             "(memory/projects/); 'evlog project add DIR' once it exists mirrors it there")
