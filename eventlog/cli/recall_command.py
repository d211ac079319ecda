"""``evlog recall``: ranked search over every message, history entry and fact, with sources."""

from __future__ import annotations

import click

from eventlog.cli import cli
from eventlog.cli.common import emit, json_option, note, open_workspace, reject_together


def recall_options(f):  # noqa: ANN001, ANN201
    """The options ``evlog recall`` and ``evlog memory recall`` share."""
    options = [
        click.option("-n", "--limit", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many hits."),
        click.option("--scope", type=click.Choice(["all", "messages", "facts", "history"]), default="all",
                     show_default=True, help="What to search."),
        click.option("--project", default=None, help="Only this project's sessions, notes and facts."),
        click.option("--session", default=None, metavar="KEY", help="Only this session."),
        click.option("--role", default=None, help="Only messages of this role (user, assistant, ...)."),
        click.option("--since", default=None, metavar="TIME", help="From this time: ISO time or date, epoch seconds, or an age (36h, 7d)."),
        click.option("--until", default=None, metavar="TIME", help="Up to this time (same forms; a date includes the whole day)."),
        click.option("--state", "states", multiple=True, type=click.Choice(["active", "superseded", "forgotten", "archived"]),
                     help="Facts in these states (default: active and archived)."),
        click.option("--semantic/--no-semantic", default=False,
                     help="Hybrid: words plus meaning, with a local sentence-embedding model (the embeddings "
                          "extra; vectors come from the embed job; loading the model takes seconds)."),
        click.option("--use", "mark_used", is_flag=True, help="Record that you used the facts found (the budget keeps them)."),
        click.option("--now", default=None, metavar="TIME",
                     help="When the question is asked (ISO time or epoch seconds; default now): relative times in "
                          "it (\"two weeks ago\", \"last month\") are a soft window around this."),
        click.option("--group", type=click.Choice(["message", "session"]), default="message", show_default=True,
                     help="message: ranked turns, notes and facts; session: ranked sessions with their best turns "
                          "(-n counts sessions)."),
        click.option("--turns", type=click.IntRange(1, 100), default=3, show_default=True,
                     help="With --group session: best turns shown per session."),
        click.option("--budget", type=click.IntRange(1, 1_000_000), default=None, metavar="TOKENS",
                     help="Fit the hits into about this many tokens (4 characters each), every hit trimmed around "
                          "the words of the question, as many hits as fit."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _hit_line(h) -> str:  # noqa: ANN001
    where = f"{h.session_key} #{h.message_id}" if h.kind == "message" else (h.fact_id or h.source or h.kind)
    who = f" {h.speaker or h.role}:" if h.kind == "message" else ""
    return f"{h.score:6.2f}  {h.time[:16]:<16}  {h.kind:<7}  {where}{who}  {h.snippet}"


def _session_lines(g) -> str:  # noqa: ANN001
    head = f"{g.score:6.2f}  {g.time[:16]:<16}  {g.kind:<7}  {g.session_key or g.hits[0].fact_id}  ({g.matched} matched)"
    return "\n".join([head, *("        " + _hit_line(h) for h in g.hits)])


def do_recall(ctx: click.Context, query: str, *, as_json: bool, mark_used: bool, group: str, turns: int,  # noqa: PLR0913
              budget: int | None, **options) -> None:  # noqa: ANN003
    from eventlog import recall as rc

    reject_together(**{"--group session": group == "session", "--budget": budget})
    ws = open_workspace(ctx, writable=mark_used)
    states = tuple(options.pop("states")) or None
    notes: list[str] = []
    try:
        if group == "session":
            rows: list = rc.search_sessions(ws, query, turns=turns, states=states, notes=notes, **options)
            hits = [h for g in rows for h in g.hits]
        else:
            rows = hits = rc.search(ws, query, states=states, budget=budget, notes=notes, **options)
        for line in notes:  # a read-only workspace: said on stderr, the hits still come
            note(line)
        if mark_used and hits:
            rc.use(ws, hits, query=query)
    finally:
        ws.close()
    if not emit(rows, as_json, _session_lines if group == "session" else _hit_line) and not as_json:
        note(f"nothing found for {query!r}")


@cli.command()
@click.argument("query")
@recall_options
@json_option
@click.pass_context
def recall(ctx: click.Context, query: str, as_json: bool, mark_used: bool, **options) -> None:  # noqa: ANN003
    """Search everything the log holds for QUERY, best first; every hit names its source.

    A question in plain words works ("when did we switch to ruff?"): stop words and
    question scaffolding ("how many", "currently") are dropped, the rest ranked by BM25
    with neighbouring turns as context; relative times ("two weeks ago") prefer turns
    near that time before --now, and current-state questions prefer recent turns.
    --group session ranks sessions by their evidence; --budget packs the hits into a
    token budget. Chinese and Japanese are matched by character pairs. Searching
    records nothing unless --use.
    """
    do_recall(ctx, query, as_json=as_json, mark_used=mark_used, **options)
