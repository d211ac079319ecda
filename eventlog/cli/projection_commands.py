"""Commands over the projections: sessions (list, show) and replay."""

from __future__ import annotations

import click

from eventlog.cli import ExitStatus, cli
from eventlog.cli.common import emit, json_option, note, open_workspace, reject_together
from eventlog.cli.render import json_line, preview
from eventlog.errors import NotFound


def _store(ctx: click.Context):  # noqa: ANN202
    from eventlog.app.session_store import LocalSessionStore

    return LocalSessionStore(open_workspace(ctx))  # read-only: reads need no lock


@cli.group(invoke_without_command=True)
@json_option
@click.pass_context
def sessions(ctx: click.Context, as_json: bool) -> None:
    """List sessions, newest first (key, title, messages, updated_at)."""
    if ctx.invoked_subcommand is not None:
        return
    rows = _store(ctx).list()
    emit(rows, as_json, lambda s: f"{s.updated_at[:19]:<19}  {s.message_count:>6}  {preview(s.key, 40):<40}  {preview(s.title, 60)}")
    if not as_json and not rows:
        note("no sessions yet (evlog ingest PATH imports transcripts)")


@sessions.command("show")
@click.argument("key")
@click.option("-n", "--lines", "count", type=click.IntRange(min=0), default=20, show_default=True,
              help="Show the newest N messages (0 = all the session file keeps).")
@json_option
@click.pass_context
def sessions_show(ctx: click.Context, key: str, count: int, as_json: bool) -> None:
    """Show a session's metadata and its newest messages."""
    store = _store(ctx)
    info = store.get(key)
    if info is None:
        raise NotFound(f"no session {key!r} (see 'evlog sessions')")
    messages = store.history(key, count or None)
    if as_json:
        emit(messages, True, json_line)
        return
    click.echo(f"{info.key}  title={info.title!r}  messages={info.message_count}  updated_at={info.updated_at}")
    emit(messages, False, lambda m: f"[{m.timestamp[:19]}] {m.role}: {preview(m.content, 200)}")


@cli.command()
@click.option("--check", is_flag=True, help="Rebuild into a temporary directory and compare byte for byte with the live files.")
@click.option("--until", default=None, metavar="SEQ|TIME", help="Rebuild the state as of this seq or time (needs --to).")
@click.option("--to", "to_dir", type=click.Path(file_okay=False), default=None, help="Write the rebuilt files here instead.")
@json_option
@click.pass_context
def replay(ctx: click.Context, check: bool, until: str | None, to_dir: str | None, as_json: bool) -> None:
    """Rebuild every projection (sessions, history, MEMORY.md, ...) from the log.

    Without options the workspace's files are rebuilt and swapped in (a killed replay
    leaves the old or the new files, never none). --check only reads: it names every
    file that differs from a fresh replay and exits 1 if any does. --to writes into an
    empty directory (or one an earlier --to wrote), never over other files.
    """
    from eventlog.app import replay as rp

    reject_together(**{"--check": check, "--to": to_dir})
    reject_together(**{"--check": check, "--until": until})
    if until is not None and to_dir is None:
        raise click.UsageError("--until needs --to DIR (the live files always follow the whole log)")
    if check:
        result = rp.check(open_workspace(ctx))  # a pure reader: no lock, works on a read-only workspace
        emit(result.drifts, as_json, lambda d: f"{d.problem}: {d.path}")
        emit([{"problem": "index", "path": "state/recall.sqlite", "detail": p} for p in result.index_problems], as_json,
             lambda d: f"index: {d['detail']}")
        if not as_json:
            behind = f"; the log continues to seq {result.log_end} (the next writer catches the files up)" \
                if result.log_end > result.seq else ""
            note(f"{len(result.drifts) + len(result.index_problems)} problem(s): the projections drifted from the log"
                 if not result.clean else f"every projection file matches a fresh replay of seq 1..{result.seq}{behind}")
            if result.index_problems:
                note("to rebuild the recall index: delete state/recall.sqlite, then 'evlog replay'")
        if not result.clean:
            ctx.exit(ExitStatus.CHECK_FAILED)
        return
    if to_dir is not None:
        ws = open_workspace(ctx)
        rebuilt = rp.rebuild_into(ws.log, to_dir, rp.resolve_until(ws.log, until) if until else None)
    else:
        with open_workspace(ctx, writable=True) as ws:
            rebuilt = rp.rebuild(ws, recall_index="refresh")
    if as_json:
        click.echo(json_line(rebuilt))
    else:
        note(f"rebuilt {rebuilt.files} file(s) in {rebuilt.root} from seq 1..{rebuilt.seq}")
        if rebuilt.recall_index == "kept":
            note("the recall index looked sound and was kept, caught up ('evlog replay --check' proves it)")
        elif rebuilt.recall_index:
            note(f"the recall index was {rebuilt.recall_index}")
