"""``evlog sync login|logout|push|pull|status|share|unshare``: sync the log with a gateway.

``push``/``pull`` sync the log's events (``eventlog.replication.sync``) by default; ``--rows``
keeps the deprecated row sync (``eventlog.app.gateway.sync``) reachable.

Two ways to reach it: ``--gateway URL`` (the HTTP sync API of ``evlog web --gateway``, with
the per-user token ``evlog sync login`` keeps in the workspace: the multi-user path) or
``--dsn URL`` (the database itself: whoever holds its credentials may act as any user, so
this is for a single trusted user).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from eventlog.cli import cli
from eventlog.cli.common import json_option, note, open_workspace
from eventlog.cli.render import json_line, render_report


def gateway_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--gateway`` or ``--dsn`` (+ ``--user``), and the timeouts, shared by push, pull and status."""
    f = click.option("--timeout", type=click.FloatRange(min=0, min_open=True, max=86400), default=None,
                     metavar="SECONDS", help="Give up on a read or write that takes longer (default 30, or "
                                             "$EVLOG_MYSQL_TIMEOUT).")(f)
    f = click.option("--connect-timeout", type=click.FloatRange(min=0, min_open=True, max=86400), default=None,
                     metavar="SECONDS", help="Give up connecting after this long (default 10, or "
                                             "$EVLOG_MYSQL_CONNECT_TIMEOUT).")(f)
    f = click.option("--user", "user", default=None, metavar="EMAIL",
                     help="The gateway user whose sessions these are (required with --dsn; with --gateway the "
                          "token decides, and this only checks it).")(f)
    f = click.option("--dsn", envvar="EVLOG_MYSQL_DSN", default=None, metavar="URL", show_envvar=True,
                     help="Direct sync with the database, mysql://user:password@host:port/database, for ONE trusted "
                          "user: --user is not authenticated (prefer the environment variable: command lines are "
                          "visible to other users).")(f)
    return click.option("--gateway", "gateway", envvar="EVLOG_GATEWAY_URL", default=None, metavar="URL",
                        show_envvar=True, help="Sync through the HTTP API of 'evlog web --gateway' at URL with the "
                                               "token of 'evlog sync login' (the multi-user way).")(f)


def _timeouts(connect: float | None, read: float | None) -> Any:
    from eventlog.app.gateway.connection import Timeouts

    return Timeouts.default(connect, read)


def _target(ctx: click.Context, gateway: str | None, dsn: str | None, user: str | None) -> str:
    """Which way to sync: "gateway" or "dsn" (usage errors for none, both, or --dsn without --user)."""
    src = ctx.get_parameter_source
    if gateway and dsn:
        explicit = [n for n in ("gateway", "dsn") if src(n) == click.core.ParameterSource.COMMANDLINE]
        if len(explicit) == 1:
            return explicit[0]
        raise click.UsageError("give either --gateway (HTTP, per-user token) or --dsn (direct), not both "
                               "(check $EVLOG_GATEWAY_URL and $EVLOG_MYSQL_DSN)")
    if gateway:
        return "gateway"
    if dsn:
        if not user:
            raise click.UsageError("--dsn needs --user EMAIL (direct sync trusts it: one trusted user only)")
        return "dsn"
    raise click.UsageError("give --gateway URL (after 'evlog sync login') or --dsn URL with --user EMAIL")


def _run(ctx: click.Context, fn: Callable[..., Any], ws: Any, gateway: str | None, dsn: str | None, user: str | None,
         connect_timeout: float | None, timeout: float | None, **kw: Any) -> Any:
    way = _target(ctx, gateway, dsn, user)
    timeouts = _timeouts(connect_timeout, timeout)
    if way == "dsn":
        return fn(ws, dsn, user, timeouts=timeouts, **kw)
    from eventlog.app.gateway.http_client import HttpRemote

    remote = HttpRemote.open(ws.home, gateway, user=user, timeouts=timeouts)  # type: ignore[arg-type]
    try:
        return fn(ws, remote=remote, **kw)
    finally:
        remote.close()


FOLD_CHECKPOINT = "replication-fold.msgpack"  # the log's replication fold (disposable, like every state/ file)

events_option = click.option(
    "--events/--rows", "events", default=True, show_default=True,
    help="--events (the default): sync the log's events through the gateway's event store (sessions, messages, "
         "notes, facts and every change to them, Dream runs; every device converges, and the gateway's web view "
         "is folded from them). --rows: the deprecated sync of session and message rows (last writer wins; "
         "kept only for gateways still read by an older version, until 'evlog gateway migrate').")

ROW_ONLY_OPTIONS = ("everything", "retry_rejected", "allow_other_user")  # push/pull options of the --rows path


def _check_row_options(ctx: click.Context, events: bool) -> None:
    """A usage error when an option of the deprecated row path is given without ``--rows``."""
    if not events:
        note("--rows is deprecated: the row sync will go once no gateway needs it (see 'evlog gateway migrate')")
        return
    given = [p.opts[0] for p in ctx.command.params
             if p.name in ROW_ONLY_OPTIONS and ctx.get_parameter_source(p.name) == click.core.ParameterSource.COMMANDLINE]
    if given:
        raise click.UsageError(f"{', '.join(given)} belongs to the deprecated row sync: add --rows")


def _sync_events(ctx: click.Context, direction: str, gateway: str | None, dsn: str | None, user: str | None,
                 as_json: bool) -> None:
    """``push --events`` / ``pull --events``: the library's ``replication.sync.push``/``pull``."""
    from eventlog.app.event_stores import open_store
    from eventlog.replication import sync as replication

    way = _target(ctx, gateway, dsn, user)
    with open_workspace(ctx, writable=True) as ws:
        opened = open_store(ws.home, gateway=gateway if way == "gateway" else None,
                            dsn=dsn if way == "dsn" else None, user=user)
        try:
            checkpoint = os.path.join(ws.home, "state", FOLD_CHECKPOINT)
            if direction == "push":
                report: Any = replication.push(ws.log, opened.store, opened.account, store_name=opened.store_name,
                                               checkpoint=checkpoint)
            else:
                from eventlog.app.erase import apply_received

                report = replication.pull(ws.log, opened.store, opened.account, store_name=opened.store_name,
                                          checkpoint=checkpoint, erase=functools.partial(apply_received, ws))
        finally:
            opened.close()
    _render(report, as_json)


def _render(report: Any, as_json: bool) -> None:
    click.echo(json_line(report) if as_json else render_report(report))


@cli.group()
def sync() -> None:
    """Sync the log with a gateway (several devices, a web view, a team).

    push sends the events the gateway lacks, pull appends the events other devices and
    teammates sent; every device folds the same events into the same sessions, MEMORY.md
    and history. share/unshare show one project to another account. status (of the
    deprecated --rows path) shows the rows pending each way.

    --gateway URL syncs through the HTTP API of 'evlog web --gateway' with a per-user
    token ('evlog sync login'): the device holds no database credentials and the server
    decides whose sessions these are. --dsn URL syncs with the database directly: for a
    single trusted user, since --user is not authenticated there.
    """


@sync.command("login")
@click.option("--gateway", "gateway", envvar="EVLOG_GATEWAY_URL", required=True, metavar="URL", show_envvar=True,
              help="The gateway server (the URL of 'evlog web --gateway').")
@click.option("--user", "user", required=True, metavar="EMAIL", help="Your gateway account.")
@click.option("--password-stdin", is_flag=True, help="Read the password from the first line of stdin instead of "
                                                     "asking for it.")
@click.option("--connect-timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
              help="Give up connecting after this long.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
              help="Give up waiting for an answer after this long.")
@json_option
@click.pass_context
def sync_login(ctx: click.Context, gateway: str, user: str, password_stdin: bool, connect_timeout: float | None,
               timeout: float | None, as_json: bool) -> None:
    """Log this workspace in to a gateway: keep a sync token for USER (never printed).

    The token is stored in <home>/state/sync-credentials.json, readable by you only
    (mode 0600); it never enters the log. 'evlog sync logout' revokes it.
    """
    from eventlog.app.gateway.credentials import credentials_path
    from eventlog.app.gateway.http_client import login

    password = _read_password(password_stdin, confirm=False)
    with open_workspace(ctx) as ws:
        home = ws.home
    got = login(home, gateway, user, password, timeouts=_timeouts(connect_timeout, timeout))
    row = {"gateway": gateway, "user": got.email, "credentials": credentials_path(home)}
    if as_json:
        click.echo(json_line(row))
    else:
        note(f"logged in to {gateway} as {got.email}; the token is kept in {row['credentials']} (mode 0600)")


def _read_password(from_stdin: bool, *, confirm: bool) -> str:
    if from_stdin:
        line = sys.stdin.readline()
        return line.rstrip("\r\n")
    return click.prompt("Password", hide_input=True, confirmation_prompt=confirm, err=True)


@sync.command("logout")
@click.option("--gateway", "gateway", envvar="EVLOG_GATEWAY_URL", required=True, metavar="URL", show_envvar=True,
              help="The gateway server.")
@click.pass_context
def sync_logout(ctx: click.Context, gateway: str) -> None:
    """Revoke this workspace's token at the gateway and forget it."""
    from eventlog.app.gateway.http_client import logout

    with open_workspace(ctx) as ws:
        home = ws.home
    note("logged out" if logout(home, gateway) else f"this workspace holds no token for {gateway}")


@sync.command("push")
@gateway_options
@click.option("--all", "everything", is_flag=True, help="With --rows: send every session and message again, whatever was sent "
                                                        "before (e.g. rows refused until the server took bigger "
                                                        "packets); the gateway keeps what is newer.")
@click.option("--retry-rejected", is_flag=True,
              help="With --rows: also send again, as they are now, the rows the gateway refused since the last retry ('evlog "
                   "sync status' lists them): after fixing the cause (a server limit raised, a row edited). Rows "
                   "refused again are recorded again.")
@click.option("--as-another-user", "allow_other_user", is_flag=True,
              help="With --rows: push even though this workspace synced with the gateway as another user (mixes "
                   "accounts).")
@events_option
@json_option
@click.pass_context
def sync_push(ctx: click.Context, gateway: str | None, dsn: str | None, user: str | None,
              connect_timeout: float | None, timeout: float | None, everything: bool, retry_rejected: bool,
              allow_other_user: bool, events: bool, as_json: bool) -> None:
    """Send the log's events the gateway lacks.

    Sessions, messages, notes, facts and every change to them, and Dream runs, each with
    its origin (this device and its seq): a re-sent event is a no-op, and a push resumes
    where the gateway stands after any crash. A log that never synced gets its device id
    now, and every event it ever wrote gets an origin.

    --rows (deprecated) sends session and message rows changed since the last push
    instead; a row the gateway refuses is recorded and skipped ('evlog sync status').
    """
    from eventlog.app.gateway.sync import push

    _check_row_options(ctx, events)
    if events:
        _sync_events(ctx, "push", gateway, dsn, user, as_json)
        return
    with open_workspace(ctx, writable=True) as ws:
        _render(_run(ctx, push, ws, gateway, dsn, user, connect_timeout, timeout, everything=everything,
                     allow_other_user=allow_other_user, retry_rejected=retry_rejected), as_json)


@sync.command("pull")
@gateway_options
@click.option("--as-another-user", "allow_other_user", is_flag=True,
              help="With --rows: pull even though this workspace synced with the gateway as another user (mixes "
                   "accounts).")
@events_option
@json_option
@click.pass_context
def sync_pull(ctx: click.Context, gateway: str | None, dsn: str | None, user: str | None,
              connect_timeout: float | None, timeout: float | None, allow_other_user: bool, events: bool,
              as_json: bool) -> None:
    """Append the gateway's events since this log's last position.

    Other devices' and teammates' sessions, messages, notes, facts, their changes and
    Dream runs, with the new position, as one atomic batch: a pull killed halfway leaves
    nothing and the next one starts again from the same position.

    --rows (deprecated) applies session and message rows changed on the gateway instead.
    """
    from eventlog.app.gateway.sync import pull

    _check_row_options(ctx, events)
    if events:
        _sync_events(ctx, "pull", gateway, dsn, user, as_json)
        return
    with open_workspace(ctx, writable=True) as ws:
        _render(_run(ctx, pull, ws, gateway, dsn, user, connect_timeout, timeout, allow_other_user=allow_other_user),
                as_json)


@sync.command("status")
@gateway_options
@json_option
@click.pass_context
def sync_status(ctx: click.Context, gateway: str | None, dsn: str | None, user: str | None,
                connect_timeout: float | None, timeout: float | None, as_json: bool) -> None:
    """What the deprecated --rows path has pending each way, both positions, and rows refused so far."""
    from eventlog.app.gateway.sync import status

    with open_workspace(ctx) as ws:
        _render(_run(ctx, status, ws, gateway, dsn, user, connect_timeout, timeout), as_json)


@sync.command("share")
@click.argument("project_dir", type=click.Path(file_okay=False, resolve_path=True))
@click.argument("email")
@click.option("--read-only", is_flag=True, help="The teammate sees the project's events but what they write there "
                                                "stays theirs.")
@gateway_options
@json_option
@click.pass_context
def sync_share(ctx: click.Context, project_dir: str, email: str, read_only: bool, gateway: str | None,
               dsn: str | None, user: str | None, connect_timeout: float | None, timeout: float | None,
               as_json: bool) -> None:
    """Share PROJECT_DIR's sessions and memory with the gateway account EMAIL.

    Their devices receive that project's events (and nothing else of your account) on
    'evlog sync pull'; facts their agents learn or change there come back with
    their author, shown by 'evlog audit why'.
    """
    from eventlog.replication import sync as replication

    shared = _with_store(ctx, gateway, dsn, user,
                         lambda o: replication.share(o.store, o.account, project_dir, email, read_only=read_only))
    row = {"owner": shared.owner, "project": shared.project, "member": shared.member, "read_only": shared.read_only}
    if as_json:
        click.echo(json_line(row))
    else:
        note(f"shared {shared.project} with {shared.member}" + (" (read-only)" if read_only else ""))


@sync.command("unshare")
@click.argument("project_dir", type=click.Path(file_okay=False, resolve_path=True))
@click.argument("email")
@gateway_options
@click.pass_context
def sync_unshare(ctx: click.Context, project_dir: str, email: str, gateway: str | None, dsn: str | None,
                 user: str | None, connect_timeout: float | None, timeout: float | None) -> None:
    """Stop sharing PROJECT_DIR with EMAIL (what they already received stays with them)."""
    from eventlog.replication import sync as replication

    removed = _with_store(ctx, gateway, dsn, user, lambda o: replication.unshare(o.store, o.account, project_dir, email))
    note(f"{project_dir} is no longer shared with {email}" if removed else f"{project_dir} was not shared with {email}")


def _with_store(ctx: click.Context, gateway: str | None, dsn: str | None, user: str | None,
                fn: Callable[[Any], Any]) -> Any:
    from eventlog.app.event_stores import open_store

    way = _target(ctx, gateway, dsn, user)
    with open_workspace(ctx) as ws:
        home = ws.home
    opened = open_store(home, gateway=gateway if way == "gateway" else None, dsn=dsn if way == "dsn" else None,
                        user=user)
    try:
        return fn(opened)
    finally:
        opened.close()
