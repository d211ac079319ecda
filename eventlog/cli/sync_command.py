"""``evlog sync push|pull|status``: sync the sessions with a MySQL gateway (see eventlog.app.gateway.sync)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from eventlog.cli import cli
from eventlog.cli.common import json_option, open_workspace
from eventlog.cli.render import json_line, render_report


def gateway_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--dsn`` (or $EVLOG_MYSQL_DSN) and ``--user``, shared by every sync command."""
    f = click.option("--user", "user", required=True, metavar="EMAIL", help="The gateway user whose sessions these are.")(f)
    return click.option("--dsn", envvar="EVLOG_MYSQL_DSN", required=True, metavar="URL", show_envvar=True,
                        help="mysql://user:password@host:port/database (prefer the environment variable: "
                             "command lines are visible to other users).")(f)


def _render(report: Any, as_json: bool) -> None:
    click.echo(json_line(report) if as_json else render_report(report))


@cli.group()
def sync() -> None:
    """Sync sessions with a MySQL/MariaDB gateway (several devices, a web view).

    push sends local changes, pull turns the gateway's changes into local events,
    status shows what is pending each way. The newest write wins; the local log stays
    the truth and keeps every version.
    """


@sync.command("push")
@gateway_options
@json_option
@click.pass_context
def sync_push(ctx: click.Context, dsn: str, user: str, as_json: bool) -> None:
    """Send sessions and messages changed here since the last push."""
    from eventlog.app.gateway.sync import push

    with open_workspace(ctx, writable=True) as ws:
        _render(push(ws, dsn, user), as_json)


@sync.command("pull")
@gateway_options
@json_option
@click.pass_context
def sync_pull(ctx: click.Context, dsn: str, user: str, as_json: bool) -> None:
    """Apply sessions and messages changed on the gateway since the last pull."""
    from eventlog.app.gateway.sync import pull

    with open_workspace(ctx, writable=True) as ws:
        _render(pull(ws, dsn, user), as_json)


@sync.command("status")
@gateway_options
@json_option
@click.pass_context
def sync_status(ctx: click.Context, dsn: str, user: str, as_json: bool) -> None:
    """What is pending each way, and both positions."""
    from eventlog.app.gateway.sync import status

    with open_workspace(ctx) as ws:
        _render(status(ws, dsn, user), as_json)
