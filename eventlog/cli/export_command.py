"""``evlog export`` and ``evlog import``: memory as JSON lines or Markdown, with provenance (``eventlog.app.export``)."""

from __future__ import annotations

import os

import click

from eventlog.cli import cli
from eventlog.cli.common import note, open_workspace
from eventlog.errors import InvalidEventError

STATE_CHOICES = ("active", "archived", "superseded", "forgotten", "all")


@cli.command("export")
@click.option("--format", "fmt", type=click.Choice(("json", "markdown")), default="json", show_default=True,
              help="json: one object per line (a header, then one fact per line); markdown: one list per file and section.")
@click.option("--state", "states", type=click.Choice(STATE_CHOICES), multiple=True,
              help="Facts in this state (repeatable; default: active; all: every state).")
@click.option("--project", default=None, help="Only this project's facts ('' = the global file).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write here (default: stdout).")
@click.pass_context
def export_cmd(ctx: click.Context, fmt: str, states: tuple[str, ...], project: str | None, output: str | None) -> None:
    """Export facts with their provenance and validity: id, text, file, section, subject, state,
    who added it and when, the run, valid_from / valid_until / replaced_by and the source messages.

    'evlog import FILE' reads it back (into this or another workspace, idempotent).
    """
    from eventlog.app.export import export_facts, render

    chosen = ("active",) if not states else (("active", "archived", "superseded", "forgotten") if "all" in states else states)
    facts = export_facts(open_workspace(ctx), states=tuple(chosen), project=project)
    text = render(facts, fmt)
    if output is None:
        click.echo(text, nl=False)
        return
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, output)
    note(f"exported {len(facts)} fact(s) to {output}")


@cli.command("import")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@click.option("--format", "fmt", type=click.Choice(("auto", "json", "markdown")), default="auto", show_default=True,
              help="What SOURCE holds (auto: JSON lines if it starts with '{', else Markdown).")
@click.pass_context
def import_cmd(ctx: click.Context, source, fmt: str) -> None:  # noqa: ANN001 - click's file
    """Import facts from an 'evlog export' file (or a Markdown list of facts under '### Section' headings), SOURCE or - for stdin.

    Facts that still hold (active, archived) are added with by=import, their subject,
    valid_from and source refs; superseded and forgotten ones are counted, not added.
    Idempotent: a fact whose id or text is already there is skipped. The whole file is
    checked first: a bad line is named and nothing is written.
    """
    from eventlog.app.export import import_facts, parse

    name = getattr(source, "name", "<stdin>")
    try:
        facts = parse(source.read(), fmt, name=name)
    except UnicodeDecodeError as e:
        raise InvalidEventError(f"{name}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    with open_workspace(ctx, writable=True) as ws:
        report = import_facts(ws, facts)
    note(f"imported {len(report.added)} fact(s); {report.existing} already there; "
         f"{report.not_holding} no longer hold (superseded or forgotten), not added")
