"""Commands over the log itself: init, append, tail, verify, stats, repair."""

from __future__ import annotations

import os
import sys
import time
from typing import IO

import click

import eventlog
from eventlog.app.workspace import CONFIG_FILE
from eventlog.cli import ExitStatus, cli
from eventlog.cli.common import emit, json_option, note, open_workspace, reject_together
from eventlog.cli.render import event_line, json_line, kv_block
from eventlog.log import DURABILITY_POLICIES
from eventlog.query import (
    EventFilter,
    follow_matching,
    last_events,
    matching,
    read_cursor,
    resume_after,
    write_cursor,
)


@cli.command()
@click.option("--segment-bytes", type=click.IntRange(min=1024), default=None,
              help="Roll to a new segment file past this size (default 16 MiB).")
@click.option("--durability", type=click.Choice(DURABILITY_POLICIES), default=None,
              help="fsync (default): every acknowledged append survives power loss; group: fsync every 10 ms; none: never fsync.")
@click.option("--llm", "llm", type=click.Choice(["claude-code", "openai", "anthropic", "offline"]), default=None,
              help="The model Dream uses (default: the best one set up here, said on the first init).")
@click.option("--model", "llm_model", default=None, help="Its model id (default: the provider's).")
@click.pass_context
def init(ctx: click.Context, segment_bytes: int | None, durability: str | None, llm: str | None,
         llm_model: str | None) -> None:
    """Create a workspace (or change its settings). Safe to run again.

    The first init picks the model Dream uses: claude-code (Claude Code's headless mode,
    your own sign-in), openai (any OpenAI-compatible endpoint: $EVLOG_OPENAI_BASE_URL,
    $EVLOG_MODEL, $OPENAI_API_KEY), anthropic ($ANTHROPIC_API_KEY) or offline, and says which.
    """
    from processors.llm.providers import best_available

    home = ctx.obj["home"]
    choice = None
    if llm is None and not os.path.exists(os.path.join(home, CONFIG_FILE)):
        choice = best_available()
        llm = choice.kind
    config, changes = eventlog.init_workspace(home, segment_bytes=segment_bytes, durability=durability, llm=llm,
                                     llm_model=llm_model)
    for change in changes:
        note(change)
    if choice is not None:
        note(f"model: {choice.kind} ({choice.reason}); change it with 'evlog init --llm KIND'")
    if not changes:
        note(f"workspace {ctx.obj['home']} is already initialised; nothing changed")


@cli.command()
@click.argument("source", type=click.File("rb"), default="-")
@click.option("--atomic", is_flag=True,
              help="All or nothing: the whole input as one atomic batch (at most 64 MiB of input).")
@json_option
@click.pass_context
def append(ctx: click.Context, source: IO[bytes], atomic: bool, as_json: bool) -> None:
    """Append NDJSON events from SOURCE (a file, or - for stdin).

    Each line is {"type": ..., <fields>}; seq and ts are assigned by the log. Accepted
    types: session.created, session.updated, session.deleted, message.appended,
    message.updated and history.appended (notes); the others are written by evlog
    itself. Input is streamed and appended in atomic batches of 10,000 events (or 8 MiB); a bad
    line stops the append and the error names it, its field, and what was appended
    before it. --atomic appends all of it or nothing.
    """
    from eventlog.app.append import append_ndjson

    name = getattr(source, "name", "-")
    name = "<stdin>" if name in ("-", "<stdin>") else name
    with open_workspace(ctx, writable=True) as ws:
        result = append_ndjson(ws, source, name, atomic=atomic)
    if as_json:
        click.echo(json_line({"appended": result.appended, "duplicates": result.duplicates,
                              "first_seq": result.first_seq, "last_seq": result.last_seq}))
    else:
        span = f" (seq {result.first_seq}..{result.last_seq})" if result.appended else ""
        dup = f", {result.duplicates} already in the log" if result.duplicates else ""
        note(f"appended {result.appended} event(s){span}{dup}")


@cli.command()
@click.option("-n", "--lines", "count", type=click.IntRange(min=0), default=None,
              help="Show the last N events (default 10; 0 = all).")
@click.option("-f", "--follow", is_flag=True, help="Keep printing new events as they are appended (Ctrl-C stops).")
@click.option("-e", "--exit-at-end", is_flag=True, help="Stop at the end of the log (the default unless -f).")
@click.option("--from", "from_seq", type=click.IntRange(min=1), default=None, help="Start at this seq (all events from it).")
@click.option("--after", "after_seq", type=click.IntRange(min=0), default=None, help="Start after this seq.")
@click.option("--type", "types", multiple=True, help="Only this event type; repeatable; 'message.*' matches a prefix.")
@click.option("--session", "session_key", default=None, help="Only events of this session key.")
@click.option("--cursor-file", type=click.Path(dir_okay=False), default=None,
              help="Resume after the event saved in this file; the newest emitted one is saved there after each "
                   "batch (at least every second) and at exit.")
@json_option
@click.pass_context
def tail(ctx: click.Context, count: int | None, follow: bool, exit_at_end: bool, from_seq: int | None,
         after_seq: int | None, types: tuple[str, ...], session_key: str | None, cursor_file: str | None,
         as_json: bool) -> None:
    """Show the newest events of the log (readers take no lock)."""
    reject_together(**{"--follow": follow, "--exit-at-end": exit_at_end})
    reject_together(**{"--from": from_seq, "--after": after_seq, "--lines": count})
    ws = open_workspace(ctx)
    flt = EventFilter(types=types, session_key=session_key)
    start = from_seq if from_seq is not None else (after_seq + 1 if after_seq is not None else None)
    if cursor_file:
        saved = read_cursor(cursor_file)
        if saved is not None:
            start, notice = resume_after(ws.log, saved)
            if notice:
                note(notice)
    render = json_line if as_json else event_line
    out = sys.stdout
    last: list = [None, time.monotonic()]  # the newest emitted record not yet saved in the cursor file, when saved

    def settle() -> None:
        """Flush what was written and save the cursor after it: per batch of records, and at least every second."""
        out.flush()
        if cursor_file and last[0] is not None:
            write_cursor(cursor_file, last[0])
            last[0] = None
        last[1] = time.monotonic()

    def show(rec):  # noqa: ANN001, ANN202
        out.write(render(rec.event) + "\n")
        last[0] = rec
        if time.monotonic() - last[1] >= 1.0:
            settle()

    try:
        if start is None:
            recs, start = last_events(ws.log, 10 if count is None else count, flt)
            for rec in recs:
                show(rec)
            if not follow:
                return
        if follow:
            for rec in follow_matching(ws.log, start, flt, on_notice=note, on_idle=settle):
                show(rec)
        else:
            for rec in matching(ws.log, start, flt):
                show(rec)
    finally:
        settle()


@cli.command()
@json_option
@click.pass_context
def verify(ctx: click.Context, as_json: bool) -> None:
    """Check every line of every segment: checksum, JSON, seq order, names, torn tail.

    Exits 0 when the log is clean and 1 when anything is damaged, listing each problem
    with its segment file, byte offset and seq.
    """
    ws = open_workspace(ctx)
    problems = ws.log.verify()
    emit(problems, as_json, lambda p: f"{p.segment}:{p.offset} seq {p.seq}: {p.kind}: {p.message}")
    damaged = [p for p in problems if p.damaged]
    if not as_json:
        note(f"{len(damaged)} problem(s) found" if damaged else f"log is clean (seq {ws.log.log_start}..{ws.log.last_seq})")
    if damaged:
        ctx.exit(ExitStatus.CHECK_FAILED)


@cli.command()
@json_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Segments, events, bytes and events by type."""
    st = open_workspace(ctx).log.stats()
    if as_json:
        click.echo(json_line(st))
        return
    click.echo(kv_block([("segments", st.segments), ("events", st.events), ("bytes", st.bytes),
                         ("seqs", f"{st.first_seq}..{st.last_seq}")]))
    for tag, n in st.by_type.items():
        click.echo(f"  {tag:<28} {n}")


@cli.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def repair(ctx: click.Context, yes: bool) -> None:
    """Cut the log at its first damaged record, keeping the cut bytes in log/quarantine/.

    Only needed when 'evlog verify' reports damage that opening cannot fix by itself
    (damage followed by intact records, or a damaged sealed segment). The cut is
    recorded in the log as a log.recovered event.
    """
    if not yes:
        click.confirm("Cut the log at its first damage? Events after it move to log/quarantine/", abort=True, err=True)
    with open_workspace(ctx, writable=True, repair=True) as ws:
        rec = ws.log.recovered
    if rec is None:
        note("nothing to repair: the log is clean")
    else:
        note(f"cut {rec.bytes_truncated} bytes at {rec.segment}:{rec.offset} ({rec.reason}); saved in log/{rec.quarantine}")
