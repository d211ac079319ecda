"""``evlog gateway user add|passwd|remove|list``: the gateway's accounts (see eventlog.app.gateway.auth);
``evlog gateway migrate``: a gateway of the row-sync version turned into events (``row_migration``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from eventlog.cli import cli
from eventlog.cli.common import emit, json_option, note
from eventlog.cli.render import json_line


def dsn_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--dsn", envvar="EVLOG_MYSQL_DSN", required=True, metavar="URL", show_envvar=True,
                        help="The gateway database, mysql://user:password@host:port/database (prefer the "
                             "environment variable: command lines are visible to other users).")(f)


def _connection(dsn: str) -> Any:
    from eventlog.app.gateway.connection import DSN, Connection
    from eventlog.app.gateway.schema import migrate

    conn = Connection(DSN.parse(dsn))
    try:
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    return click.prompt("Password", hide_input=True, confirmation_prompt=True, err=True)


@cli.group()
def gateway() -> None:
    """Manage the gateway's accounts (the gateway runs as 'evlog web --gateway DSN').

    Users sign in to the web pages with their e-mail and password, and log their
    devices in with 'evlog sync login'. Passwords are stored as scrypt hashes.
    """


@gateway.command("migrate")
@dsn_option
@click.option("--user", "users", multiple=True, metavar="EMAIL", help="Only this account (repeatable; default: all).")
@json_option
def gateway_migrate(dsn: str, users: tuple[str, ...], as_json: bool) -> None:
    """Turn a gateway of the row-sync version into events (sessions and messages of every account).

    The web view reads what the accounts' events fold into; an account whose sessions are
    still rows of the previous version is refused there until this runs. Idempotent and
    resumable: a run killed at any point keeps what it stored, and running it again stores
    only what is missing (rows an old device pushed since included). Deleted sessions, an
    explicitly set preview, and edits made to a row after it was migrated are not carried.
    """
    from eventlog.app.gateway.row_migration import migrate

    conn = _connection(dsn)
    try:
        report = migrate(conn, list(users) if users else None)
    finally:
        conn.close()
    if as_json:
        click.echo(json_line(report))
    else:
        note(f"migrated {report.sessions} session(s) and {report.messages} message(s) of {report.users} account(s): "
             f"{report.stored} event(s) stored now, {report.duplicates} stored before")


@gateway.group("user")
def user_group() -> None:
    """Add, change, remove and list gateway users."""


@user_group.command("add")
@click.argument("email")
@dsn_option
@click.option("--password-stdin", is_flag=True, help="Read the password from the first line of stdin.")
@click.pass_context
def user_add(ctx: click.Context, email: str, dsn: str, password_stdin: bool) -> None:
    """Create the user EMAIL with a password (asked twice; at least 8 characters).

    A user that exists without a password (made by direct --dsn sync) gets this one.
    """
    from eventlog.app.gateway.auth import add_user

    password = _password(password_stdin)
    conn = _connection(dsn)
    try:
        user = add_user(conn, email, password)
    finally:
        conn.close()
    note(f"added {user.email}")


@user_group.command("passwd")
@click.argument("email")
@dsn_option
@click.option("--password-stdin", is_flag=True, help="Read the new password from the first line of stdin.")
def user_passwd(email: str, dsn: str, password_stdin: bool) -> None:
    """Set a new password for EMAIL and sign them out everywhere (web sessions and device tokens)."""
    from eventlog.app.gateway.auth import set_user_password

    password = _password(password_stdin)
    conn = _connection(dsn)
    try:
        user = set_user_password(conn, email, password)
    finally:
        conn.close()
    note(f"changed the password of {user.email}; their web sessions and device tokens were revoked")


@user_group.command("remove")
@click.argument("email")
@dsn_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def user_remove(email: str, dsn: str, yes: bool) -> None:
    """Delete EMAIL with every session, message and token of theirs on the gateway (devices keep their logs)."""
    from eventlog.app.gateway.auth import remove_user

    if not yes:
        click.confirm(f"Delete {email} and all their sessions on the gateway?", abort=True, err=True)
    conn = _connection(dsn)
    try:
        user = remove_user(conn, email)
    finally:
        conn.close()
    note(f"removed {user.email}")


@user_group.command("list")
@dsn_option
@json_option
def user_list(dsn: str, as_json: bool) -> None:
    """Every user: e-mail, created, password set, sessions, signed-in web sessions, device tokens."""
    from eventlog.app.gateway.auth import list_users

    conn = _connection(dsn)
    try:
        rows = list_users(conn)
    finally:
        conn.close()
    emit(rows, as_json, lambda u: f"{u.email:<40} {u.created_at}  password {'set' if u.password_set else 'none':<4}  "
                                  f"sessions {u.sessions:<6} web {u.web_sessions:<3} devices {u.sync_tokens}")
