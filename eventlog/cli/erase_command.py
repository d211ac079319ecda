"""``evlog erase``: the hard, irreversible forget (a thin layer over ``eventlog.app.erase``)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click

from eventlog.cli import cli
from eventlog.cli.common import emit, json_option, note, open_workspace, reject_together


@contextlib.contextmanager
def _remote(home: str, dsn: str | None, user: str | None, gateway: str | None, local_only: bool) -> Iterator[Any]:
    from eventlog.app.erase import open_remote

    remote = open_remote(home, dsn=dsn, user=user, gateway=gateway, local_only=local_only)
    try:
        yield remote
    finally:
        if remote is not None:
            remote.close()


def _place_line(p: dict) -> str:
    if p["place"] == "segment":
        return f"segment  {p['path']}  seqs {','.join(map(str, p['seqs']))}"
    if p["place"] == "gateway":
        return f"gateway  {p['table']}  {p['rows']} row(s)"
    return f"{p['place']:<8} {p['path']}"


@cli.command("erase")
@click.option("--fact", "fact", default=None, metavar="ID", help="Erase one fact: its events and every copy of its text.")
@click.option("--session", "session", default=None, metavar="KEY",
              help="Erase a session: its messages, and what was made from them (diary lines, short-term entries, "
                   "facts learned from them).")
@click.option("--subject", "subject", default=None, metavar="TEXT", help="Erase every fact about this subject.")
@click.option("--text", "text", default=None, metavar="TEXT",
              help="Erase every event holding this text (a secret, a name), and what was made from them.")
@click.option("--dry-run", is_flag=True, help="Only list every place it is found (segments with seqs, files, the "
                                              "gateway); change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (needed when not on a terminal).")
@click.option("--dsn", envvar="EVLOG_MYSQL_DSN", default=None, metavar="URL", show_envvar=True,
              help="Also erase it at the gateway database this workspace syncs with (direct sync, as 'evlog sync "
                   "push --dsn'); other devices apply the erasure on their next sync.")
@click.option("--user", "user", default=None, metavar="EMAIL",
              help="The gateway user (required with --dsn; with --gateway, checked against the login).")
@click.option("--gateway", "gateway", envvar="EVLOG_GATEWAY_URL", default=None, metavar="URL", show_envvar=True,
              help="Also erase it at this HTTP gateway ('evlog web --gateway', after 'evlog sync login'). Default: "
                   "the gateway this workspace is logged in to, if it is logged in to one.")
@click.option("--local-only", is_flag=True,
              help="Erase on this device only, even when it is logged in to a gateway (the gateway and other "
                   "devices keep their copies).")
@json_option
@click.pass_context
def erase_cmd(ctx: click.Context, fact: str | None, session: str | None, subject: str | None, text: str | None,
              dry_run: bool, yes: bool, dsn: str | None, user: str | None, gateway: str | None, local_only: bool,
              as_json: bool) -> None:
    """Erase a fact, a session, a subject's facts or a text from every store, for good.

    The erased log lines become log.erased markers (same seqs, valid checksums) authorised by
    one log.erasure event that holds no text; every projection, the recall index and state
    files are rebuilt, leftover copies removed. On a workspace logged in to a gateway
    ('evlog sync login'), or with --gateway URL or --dsn, the gateway's rows go first (if it
    does not answer, nothing is erased) and every other device applies the erasure when it
    next syncs; --local-only skips the gateway. 'evlog verify' stays clean. Unlike
    'evlog memory forget' this cannot be undone. A killed erase is finished by the next
    writing command.
    """
    from eventlog.app.erase import Target, erase

    reject_together(**{"--fact": fact, "--session": session, "--subject": subject, "--text": text})
    kind, value = next(((k, v) for k, v in (("fact", fact), ("session", session), ("subject", subject),
                                            ("text", text)) if v is not None), (None, None))
    if kind is None:
        raise click.UsageError("say what to erase: --fact ID, --session KEY, --subject TEXT or --text TEXT")
    if not dry_run and not yes:
        if not sys.stdin.isatty():
            raise click.UsageError("erase cannot be undone: pass --yes to confirm (or --dry-run to look first)")
        click.confirm(f"Erase {kind} {value!r} for good?", abort=True, err=True)
    if dsn and not user:
        raise click.UsageError("--dsn needs --user EMAIL (the gateway user whose rows these are)")
    typed = {n: v for n, v in (("--dsn", dsn), ("--gateway", gateway))
             if ctx.get_parameter_source(n[2:]) == click.core.ParameterSource.COMMANDLINE}
    reject_together(**{"--local-only": local_only, **typed})
    with open_workspace(ctx, writable=True) as ws, _remote(ws.home, dsn, user, None if dsn else gateway,
                                                           local_only) as remote:
        report = erase(ws, Target(kind, value or ""), dry_run=dry_run, remote=remote)
    emit(report.places(), as_json, _place_line)
    note(report.summary())
    for line in report.notes:
        note(f"note: {line}")
