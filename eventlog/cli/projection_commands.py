"""Commands over the projections: sessions (list, show) and replay."""

from __future__ import annotations

import click

from eventlog.cli import ExitStatus, cli
from eventlog.cli.common import emit, json_option, note, open_workspace, reject_together
from eventlog.cli.render import json_line, preview, session_table, to_jsonable
from eventlog.errors import NotFound


def _store(ctx: click.Context):  # noqa: ANN202
    from eventlog import LocalSessionStore

    return LocalSessionStore(open_workspace(ctx))  # read-only: reads need no lock


@cli.group(invoke_without_command=True)
@click.option("--probes", is_flag=True, help="Also list probe sessions (a subagent's prompt and at most one reply).")
@click.option("--flat", is_flag=True, help="Every session on its own line, newest first, nothing nested or folded.")
@json_option
@click.pass_context
def sessions(ctx: click.Context, probes: bool, flat: bool, as_json: bool) -> None:
    """List sessions, newest first: updated, messages, project, key, title.

    A session's title is its first real request (harness text skipped). Subagent
    sessions are listed under their parent; probes (a subagent with at most two
    messages, such as Claude Code's warm-up agents) are folded into their parent's
    row unless --probes is given. Keys are shown whole or in a unique short form
    that 'evlog sessions show' accepts. --json: one object per session with
    ``short_key``, ``parent``, ``depth`` and ``probes`` added.
    """
    if ctx.invoked_subcommand is not None:
        return
    from eventlog.app.session_tree import parent_key, session_tree, walk

    listed = _store(ctx).list()
    rows = list(walk(session_tree(listed, probes=probes or flat)))
    if flat:
        rows = sorted(((0, n) for _, n in rows), key=lambda r: (r[1].info.updated_at, r[1].info.key), reverse=True)
    if as_json:
        emit(({**to_jsonable(n.info), "short_key": n.short_key, "parent": parent_key(n.info), "depth": d,
               "probes": n.probes} for d, n in rows), True, json_line)
        return
    if not rows:
        note("no sessions yet (evlog ingest PATH imports transcripts)")
        return
    emit(session_table(rows), False, str)
    folded = len(listed) - len(rows)
    if folded:
        note(f"{folded} probe session(s) folded away (--probes lists them)")


@sessions.command("show")
@click.argument("key")
@click.option("-n", "--lines", "count", type=click.IntRange(min=0), default=20, show_default=True,
              help="Show the newest N messages (0 = all the session file keeps).")
@json_option
@click.pass_context
def sessions_show(ctx: click.Context, key: str, count: int, as_json: bool) -> None:
    """Show a session's metadata and its newest messages (KEY: whole or the short form 'evlog sessions' shows)."""
    store = _store(ctx)
    info = store.get(store.resolve(key))
    if info is None:
        raise NotFound(f"no session {key!r} (see 'evlog sessions')")
    messages = store.history(info.key, count or None)
    if as_json:
        emit(messages, True, json_line)
        return
    click.echo(f"{info.key}  title={info.display or info.title!r}  messages={info.message_count}  updated_at={info.updated_at}")
    emit(messages, False, lambda m: f"[{m.timestamp[:19]}] {m.role}: {preview(m.content, 200)}")


@cli.command()
@click.option("--check", is_flag=True, help="Rebuild into a temporary directory and compare byte for byte with the live files.")
@click.option("--full-index", is_flag=True, help="With --check: prove the recall index by tokenising every row and "
              "building a second index from the log (slower; also sees hand edits of its full-text table).")
@click.option("--until", default=None, metavar="SEQ|TIME", help="Rebuild the state as of this seq or time (needs --to).")
@click.option("--to", "to_dir", type=click.Path(file_okay=False), default=None, help="Write the rebuilt files here instead.")
@json_option
@click.pass_context
def replay(ctx: click.Context, check: bool, full_index: bool, until: str | None, to_dir: str | None,
           as_json: bool) -> None:
    """Rebuild every projection (sessions, history, MEMORY.md, ...) from the log.

    Without options the workspace's files are rebuilt and swapped in (a killed replay
    leaves the old or the new files, never none). --check only reads: it names every
    file that differs from a fresh replay and exits 1 if any does. --to writes into an
    empty directory (or one an earlier --to wrote), never over other files.
    """
    from eventlog.app import replay as rp

    reject_together(**{"--check": check, "--to": to_dir})
    reject_together(**{"--check": check, "--until": until})
    if full_index and not check:
        raise click.UsageError("--full-index goes with --check")
    if until is not None and to_dir is None:
        raise click.UsageError("--until needs --to DIR (the live files always follow the whole log)")
    if check:
        result = rp.check(open_workspace(ctx), full_index=full_index)  # a pure reader: no lock, works on a read-only workspace
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
