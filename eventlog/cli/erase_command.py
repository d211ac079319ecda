"""``evlog erase``: the hard, irreversible forget (a thin layer over ``eventlog.app.erase``)."""

from __future__ import annotations

import sys

import click

from eventlog.cli import cli
from eventlog.cli.common import emit, json_option, note, open_workspace, reject_together


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
@json_option
@click.pass_context
def erase_cmd(ctx: click.Context, fact: str | None, session: str | None, subject: str | None, text: str | None,
              dry_run: bool, yes: bool, as_json: bool) -> None:
    """Erase a fact, a session, a subject's facts or a text from every store, for good.

    The erased log lines become log.erased markers (same seqs, valid checksums) authorised by
    one log.erasure event that holds no text; every projection, the recall index and state
    files are rebuilt, leftover copies removed. 'evlog verify' stays clean. Unlike
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
    with open_workspace(ctx, writable=True) as ws:
        report = erase(ws, Target(kind, value or ""), dry_run=dry_run)
    emit(report.places(), as_json, _place_line)
    note(report.summary())
