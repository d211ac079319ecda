"""``evlog project``: the project directories MEMORY.md may be mirrored into (nowhere else outside the workspace)."""

from __future__ import annotations

import click

from eventlog.cli import cli
from eventlog.cli.common import emit, json_option, note, open_workspace


@cli.group(invoke_without_command=True)
@json_option
@click.pass_context
def project(ctx: click.Context, as_json: bool) -> None:
    """List the registered projects: directories whose memory/MEMORY.md evlog keeps up to date.

    A project's facts always live in the workspace (memory/projects/); evlog writes a copy
    into <project>/memory/MEMORY.md only for the directories listed here, never for a
    project named only by data (a transcript's cwd). --project on ingest and remember
    registers its directory too.
    """
    if ctx.invoked_subcommand is not None:
        return
    rows = [{"project": p} for p in open_workspace(ctx).config.projects]
    emit(rows, as_json, lambda r: r["project"])
    if not rows and not as_json:
        note("no registered projects ('evlog project add DIR')")


@project.command("add")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, resolve_path=True))
@click.pass_context
def project_add(ctx: click.Context, directory: str) -> None:
    """Register DIRECTORY: its MEMORY.md is kept in DIRECTORY/memory/ from now on."""
    with open_workspace(ctx, writable=True) as ws:
        added = ws.register_project(directory)
    note(f"registered {directory}" if added else f"{directory} was already registered")


@project.command("remove")
@click.argument("directory", type=click.Path(file_okay=False, resolve_path=True))
@click.pass_context
def project_remove(ctx: click.Context, directory: str) -> None:
    """Stop mirroring into DIRECTORY (its files stay where they are)."""
    with open_workspace(ctx, writable=True) as ws:
        removed = ws.unregister_project(directory)
    note(f"unregistered {directory}" if removed else f"{directory} was not registered")
