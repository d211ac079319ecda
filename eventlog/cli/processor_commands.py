"""Commands over the processors: run, offsets, memory."""

from __future__ import annotations

import click

from eventlog.cli import cli
from eventlog.cli.common import emit, json_option, open_workspace
from eventlog.cli.render import json_line, kv_block, preview


@cli.command("run")
@click.argument("processor", type=click.Choice(["snapshot", "digest", "archive"]))
@json_option
@click.pass_context
def run_cmd(ctx: click.Context, processor: str, as_json: bool) -> None:
    """Run one processor now and report what it did.

    snapshot: messages -> daily diary (deduplicated, within the byte budget);
    digest: diary -> short-term memory and Dream's history;
    archive: short-term -> long-term memory (promote what is used, drop what is stale).
    """
    import processors

    with open_workspace(ctx, writable=True) as ws:
        report = processors.run(ws, processor)
    if as_json:
        click.echo(json_line(report))
        return
    pairs = [("processor", report.processor), ("events read", report.events_read),
             ("entries written", report.entries_written), ("duplicates skipped", report.duplicates_skipped),
             ("bytes trimmed", report.bytes_trimmed), ("lost bytes", report.lost_bytes),
             ("offset", f"{report.offset_before} -> {report.offset_after}")]
    pairs += [("reset", r) for r in report.resets]
    click.echo(kv_block(pairs))


@cli.command()
@json_option
@click.pass_context
def offsets(ctx: click.Context, as_json: bool) -> None:
    """Every processor's position, lag behind the log and any recorded loss."""
    import processors

    rows = processors.offsets(open_workspace(ctx))
    emit(rows, as_json, lambda r: f"{r.processor:<12} seq {r.seq:<8} lag {r.lag:<8} resets {r.resets:<3} "
                                  f"lost {r.lost_bytes} bytes/{r.lost_records} records  {r.detail}".rstrip())


@cli.command()
@click.option("--tier", type=click.Choice(["stm", "ltm", "dropped"]), default=None, help="Only entries of this tier.")
@json_option
@click.pass_context
def memory(ctx: click.Context, tier: str | None, as_json: bool) -> None:
    """List short-term (stm) and long-term (ltm) memory entries with their sources."""
    entries = open_workspace(ctx).projections["memory_entries"].entries(tier)
    emit(entries, as_json, lambda e: f"{e.tier:<7} {e.entry_id:<28} {e.date} bytes {e.start}..{e.end} "
                                     f"[{', '.join(e.session_keys)[:40]}] {preview(e.text, 60)}")
