"""``evlog capture``: pause and resume capture, exclude and include paths (``eventlog.app.capture``)."""

from __future__ import annotations

import os

import click

from eventlog.cli import ExitStatus, cli
from eventlog.cli.common import json_option, note
from eventlog.cli.render import json_line


def _home(ctx: click.Context) -> str:
    """The workspace's home; exit with an error when there is no workspace there."""
    from eventlog.app.workspace import CONFIG_FILE

    home: str = ctx.obj["home"]
    if not os.path.isfile(os.path.join(home, CONFIG_FILE)):
        click.echo(f"evlog: error: no workspace at {home} (run 'evlog init')", err=True)
        ctx.exit(ExitStatus.ERROR)
    return home


def _show(state, as_json: bool) -> None:  # noqa: ANN001 - a CaptureState
    if as_json:
        click.echo(json_line({"paused": state.paused(), "paused_until": state.paused_until,
                              "excluded": state.excluded}))
        return
    click.echo("capture     " + (f"paused {state.pause_text()}" if state.paused() else "on"))
    for rule in state.excluded:
        click.echo(f"excluded    {rule}")


@cli.group()
def capture() -> None:
    """Pause capture, or exclude a project or transcript from it (hooks, watch, the daemon, ingest)."""


@capture.command("pause")
@click.option("--for", "duration", default=None, help="How long, e.g. 30m, 2h, 1d (default: until 'evlog capture resume').")
@json_option
@click.pass_context
def pause_cmd(ctx: click.Context, duration: str | None, as_json: bool) -> None:
    """Stop capturing new transcripts (hooks and watch skip them; they are read after resume)."""
    from eventlog.app.capture import parse_duration, pause

    try:
        seconds = parse_duration(duration) if duration is not None else None
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--for") from None
    state = pause(_home(ctx), seconds)
    if not as_json:
        note(f"capture paused {state.pause_text()}")
    _show(state, as_json)


@capture.command("resume")
@json_option
@click.pass_context
def resume_cmd(ctx: click.Context, as_json: bool) -> None:
    """Capture again (what was written meanwhile is read by the next hook or watch poll)."""
    from eventlog.app.capture import resume

    _show(resume(_home(ctx)), as_json)


@capture.command("status")
@json_option
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Whether capture is paused, and what is excluded."""
    from eventlog.app.capture import load_state

    _show(load_state(_home(ctx)), as_json)


@capture.command("exclude")
@click.argument("path")
@json_option
@click.pass_context
def exclude_cmd(ctx: click.Context, path: str, as_json: bool) -> None:
    """Never capture PATH: a project directory, a transcript file or folder, or a glob ('*/tmp/*.jsonl').

    A project directory's sessions give no memory to the agent either.
    """
    from eventlog.app.capture import exclude

    try:
        state, new = exclude(_home(ctx), path)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="PATH") from None
    if not as_json:
        note(f"excluded {state.excluded[-1]}" if new else f"already excluded: {path}")
    _show(state, as_json)


@capture.command("include")
@click.argument("path")
@json_option
@click.pass_context
def include_cmd(ctx: click.Context, path: str, as_json: bool) -> None:
    """Capture PATH again (undo 'evlog capture exclude PATH')."""
    from eventlog.app.capture import include

    try:
        state, was = include(_home(ctx), path)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="PATH") from None
    if not as_json:
        note(f"included {path}" if was else f"{path} was not excluded")
    _show(state, as_json)
